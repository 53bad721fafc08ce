package purraanthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraanthropic"
)

// Example runs the SDK's tool runner over a purramcp catalog. The MCP server
// runs in memory and a loopback server stands in for the Anthropic API: it
// asks for one search, then answers with the tool result it was sent.
func Example() {
	ctx := context.Background()
	monitor := purramcp.NewCatalogMonitor()
	session, stop := docsSession(ctx, monitor)
	defer stop()
	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", map[string]purramcp.ToolBinding{
		"docs.search": {LocalName: "search", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search docs"},
			Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		fmt.Println(err)
		return
	}
	api := httptest.NewServer(http.HandlerFunc(scriptedClaude))
	defer api.Close()
	client := anthropic.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("key"))

	// The host's lines.
	tools, err := purraanthropic.BetaTools(catalog.Registrations(), purraanthropic.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	runner := client.Beta.Messages.NewToolRunner(tools, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{Model: "claude-example", MaxTokens: 1024,
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("How do I install it?"))}},
		DisableThread: true,
	})
	final, err := runner.RunToCompletion(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(final.Content[0].Text)
	// Output: the model read {"structured":null,"text":["3 pages mention install"]}
}

// docsSession connects a client session to an in-memory MCP server with one
// search tool, with monitor attached, and returns a function that closes
// both ends.
func docsSession(ctx context.Context, monitor *purramcp.CatalogMonitor) (*mcp.ClientSession, func()) {
	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	server.AddTool(&mcp.Tool{Name: "docs.search", Description: "Search the documentation.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Q string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 pages mention " + args.Q}}}, nil
		})
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, _ := server.Connect(ctx, serverTransport, nil)
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, clientTransport, nil) // bounding layer, connect, attach
	if err != nil {
		panic(err)
	}
	return session, func() { _ = session.Close(); _ = serverSession.Wait() }
}

// scriptedClaude plays the Messages API: a tool_use first, then a text
// reply quoting the tool result it received.
func scriptedClaude(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	const head = `{"id":"msg","type":"message","role":"assistant","model":"claude-example","usage":{"input_tokens":1,"output_tokens":1},`
	if len(req.Messages) == 1 {
		_, _ = io.WriteString(w, head+`"stop_reason":"tool_use","content":[{"type":"tool_use","id":"tu_1","name":"search","input":{"q":"install"}}]}`)
		return
	}
	var results []struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &results)
	text, _ := json.Marshal("the model read " + results[0].Content[0].Text)
	_, _ = io.WriteString(w, head+`"stop_reason":"end_turn","content":[{"type":"text","text":`+string(text)+`}]}`)
}
