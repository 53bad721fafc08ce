package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The catalogs and values that the benchmarks, the schema cache's tests and
// the interleaved harness (built with -tags purrabench) share.

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

// interleaveConnect connects a client to server at version ("" = go-sdk's
// default). When monitored, it uses the production wiring (the monitor's
// ClientOptions, Transport and Attach), or purra-mcp 1.0.0's reference
// wiring without Transport when version ends in " reference". close ends
// both sides.
func interleaveConnect(server *mcp.Server, version string, monitored bool) (
	cs *mcp.ClientSession, monitor *purramcp.CatalogMonitor, close func(), err error) {
	version, reference := strings.CutSuffix(version, " reference")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var opts *mcp.ClientOptions
	if monitored {
		monitor = purramcp.NewCatalogMonitor()
		opts = monitor.ClientOptions(nil)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
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

// nearEmptyServer serves the search tool with a near-empty result: one
// short text block and no hits, valid under its output schema. Run's fixed
// cost weighs most there.
func nearEmptyServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	server.AddTool(benchTool("docs.search", "Searches the document index."),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no match"}},
				StructuredContent: map[string]any{"count": 0, "items": []any{}}}, nil
		})
	return server
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
	cs, monitor, closeSession, err := interleaveConnect(w.server, "", true)
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

// digestEntries is the number of entries of the digest value.
const digestEntries = 400

// digestRecord is the i-th entry of the digest value: a small record of
// mixed members (numbers, short strings, booleans, null, a short array and
// two nested objects), the shape of a typical decoded API result, where the
// per-node work of the digest weighs more than its bytes.
func digestRecord(i int) map[string]any {
	return map[string]any{
		"id": i, "sku": fmt.Sprintf("SKU-%05d", i), "name": fmt.Sprintf("Item %d of the spring catalogue", i),
		"price": float64(i)*1.25 + 0.99, "currency": "EUR", "inStock": i%2 == 0, "quantity": i % 17,
		"tags":         []any{"tag-" + strconv.Itoa(i%7), "tag-" + strconv.Itoa(i%11), "new"},
		"dimensions":   map[string]any{"w": 10 + i%5, "h": 20 + i%3, "d": 5, "unit": "cm"},
		"rating":       map[string]any{"avg": 3.5 + float64(i%3)/2, "count": i * 3},
		"discontinued": nil, "updated": 1700000000 + i,
	}
}

// decodedRecords is a value of digestEntries records, encoded and decoded
// with encoding/json as a host would receive it: numbers are float64 and
// no two entries share a map, slice or string.
func decodedRecords(t testing.TB) map[string]any {
	entries := make([]any, digestEntries)
	for i := range entries {
		entries[i] = digestRecord(i)
	}
	raw, err := json.Marshal(map[string]any{"schemaVersion": 1, "serverId": "bench", "entries": entries})
	if err != nil {
		t.Fatal(err)
	}
	var value map[string]any
	if err := json.Unmarshal(raw, &value); err != nil {
		t.Fatal(err)
	}
	return value
}

// decodedCatalog is digestEntries catalog-shaped entries (benchCatalogEntry:
// long descriptions and schemas, string-heavy), decoded like decodedRecords.
func decodedCatalog(t testing.TB) map[string]any {
	entries := make([]any, digestEntries)
	for i := range entries {
		entries[i] = benchCatalogEntry(i)
	}
	raw, err := json.Marshal(map[string]any{"schemaVersion": 1, "serverId": "bench",
		"protocolVersion": "2025-11-25", "entries": entries})
	if err != nil {
		t.Fatal(err)
	}
	var value map[string]any
	if err := json.Unmarshal(raw, &value); err != nil {
		t.Fatal(err)
	}
	return value
}
