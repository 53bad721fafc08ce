package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCatalogFileBytes bounds a saved catalog file: 16 MiB, far above the
// 1 MiB a listing may carry under the default limits.
const maxCatalogFileBytes = 16 << 20

// A capture is a tools/list capture as scripts/capture-tools.mjs writes
// it: the server's name and version and every tool exactly as sent.
type capture struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Tools []json.RawMessage `json:"tools"`
}

// savedCatalog returns a dial function for endpoint.dial that loads the
// capture at path and serves exactly its tools (schemas as sent) from an
// in-memory go-sdk server that never runs one, so a capture is inspected
// over the same path as a live server.
func savedCatalog(path string) func(context.Context) (mcp.Transport, func(), error) {
	return func(ctx context.Context) (mcp.Transport, func(), error) {
		server, err := loadCapture(path)
		if err != nil {
			return nil, nil, err
		}
		clientEnd, serverEnd := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, serverEnd, nil)
		if err != nil {
			return nil, nil, err
		}
		return clientEnd, func() { _ = ss.Close() }, nil
	}
}

// loadCapture reads the capture at path into a server listing its tools.
func loadCapture(path string) (*mcp.Server, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > maxCatalogFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxCatalogFileBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxCatalogFileBytes+1)) // a file may grow
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(raw) > maxCatalogFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxCatalogFileBytes)
	}
	var saved capture
	if err := json.Unmarshal(raw, &saved); err != nil {
		return nil, fmt.Errorf("%s: not a tools/list capture: %w", path, err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: saved.Server.Name, Version: saved.Server.Version}, nil)
	for i, text := range saved.Tools {
		var tool mcp.Tool
		var shape struct {
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(text, &tool); err != nil {
			return nil, fmt.Errorf("%s: tools[%d]: %w", path, i, err)
		}
		// go-sdk panics on a tool whose input schema is not an object.
		if json.Unmarshal(text, &shape) != nil || shape.InputSchema["type"] != "object" {
			return nil, fmt.Errorf("%s: tools[%d]: go-sdk serves only input schemas of type object", path, i)
		}
		server.AddTool(&tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("tool %q of a saved catalog is never run", tool.Name)
		})
	}
	return server, nil
}
