// Command stdioserver is the MCP server that monitor_test.go builds and
// launches with mcp.CommandTransport: a go-sdk server over
// mcp.StdioTransport serving
//
//   - remote.search, the mcp_tools.json fixture tool with its strict output
//     schema, answering {"content":[{"type":"text","text":"found"}],
//     "structuredContent":{"count":1}};
//   - count, the smoke tool (empty input schema, an output schema with
//     an integer count), answering {"content":[],"structuredContent":{"count":3}} after
//     checking that its arguments are {};
//   - count_typed, the same tool registered with the generic mcp.AddTool, so
//     go-sdk adds the JSON text block from the typed output;
//   - remote.exit, which ends the process with status 3 before answering.
//
// It advertises tools without listChanged, as the reference smoke server
// does, and exits 0 when its stdin closes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	searchInput  = `{"type":"object","properties":{"q":{"type":"string","maxLength":1},"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["q"],"additionalProperties":false}`
	searchOutput = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`
	countInput   = `{"type":"object","properties":{},"additionalProperties":false}`
	countOutput  = searchOutput
)

// countOut is the typed output of count_typed.
type countOut struct {
	Count int `json:"count"`
}

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "stdio-fixture", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	server.AddTool(&mcp.Tool{Name: "remote.search", Description: "Search documents",
		InputSchema: json.RawMessage(searchInput), OutputSchema: json.RawMessage(searchOutput)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}},
				StructuredContent: map[string]any{"count": 1}}, nil
		})
	server.AddTool(&mcp.Tool{Name: "count",
		InputSchema: json.RawMessage(countInput), OutputSchema: json.RawMessage(countOutput)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || len(args) != 0 {
				return nil, errors.New("count takes no arguments")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 3}}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "count_typed",
		InputSchema: json.RawMessage(countInput), OutputSchema: json.RawMessage(countOutput)},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, countOut, error) {
			return nil, countOut{Count: 3}, nil
		})
	server.AddTool(&mcp.Tool{Name: "remote.exit", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}
