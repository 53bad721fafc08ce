package purramcp

import (
	"encoding/json"
	"fmt"
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

// discWorkInput and discWorkOutput are the search tool's schemas; the i-th
// tool's differ from every other tool's (see discWorkTool).
const discWorkInput = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"maxLength":%d},` +
	`"limit":{"type":"integer","minimum":1,"maximum":%d},` +
	`"tags":{"type":"array","items":{"type":"string","maxLength":64},"uniqueItems":true,"maxItems":16},` +
	`"shard_%03d":{"enum":["primary","replica"]}},` +
	`"required":["query"],"additionalProperties":false}`

const discWorkOutput = `{"type":"object","properties":{
  "count":{"type":"integer","minimum":0},
  "nextCursor":{"type":["string","null"],"maxLength":256},
  "items":{"type":"array","maxItems":%d,"items":{"type":"object","properties":{
    "id":{"type":"string","minLength":1,"maxLength":64},
    "kind":{"enum":["document","page","section","attachment"]},
    "title":{"type":"string","maxLength":200},
    "url":{"type":"string","maxLength":2048},
    "score":{"type":"number","minimum":0,"maximum":1},
    "field_%03d":{"type":"boolean"},
    "snippet":{"type":"string","maxLength":1000},
    "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":16},
    "updated":{"anyOf":[{"type":"integer","minimum":0},{"type":"null"}]}},
    "required":["id","kind","title","url","score"],"additionalProperties":false}}},
  "required":["count","items"],"additionalProperties":false}`

// discWorkUniqueOutput is discWorkOutput with every leaf schema made
// distinct by i: nothing below the root is equal between two tools.
const discWorkUniqueOutput = `{"type":"object","properties":{
  "count":{"type":"integer","minimum":%[1]d},
  "nextCursor":{"type":["string","null"],"maxLength":%[1]d},
  "items":{"type":"array","maxItems":%[1]d,"items":{"type":"object","properties":{
    "id":{"type":"string","minLength":1,"maxLength":%[1]d},
    "kind":{"enum":["document","page","section","k%[1]d"]},
    "title":{"type":"string","maxLength":%[1]d},
    "url":{"type":"string","maxLength":%[1]d},
    "score":{"type":"number","minimum":0,"maximum":%[1]d},
    "field":{"type":"boolean","description":"d%[1]d"},
    "snippet":{"type":"string","maxLength":%[1]d},
    "tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},
    "updated":{"anyOf":[{"type":"integer","minimum":%[1]d},{"type":"null","description":"n%[1]d"}]}},
    "required":["id","kind","title","url","score"],"additionalProperties":false}}},
  "required":["count","items"],"additionalProperties":false}`

// discWorkUniqueInput is discWorkInput likewise.
const discWorkUniqueInput = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"maxLength":%[1]d},` +
	`"limit":{"type":"integer","minimum":1,"maximum":%[1]d},` +
	`"tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},` +
	`"shard":{"enum":["primary","replica","r%[1]d"]}},` +
	`"required":["query"],"additionalProperties":false}`

// discWorkUniqueTool is the i-th tool whose schemas share no subtree with
// any other tool's.
func discWorkUniqueTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index.",
		InputSchema:  json.RawMessage(fmt.Sprintf(discWorkUniqueInput, 1000+i)),
		OutputSchema: json.RawMessage(fmt.Sprintf(discWorkUniqueOutput, 1000+i))}
}

func discWorkTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index.",
		InputSchema:  json.RawMessage(fmt.Sprintf(discWorkInput, 256+i, 100+i, i)),
		OutputSchema: json.RawMessage(fmt.Sprintf(discWorkOutput, 1000+i, i))}
}

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
