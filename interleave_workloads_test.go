//go:build purrabench

package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Workloads of the interleaved harness beyond issue 14's own, so that its
// figures are not one catalog's and one result's: the tools of the captured
// real-server catalogs (testdata/catalogs), a tool without an output schema
// whose result is text only, and arguments near the input schema's bounds.

// realCatalogWorkload serves the tools of the captured real-server catalogs
// that InspectTool finds bindable under policy, in file order, at most
// benchCatalogSize of them, benchPageSize per page, and binds them all.
// go-sdk lists them by name. Each remote name is prefixed with its catalog's index (two servers may
// name a tool alike); a name that is no valid remote name then is skipped.
func realCatalogWorkload(t *testing.T, policy purramcp.SchemaPolicy) discoveryWorkload {
	files, err := filepath.Glob("testdata/catalogs/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/catalogs: %d files, %v", len(files), err)
	}
	var tools []*mcp.Tool
	bindings := make(map[string]purramcp.ToolBinding)
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var saved struct {
			Tools []*mcp.Tool `json:"tools"` // decoded as a go-sdk client decodes tools/list
		}
		if err := json.Unmarshal(raw, &saved); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range saved.Tools {
			if len(tools) == benchCatalogSize {
				break
			}
			tool.Name = fmt.Sprintf("s%02d.%s", i, tool.Name)
			if !validRemoteName(tool.Name) {
				continue
			}
			r, err := purramcp.InspectTool(tool, purramcp.Limits{}, policy)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Bindable {
				continue
			}
			local := fmt.Sprintf("tool_%03d", len(tools))
			bindings[tool.Name] = purramcp.ToolBinding{LocalName: local,
				Policy: purramcp.ToolPolicy{Mode: "read", Title: tool.Name}, Scope: purramcp.Unscoped}
			tools = append(tools, tool)
		}
	}
	if len(tools) < 100 {
		t.Fatalf("only %d bindable real-server tools under %+v", len(tools), policy)
	}
	last := slices.MaxFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) }).Name
	return discoveryWorkload{server: benchServe(benchPageSize, tools...), bindings: bindings, policy: policy,
		tools: len(tools), pages: (len(tools) + benchPageSize - 1) / benchPageSize, last: last}
}

// validRemoteName reports whether name is a remote tool name a binding
// accepts: 1–128 of A–Z, a–z, 0–9, '_', '.' and '-'.
func validRemoteName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// interleaveRealDiscoveryPair is the first discovery of the real-server
// tools bindable under policy against their first raw listing, each on a
// fresh session.
func interleaveRealDiscoveryPair(t *testing.T, policy purramcp.SchemaPolicy) interleavePair {
	return interleaveFirstDiscoveryOf(t, realCatalogWorkload(t, policy))
}

// widestPolicy is every opt-in schema policy at once: the most real-server
// tools bind under it.
var widestPolicy = purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true}

// textServer serves docs.lines, a tool with the search tool's input schema
// and no output schema, whose result is eight text blocks and no structured
// content.
func textServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "docs.lines", Description: "Returns matching lines.",
		InputSchema: json.RawMessage(benchInputSchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			content := make([]mcp.Content, 8)
			for i := range content {
				content[i] = &mcp.TextContent{Text: fmt.Sprintf("line %d: the quarterly report is due on Friday", i)}
			}
			return &mcp.CallToolResult{Content: content}, nil
		})
	return server
}

// largeArguments are search arguments near benchInputSchema's bounds: a
// query of 510 bytes and 16 distinct tags.
var largeArguments = func() json.RawMessage {
	tags := make([]string, 16)
	for i := range tags {
		tags[i] = fmt.Sprintf(`"finance-%02d"`, i)
	}
	query := strings.Repeat("quarterly report ", 30)
	return json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":100,"tags":[%s]}`, query, strings.Join(tags, ",")))
}()
