//go:build purrabench

package purramcp

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/identity"
)

// The adapter's own share of a first discovery, apart from go-sdk: the
// pages of a catalog of distinct schemas are listed once through a real
// go-sdk session, then every iteration sizes the pages, checks and compiles
// every tool through a fresh schema cache and digests the catalog, as a
// first DiscoverTools on a fresh session does.

// discWork is the adapter's work on pages: sizes, checks, the digest.
func discWork(pages []*mcp.ListToolsResult, lim Limits, cache *schemaCache) (string, error) {
	var tools []*catalogTool
	total, seen := 0, 0
	for _, page := range pages {
		n, sizes, err := pageCost(page, seen, total, lim)
		if err != nil {
			return "", err
		}
		total += n
		seen += len(page.Tools)
		for i, tool := range page.Tools {
			c, fault := checkTool(tool, sizes[i], lim, SchemaPolicy{}, cache)
			if fault != nil {
				return "", fail(fault.code)
			}
			tools = append(tools, &catalogTool{binding: binding{remote: tool.Name, local: tool.Name[5:],
				policy: ToolPolicy{Mode: "read", Title: "Search"}}, description: tool.Description,
				inputSnap: c.inputSnap, outputSnap: c.outputSnap, input: c.input, output: c.output})
		}
	}
	slices.SortFunc(tools, func(a, b *catalogTool) int { return strings.Compare(a.binding.local, b.binding.local) })
	entries := make([]any, len(tools))
	for i, t := range tools {
		entries[i] = t.identity()
	}
	return identity.DigestOf(map[string]any{"schemaVersion": snapshotVersion, "serverId": "bench",
		"protocolVersion": "2025-11-25", "entries": entries}, identityLimits)
}

func BenchmarkDiscoveryWork(b *testing.B) {
	lim, err := Limits{}.resolve()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []struct {
		name string
		tool func(int) *mcp.Tool
	}{{"distinct", discWorkTool}, {"unique-leaves", discWorkUniqueTool}} {
		pages := discWorkPagesOf(b, 256, "", w.tool)
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := discWork(pages, lim, &schemaCache{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
