package purramcp_test

import (
	"encoding/json"
	"fmt"

	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// uniqueLeavesTool is the i-th tool of a catalog whose schemas share no
// subtree between tools: distinctTool's shape, with every leaf schema
// carrying i (a bound, an enum member or a description), so that the
// monitor's schema cache can share nothing below the roots either.
func uniqueLeavesTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	n := 1000 + i
	input := fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","minLength":1,"maxLength":%[1]d},`+
		`"limit":{"type":"integer","minimum":1,"maximum":%[1]d},`+
		`"tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},`+
		`"shard":{"enum":["primary","replica","r%[1]d"]}},`+
		`"required":["query"],"additionalProperties":false}`, n)
	output := fmt.Sprintf(`{"type":"object","properties":{`+
		`"count":{"type":"integer","minimum":%[1]d},`+
		`"nextCursor":{"type":["string","null"],"maxLength":%[1]d},`+
		`"items":{"type":"array","maxItems":%[1]d,"items":{"type":"object","properties":{`+
		`"id":{"type":"string","minLength":1,"maxLength":%[1]d},`+
		`"kind":{"enum":["document","page","section","k%[1]d"]},`+
		`"title":{"type":"string","maxLength":%[1]d},`+
		`"url":{"type":"string","maxLength":%[1]d},`+
		`"score":{"type":"number","minimum":0,"maximum":%[1]d},`+
		`"field":{"type":"boolean","description":"d%[1]d"},`+
		`"snippet":{"type":"string","maxLength":%[1]d},`+
		`"tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},`+
		`"updated":{"anyOf":[{"type":"integer","minimum":%[1]d},{"type":"null","description":"n%[1]d"}]}},`+
		`"required":["id","kind","title","url","score"],"additionalProperties":false}}},`+
		`"required":["count","items"],"additionalProperties":false}`, n)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index for entries " +
		"that match a full-text query and returns them ranked, with a snippet around each match.",
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// uniqueLeavesCatalog is distinctCatalog with uniqueLeavesTool's tools.
func uniqueLeavesCatalog() (*mcp.Server, map[string]purramcp.ToolBinding) {
	tools := make([]*mcp.Tool, benchCatalogSize)
	bindings := make(map[string]purramcp.ToolBinding, benchCatalogSize)
	for i := range tools {
		tools[i] = uniqueLeavesTool(i)
		bindings[tools[i].Name] = purramcp.ToolBinding{LocalName: tools[i].Name[5:],
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search " + tools[i].Name[5:]}, Scope: purramcp.Unscoped,
			ConcurrencySafe: i%3 != 0}
	}
	return benchServe(benchPageSize, tools...), bindings
}

// interleaveFirstUniqueDiscoveryPair is interleaveFirstDiscoveryPair over
// the unique-leaves catalog: the first discovery when no two tools share
// any part of a schema.
func interleaveFirstUniqueDiscoveryPair(t *testing.T) interleavePair {
	return interleaveFirstDiscoveryOf(t, benchWorkload(uniqueLeavesCatalog()))
}
