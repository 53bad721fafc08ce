package purraopenai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraopenai"
)

// Example runs a Chat Completions tool loop over a purramcp catalog. The MCP
// server runs in memory and a loopback server stands in for the OpenAI API:
// it asks for one search, then answers with the tool output it was sent.
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
	api := httptest.NewServer(http.HandlerFunc(scriptedGPT))
	defer api.Close()
	client := openai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("key"))

	// The host's lines.
	tb, err := purraopenai.New(catalog.Registrations(), purraopenai.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	params := openai.ChatCompletionNewParams{Model: "gpt-example", Tools: tb.ChatTools(),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("How do I install it?")}}
	for {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			fmt.Println(err)
			return
		}
		msg := completion.Choices[0].Message
		results, err := tb.ChatToolMessages(ctx, msg)
		if err != nil || len(results) == 0 {
			fmt.Println(msg.Content, err)
			return
		}
		params.Messages = append(append(params.Messages, msg.ToParam()), results...)
	}
	// Output: the model read {"structured":null,"text":["3 pages mention install"]} <nil>
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

// scriptedGPT plays the Chat Completions API: a tool call first, then a
// reply quoting the tool output it received.
func scriptedGPT(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	const head = `{"id":"c","object":"chat.completion","created":1,"model":"gpt-example","choices":[{"index":0,`
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "tool" {
		_, _ = io.WriteString(w, head+`"finish_reason":"tool_calls","message":{"role":"assistant","content":null,`+
			`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"install\"}"}}]}}]}`)
		return
	}
	text, _ := json.Marshal("the model read " + last.Content)
	_, _ = io.WriteString(w, head+`"finish_reason":"stop","message":{"role":"assistant","content":`+string(text)+`}}]}`)
}
