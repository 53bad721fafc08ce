package purraanthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraanthropic"
	"purra.dev/purramcp/purramcptest"
)

func TestExecute_CanceledWhileWaitingForItsTurn(t *testing.T) {
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
	tools, err := purraanthropic.BetaTools(catalog.Registrations(), purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error)
	go func() {
		_, err := tools[0].Execute(t.Context(), json.RawMessage(`{"q":"a"}`))
		first <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if blocks, err := tools[0].Execute(ctx, json.RawMessage(`{"q":"b"}`)); !errors.Is(err, purramcp.ErrCanceled) || blocks != nil {
		t.Fatalf("waiting call: %v %v, want ErrCanceled", blocks, err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first call %v", err)
	}
	if srv.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1 (the canceled call never ran)", srv.Calls())
	}
}

func TestExecute_ToolErrorIsTheCode(t *testing.T) {
	f := newFixture(t)
	tools, err := purraanthropic.BetaTools(f.catalog.Registrations(), purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name() != "fail" {
			continue
		}
		blocks, err := tool.Execute(t.Context(), json.RawMessage(`{"q":"x"}`))
		var te *purraanthropic.ToolError
		if blocks != nil || !errors.As(err, &te) || te.Code != purramcp.CodeToolError || err.Error() != purramcp.CodeToolError {
			t.Fatalf("Execute: %v %v", blocks, err)
		}
		return
	}
	t.Fatal("no fail tool")
}
