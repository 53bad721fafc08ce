package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A savedCatalog is a tools/list capture as scripts/capture-tools.mjs
// writes it: every tool exactly as the server sent it.
type savedCatalog struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Tools []json.RawMessage `json:"tools"`
}

// replayServer loads a saved catalog and returns the client end of an
// in-memory session to a server that lists exactly those tools (schemas as
// sent) and never runs one, so a capture is inspected over the same path as
// a live server.
func replayServer(ctx context.Context, path string) (mcp.Transport, func(), error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var saved savedCatalog
	if err := json.Unmarshal(raw, &saved); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: saved.Server.Name, Version: saved.Server.Version}, nil)
	for i, text := range saved.Tools {
		var tool mcp.Tool
		var shape struct {
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(text, &tool); err != nil {
			return nil, nil, fmt.Errorf("%s: tool %d: %w", path, i, err)
		}
		if json.Unmarshal(text, &shape) != nil || shape.InputSchema["type"] != "object" {
			return nil, nil, fmt.Errorf("%s: tool %q: go-sdk serves only object input schemas", path, tool.Name)
		}
		server.AddTool(&tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("replay: tool %q is never run", tool.Name)
		})
	}
	clientEnd, serverEnd := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	if err != nil {
		return nil, nil, err
	}
	return clientEnd, func() { _ = ss.Close() }, nil
}
