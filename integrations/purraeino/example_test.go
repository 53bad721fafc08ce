package purraeino_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraeino"
)

func Example() {
	ctx := context.Background()

	// An MCP server in memory; a host would connect to its real one.
	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "docs.search", Description: "Search the docs.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 pages"}}}, nil
		})
	serverT, clientT := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, serverT, nil); err != nil {
		panic(err)
	}
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, clientT, nil) // bounding layer, connect, attach
	if err != nil {
		panic(err)
	}
	defer session.Close()

	// The host's lines: discover, convert, hand to a ToolsNode (or a ReAct
	// agent's ToolsConfig).
	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", map[string]purramcp.ToolBinding{
		"docs.search": {LocalName: "search", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search"},
			Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		panic(err)
	}
	tools, err := purraeino.Tools(catalog.Registrations(), purraeino.Options{})
	if err != nil {
		panic(err)
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools,
		UnknownToolsHandler: purraeino.UnknownTool})
	if err != nil {
		panic(err)
	}

	// What a model's tool calls come back as.
	out, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: "call-1", Function: schema.FunctionCall{Name: "search", Arguments: `{"q":"purr"}`}},
		{ID: "call-2", Function: schema.FunctionCall{Name: "search", Arguments: `{"q":1}`}},
		{ID: "call-3", Function: schema.FunctionCall{Name: "delete_all", Arguments: `{}`}},
	}))
	if err != nil {
		panic(err)
	}
	for _, m := range out {
		fmt.Println(m.ToolCallID, m.Content)
	}
	// Output:
	// call-1 {"structured":null,"text":["3 pages"]}
	// call-2 {"error":"mcp_invalid_arguments"}
	// call-3 {"error":"unknown_tool"}
}
