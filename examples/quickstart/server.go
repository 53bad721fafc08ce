package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsServer is the MCP server the quickstart talks to: a plain go-sdk
// server over a tiny document library. Its schemas are json.RawMessage,
// which go-sdk sends verbatim, so what you read here is what the host gets.
type docsServer struct {
	*mcp.Server
	calls atomic.Int64 // tools/call requests that reached a handler
}

// library is the server's whole content.
var library = []struct{ id, title, body string }{
	{"cats-101", "Cats 101", "Cats sleep twelve to sixteen hours a day."},
	{"cat-naps", "The science of cat naps", "A cat nap lasts about fifteen minutes."},
	{"dogs-101", "Dogs 101", "Dogs sleep about twelve hours a day."},
}

// newDocsServer returns the server with its four tools registered (tools
// registered before connecting make go-sdk advertise the tools capability).
func newDocsServer() *docsServer {
	s := &docsServer{Server: mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)}
	s.AddTool(&mcp.Tool{
		Name:        "docs.search",
		Description: "Search document titles",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"q":{"type":"string","maxLength":64},
			"limit":{"type":"integer","minimum":1,"maximum":10}},
			"required":["q"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{
			"count":{"type":"integer"},
			"titles":{"type":"array","items":{"type":"string"}}},
			"required":["count","titles"],"additionalProperties":false}`),
	}, s.search)
	s.AddTool(&mcp.Tool{
		Name:        "docs.get",
		Description: "Read one document as text",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","maxLength":64}},
			"required":["id"],"additionalProperties":false}`),
	}, s.get)
	// pattern is not one of the 18 keywords of purra.output-schema/v1: a host
	// that binds this tool fails discovery with mcp_schema_unsupported.
	s.AddTool(&mcp.Tool{
		Name:        "docs.lookup",
		Description: "Read one document by a well-formed id",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z0-9-]+$"}},
			"required":["id"]}`),
	}, s.get)
	s.AddTool(statsTool("Count the documents", `"documents":{"type":"integer"}`), s.stats(false))
	return s
}

// statsTool is docs.stats with the given description and output properties.
func statsTool(description, properties string) *mcp.Tool {
	return &mcp.Tool{
		Name:         "docs.stats",
		Description:  description,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{` + properties + `},"additionalProperties":false}`),
	}
}

// replaceStats replaces docs.stats with a version that also counts words.
// go-sdk then sends notifications/tools/list_changed (debounced by 10ms).
func (s *docsServer) replaceStats() {
	s.AddTool(statsTool("Count the documents and their words",
		`"documents":{"type":"integer"},"words":{"type":"integer"}`), s.stats(true))
}

func (s *docsServer) search(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.calls.Add(1)
	var args struct {
		Q     string `json:"q"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	titles := []string{}
	for _, doc := range library {
		if strings.Contains(strings.ToLower(doc.title), strings.ToLower(args.Q)) &&
			(args.Limit == 0 || len(titles) < args.Limit) {
			titles = append(titles, doc.title)
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d of %d titles match", len(titles), len(library))}},
		StructuredContent: map[string]any{"count": len(titles), "titles": titles},
	}, nil
}

func (s *docsServer) get(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.calls.Add(1)
	var args struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	for _, doc := range library {
		if doc.id == args.ID {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: doc.body}}}, nil
		}
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such document"}}}, nil
}

// stats returns the docs.stats handler; withWords matches the replacement's
// output schema.
func (s *docsServer) stats(withWords bool) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.calls.Add(1)
		out := map[string]any{"documents": len(library)}
		if withWords {
			words := 0
			for _, doc := range library {
				words += len(strings.Fields(doc.body))
			}
			out["words"] = words
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d documents", len(library))}},
			StructuredContent: out,
		}, nil
	}
}
