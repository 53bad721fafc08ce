package purraadk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraadk"
)

// exampleModel stands in for Gemini: it calls "search" once, then prints the
// function response it is shown and answers.
type exampleModel struct{}

func (exampleModel) Name() string { return "example" }

func (exampleModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		last := req.Contents[len(req.Contents)-1]
		if fr := last.Parts[0].FunctionResponse; fr != nil {
			b, _ := json.Marshal(fr.Response)
			fmt.Printf("model is shown: %s\n", b)
			yield(&model.LLMResponse{Content: genai.NewContentFromText("done", "model")}, nil)
			return
		}
		yield(&model.LLMResponse{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{
			FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "search", Args: map[string]any{"q": "purr"}},
		}}}}, nil)
	}
}

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

	// The host's lines: discover, wrap, hand to the agent.
	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", map[string]purramcp.ToolBinding{
		"docs.search": {LocalName: "search", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search"},
			Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		panic(err)
	}
	tools, err := purraadk.NewToolset("docs", catalog, purraadk.Options{})
	if err != nil {
		panic(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "helper", Model: exampleModel{},
		Toolsets: []tool.Toolset{tools}})
	if err != nil {
		panic(err)
	}

	r, err := runner.NewInMemory("app", a)
	if err != nil {
		panic(err)
	}
	for _, err := range r.Run(ctx, "user", "s1", genai.NewContentFromText("find purr", "user"), agent.RunConfig{}) {
		if err != nil {
			panic(err)
		}
	}
	// Output:
	// model is shown: {"structured":null,"text":["3 pages"]}
}
