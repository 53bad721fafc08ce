package purraopenai_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraopenai"
	"purra.dev/purramcp/purramcptest"
)

func TestRunCall_CanceledWhileWaitingForItsTurn(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
		Tool: &mcp.Tool{Name: "remote.slow", InputSchema: strictSchema},
		Handler: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(entered)
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		},
	})
	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{"remote.slow": purramcptest.Binding("slow")},
		purramcp.DiscoveryOptions{})
	tb, err := purraopenai.New(catalog.Registrations(), purraopenai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan string)
	go func() {
		out, _ := tb.RunCall(t.Context(), "call_1", "slow", `{"q":"a"}`)
		first <- out
	}()
	<-entered
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if out, err := tb.RunCall(ctx, "call_2", "slow", `{"q":"b"}`); !errors.Is(err, purramcp.ErrCanceled) || out != "" {
		t.Fatalf("waiting call: %q %v, want ErrCanceled", out, err)
	}
	close(release)
	if out := <-first; out != `{"structured":null,"text":["ok"]}` {
		t.Fatalf("first call %q", out)
	}
	if srv.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1 (the canceled call never ran)", srv.Calls())
	}
}
