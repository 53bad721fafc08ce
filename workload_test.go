package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The catalogs the memory, interleave and benchmark tests discover: the
// maximum catalog, the distinct and unique-leaves catalogs, and the
// benchmarked search tool.

// mib formats a byte count in MiB.
func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// Paddings of memoryTool: memoryPad gives the largest all-bound catalog
// used here; memoryPadOverDigest (a page of 1,015,698 bytes, still under
// MaxCatalogBytes) fails discovery at the digest's budget.
const (
	memoryPad           = 1_790
	memoryPadOverDigest = 1_800
)

// memoryTool is tool i of the maximum catalog: a description and a padded
// input schema sized so that 256 of them, as one tools/list page, come just
// under MaxCatalogBytes.
func memoryTool(i, pad int) *mcp.Tool {
	input := fmt.Sprintf(`{"type":"object","properties":{"q":{"type":"string","description":%q},`+
		`"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},`+
		`"required":["q"],"additionalProperties":false}`, strings.Repeat("q", pad))
	output := `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`
	return &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: strings.Repeat("d", pad),
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// memoryServer is a go-sdk server with n tools padded by pad bytes twice,
// whose every call answers {"content":[text "ok"],"structuredContent":{"count":1}}
// and only counts (it keeps nothing per call).
func memoryServer(n, pad int) (*mcp.Server, *atomic.Int64) {
	var calls atomic.Int64
	server := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
	for i := range n {
		server.AddTool(memoryTool(i, pad), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}},
				StructuredContent: map[string]any{"count": 1}}, nil
		})
	}
	return server, &calls
}

// memoryBindings binds every tool of memoryServer.
func memoryBindings(n int) map[string]purramcp.ToolBinding {
	bindings := make(map[string]purramcp.ToolBinding, n)
	for i := range n {
		name := fmt.Sprintf("tool_%03d", i)
		bindings[name] = purramcp.ToolBinding{LocalName: name, Scope: purramcp.Unscoped,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Tool " + name}}
	}
	return bindings
}

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

// connectInMemory connects a client to server over
// mcp.NewInMemoryTransports at version ("" = go-sdk's default) and fails
// unless that version is negotiated. When monitored, it uses the production wiring (the monitor's
// client, Transport and Attach), or purra-mcp 1.0.0's reference
// wiring without Transport when version ends in " reference". close ends
// both sides.
func connectInMemory(server *mcp.Server, version string, monitored bool) (
	cs *mcp.ClientSession, monitor *purramcp.CatalogMonitor, close func(), err error) {
	version, reference := strings.CutSuffix(version, " reference")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	impl := &mcp.Implementation{Name: "host", Version: "1"}
	client := mcp.NewClient(impl, nil)
	if monitored {
		monitor = purramcp.NewCatalogMonitor()
		client = monitor.NewClient(impl, nil)
	}
	var transport mcp.Transport = ct
	if monitored && !reference {
		transport = monitor.Transport(ct)
	}
	cs, err = client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		_ = ss.Close()
		return nil, nil, nil, err
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		_ = cs.Close()
		return nil, nil, nil, fmt.Errorf("negotiated %s, want %s", got, version)
	}
	if monitored {
		if err := monitor.Attach(cs); err != nil {
			return nil, nil, nil, err
		}
	}
	return cs, monitor, func() { _ = cs.Close(); _ = ss.Wait() }, nil
}

// distinctTool is the i-th tool of the distinct-schema catalog: the search
// tool's shape, but every schema differs from every other tool's (a
// property name and bounds carry i), so no two contracts are equal.
func distinctTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	input := fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","minLength":1,"maxLength":%d},`+
		`"limit":{"type":"integer","minimum":1,"maximum":%d},`+
		`"tags":{"type":"array","items":{"type":"string","maxLength":64},"uniqueItems":true,"maxItems":16},`+
		`"shard_%03d":{"enum":["primary","replica"]}},`+
		`"required":["query"],"additionalProperties":false}`, 256+i, 100+i, i)
	output := strings.Replace(benchOutputSchema, `"maxItems": 1000`, fmt.Sprintf(`"maxItems": %d`, 1000+i), 1)
	output = strings.Replace(output, `"snippet": {`, fmt.Sprintf(`"field_%03d": {"type": "boolean"}, "snippet": {`, i), 1)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index for entries " +
		"that match a full-text query and returns them ranked, with a snippet around each match.",
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// distinctCatalog serves benchCatalogSize distinct tools benchPageSize per
// page (32 pages of 8) and binds all of them.
func distinctCatalog() (*mcp.Server, map[string]purramcp.ToolBinding) {
	tools := make([]*mcp.Tool, benchCatalogSize)
	bindings := make(map[string]purramcp.ToolBinding, benchCatalogSize)
	for i := range tools {
		tools[i] = distinctTool(i)
		bindings[tools[i].Name] = purramcp.ToolBinding{LocalName: tools[i].Name[5:],
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search " + tools[i].Name[5:]}, Scope: purramcp.Unscoped,
			ConcurrencySafe: i%3 != 0}
	}
	return benchServe(benchPageSize, tools...), bindings
}

// discoveryWorkload is a catalog the discovery pairs list: its server, the
// bindings and schema policy DiscoverTools is given, and what a complete
// listing holds (the tools, the pages and the last tool's name).
type discoveryWorkload struct {
	server       *mcp.Server
	bindings     map[string]purramcp.ToolBinding
	policy       purramcp.SchemaPolicy
	tools, pages int
	last         string
}

// benchWorkload is the workload of a catalog of benchCatalogSize tools
// docs.search_000 … served benchPageSize per page (distinctCatalog,
// uniqueLeavesCatalog), bound under the default policy.
func benchWorkload(server *mcp.Server, bindings map[string]purramcp.ToolBinding) discoveryWorkload {
	return discoveryWorkload{server: server, bindings: bindings, tools: benchCatalogSize,
		pages: benchCatalogSize / benchPageSize, last: fmt.Sprintf("docs.search_%03d", benchCatalogSize-1)}
}

// interleaveDigest discovers w once on its own session for the digest
// every later discovery must return.
func interleaveDigest(t *testing.T, w discoveryWorkload) string {
	cs, monitor, closeSession, err := connectInMemory(w.server, "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession()
	catalog, err := purramcp.DiscoverTools(context.Background(), cs, "bench", w.bindings,
		purramcp.DiscoveryOptions{Monitor: monitor, Policy: w.policy})
	if err != nil {
		t.Fatal(err)
	}
	return catalog.Snapshot().RevisionDigest
}

// benchTool is the search tool with the given name and description.
func benchTool(name, description string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description,
		InputSchema: json.RawMessage(benchInputSchema), OutputSchema: json.RawMessage(benchOutputSchema)}
}

// benchServe returns a go-sdk server listing tools pageSize per page
// (0: go-sdk's default); every call answers benchCallResult.
func benchServe(pageSize int, tools ...*mcp.Tool) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	for _, tool := range tools {
		server.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return benchCallResult(), nil
		})
	}
	return server
}

// benchCatalogSize is the number of tools (and bindings) of both discovery
// fixtures: MaxTools, served 8 per page over MaxPages pages.
const (
	benchCatalogSize = 256
	benchPageSize    = 8
)

// benchOutputSchema is a search tool's output schema using most of the
// profile's keywords.
const benchOutputSchema = `{
  "type": "object",
  "properties": {
    "count": {"type": "integer", "minimum": 0},
    "nextCursor": {"type": ["string", "null"], "maxLength": 256},
    "items": {
      "type": "array",
      "maxItems": 1000,
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "minLength": 1, "maxLength": 64},
          "kind": {"enum": ["document", "page", "section", "attachment"]},
          "title": {"type": "string", "maxLength": 200},
          "url": {"type": "string", "maxLength": 2048},
          "score": {"type": "number", "minimum": 0, "maximum": 1},
          "snippet": {"type": "string", "maxLength": 1000},
          "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 16},
          "updated": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
        },
        "required": ["id", "kind", "title", "url", "score"],
        "additionalProperties": false
      }
    }
  },
  "required": ["count", "items"],
  "additionalProperties": false
}`

// benchInputSchema is a search tool's input schema: a few properties, one
// required, no others allowed.
const benchInputSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 512},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 64}, "uniqueItems": true, "maxItems": 16}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// benchCallResult is the small structured result every benchmarked call
// returns: one text block and three ranked hits (about 900 bytes of JSON),
// valid under benchOutputSchema.
func benchCallResult() *mcp.CallToolResult {
	items := make([]any, 3)
	for i := range items {
		items[i] = map[string]any{
			"id": fmt.Sprintf("doc-%06d", i), "kind": "document",
			"title":   fmt.Sprintf("Quarterly report %d: revenue, costs and outlook", i),
			"url":     fmt.Sprintf("https://docs.example.com/reports/%06d#summary", i),
			"score":   1 / float64(i+1),
			"snippet": "…the committee approved the budget for the next quarter…",
			"tags":    []any{"finance", "report"}, "updated": 1700000000 + i,
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "3 documents match \"quarterly report\""}},
		StructuredContent: map[string]any{"count": 3, "nextCursor": nil, "items": items},
	}
}
