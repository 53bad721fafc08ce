//go:build purrabench

package purramcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/jssize"
	"purra.dev/purramcp/internal/strictjson"
)

// Adapter paths against their raw go-sdk baselines. Each pair
// shares one in-memory session, set up once per process and never closed:
// the benchmarks differ only in what runs over that session.

// benchArguments are the arguments of every benchmarked call.
var benchArguments = json.RawMessage(`{"query":"quarterly report","limit":3,"tags":["finance"]}`)

// benchSession is one monitored in-memory session over a bench server.
type benchSession struct {
	session *mcp.ClientSession
	monitor *purramcp.CatalogMonitor
}

// benchConnect connects a monitored client to server at go-sdk's default
// version. The session lives until the process exits.
func benchConnect(server *mcp.Server) (benchSession, error) {
	cs, monitor, _, err := connectInMemory(server, "", true)
	return benchSession{session: cs, monitor: monitor}, err
}

// benchShared builds a fixture once per process; a failed build fails every
// benchmark that asks for it.
type benchShared[T any] struct {
	once  sync.Once
	value T
	err   error
}

func (s *benchShared[T]) get(b *testing.B, build func() (T, error)) T {
	b.Helper()
	s.once.Do(func() { s.value, s.err = build() })
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.value
}

// benchCall is the session BenchmarkRun and BenchmarkRawCallTool share, and
// the registration of its one tool.
type benchCall struct {
	benchSession
	run func(context.Context, json.RawMessage, purramcp.ToolContext) (purramcp.ToolResult, error)
}

var benchCallFixture benchShared[benchCall]

func benchCallSetup(b *testing.B) benchCall {
	return benchCallOn(b, &benchCallFixture, func() *mcp.Server {
		return benchServe(0, benchTool("docs.search", "Searches the document index."))
	})
}

// benchCallOn builds fixture once: a monitored session over server(), which
// serves docs.search under benchTool's schemas, and the tool bound as
// search_documents.
func benchCallOn(b *testing.B, fixture *benchShared[benchCall], server func() *mcp.Server) benchCall {
	return fixture.get(b, func() (benchCall, error) {
		s, err := benchConnect(server())
		if err != nil {
			return benchCall{}, err
		}
		catalog, err := purramcp.DiscoverTools(context.Background(), s.session, "bench",
			map[string]purramcp.ToolBinding{"docs.search": {LocalName: "search_documents",
				Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search documents"}, Scope: purramcp.Unscoped}},
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		if err != nil {
			return benchCall{}, err
		}
		return benchCall{benchSession: s, run: catalog.Registrations()[0].Run}, nil
	})
}

// BenchmarkRun is one Run of a bound tool: argument parsing and validation,
// scope, one tools/call under the timeout, result conversion and output
// validation. Compare with BenchmarkRawCallTool, the same call on the same
// session through go-sdk alone.
func BenchmarkRun(b *testing.B) {
	benchRun(b, benchCallSetup(b), 3)
}

// BenchmarkRawCallTool is BenchmarkRun's baseline: session.CallTool with the
// same arguments on the same session, its result checked as loosely as a
// host without purramcp might.
func BenchmarkRawCallTool(b *testing.B) {
	benchRawCallTool(b, benchCallSetup(b), 3)
}

// benchRun times f's Run with benchArguments; every result must have one
// text block and count hits.
func benchRun(b *testing.B, f benchCall, count float64) {
	call := purramcp.ToolContext{CallID: "call-1", ToolName: "search_documents", RunID: "run-1"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.run(b.Context(), benchArguments, call)
		if err != nil || res.ErrorCode != "" || len(res.Content.Text) != 1 || res.Content.Structured["count"] != count {
			b.Fatalf("Run = %+v, %v", res, err)
		}
	}
}

// benchRawCallTool is benchRun's baseline on the same session.
func benchRawCallTool(b *testing.B, f benchCall, count float64) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.session.CallTool(b.Context(), &mcp.CallToolParams{Name: "docs.search", Arguments: benchArguments})
		if err != nil || res.IsError || len(res.Content) != 1 {
			b.Fatalf("CallTool = %+v, %v", res, err)
		}
		if m, ok := res.StructuredContent.(map[string]any); !ok || m["count"] != count {
			b.Fatalf("CallTool structured content = %v", res.StructuredContent)
		}
	}
}

// benchDiscovery is a session listing benchCatalogSize tools, bindings for
// all of them and the digest discovery must return.
type benchDiscovery struct {
	benchSession
	bindings map[string]purramcp.ToolBinding
	digest   string
	// bytes is the catalog's size as discovery counts it, identityBytes
	// the detached size of its identity value.
	bytes, identityBytes int
}

var benchDiscover256, benchDiscoverMax benchShared[benchDiscovery]

// benchDiscoverySetup serves benchCatalogSize search tools named
// docs.search_NNN, binds all of them and discovers once for the digest.
// Each description is padded by descPad bytes and each tool gets a title of
// titlePad bytes (0: none); titles are listed but not in the snapshot.
func benchDiscoverySetup(descPad, titlePad int) (benchDiscovery, error) {
	tools := make([]*mcp.Tool, benchCatalogSize)
	bindings := make(map[string]purramcp.ToolBinding, benchCatalogSize)
	for i := range tools {
		name := fmt.Sprintf("search_%03d", i)
		tools[i] = benchTool("docs."+name, "Searches shard "+name+" of the document index for entries that "+
			"match a full-text query and returns them ranked, with a snippet around each match."+
			benchPadding(descPad))
		tools[i].Title = benchPadding(titlePad)
		bindings["docs."+name] = purramcp.ToolBinding{LocalName: name,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search " + name}, Scope: purramcp.Unscoped,
			ConcurrencySafe: i%3 != 0}
	}
	s, err := benchConnect(benchServe(benchPageSize, tools...))
	if err != nil {
		return benchDiscovery{}, err
	}
	d := benchDiscovery{benchSession: s, bindings: bindings}
	catalog, err := purramcp.DiscoverTools(context.Background(), s.session, "bench", bindings,
		purramcp.DiscoveryOptions{Monitor: s.monitor})
	if err != nil {
		_ = s.session.Close()
		return benchDiscovery{}, fmt.Errorf("discovery of %d tools, pads %d/%d: %w", benchCatalogSize,
			descPad, titlePad, err)
	}
	snap := catalog.Snapshot()
	d.digest = snap.RevisionDigest
	if d.identityBytes, err = benchIdentityBytes(snap); err != nil {
		return benchDiscovery{}, err
	}
	tools, pages, err := benchListAll(context.Background(), s.session)
	if err != nil || len(tools) != benchCatalogSize || len(pages) != benchCatalogSize/benchPageSize {
		return benchDiscovery{}, fmt.Errorf("listing: %d tools, %d pages, %v", len(tools), len(pages), err)
	}
	for _, page := range pages {
		n, err := jssize.Size(page)
		if err != nil {
			return benchDiscovery{}, err
		}
		d.bytes += n
	}
	return d, nil
}

// benchPadding returns n bytes of sentence-like ASCII text.
func benchPadding(n int) string {
	const sentence = " Results are read-only."
	return strings.Repeat(sentence, n/len(sentence)) + strings.Repeat(".", n%len(sentence))
}

// benchIdentityBytes returns the detached bytes (its compact JSON size) of
// the identity value of snap: its JSON form without revisionDigest.
func benchIdentityBytes(snap purramcp.Snapshot) (int, error) {
	raw, err := json.Marshal(snap)
	if err != nil {
		return 0, err
	}
	var value map[string]any
	if err := json.Unmarshal(raw, &value); err != nil {
		return 0, err
	}
	delete(value, "revisionDigest")
	_, bytes := benchMeasure(value)
	return bytes, nil
}

// benchListAll pages tools/list to the end, as a host without purramcp
// would (with the adapter's page bound, so a broken server cannot loop).
func benchListAll(ctx context.Context, session *mcp.ClientSession) ([]*mcp.Tool, []*mcp.ListToolsResult, error) {
	var tools []*mcp.Tool
	var pages []*mcp.ListToolsResult
	params := &mcp.ListToolsParams{}
	for range purramcp.DefaultLimits().MaxPages {
		page, err := session.ListTools(ctx, params)
		if err != nil {
			return nil, nil, err
		}
		tools, pages = append(tools, page.Tools...), append(pages, page)
		if page.NextCursor == "" {
			return tools, pages, nil
		}
		params = &mcp.ListToolsParams{Cursor: page.NextCursor}
	}
	return nil, nil, errors.New("bench: more pages than MaxPages")
}

// benchDiscover runs DiscoverTools over f's session in a loop. Each
// iteration checks the outcome cheaply (no error, not stale); the digest,
// which needs a deep-copied snapshot, is checked on the first and last
// catalogs.
func benchDiscover(b *testing.B, f benchDiscovery) {
	check := func(catalog *purramcp.Catalog) {
		if got := catalog.Snapshot(); got.RevisionDigest != f.digest || len(got.Entries) != benchCatalogSize {
			b.Fatalf("catalog: %d entries, digest %s; want %d, %s", len(got.Entries), got.RevisionDigest,
				benchCatalogSize, f.digest)
		}
	}
	opts := purramcp.DiscoveryOptions{Monitor: f.monitor}
	var last *purramcp.Catalog
	b.SetBytes(int64(f.bytes))
	b.ReportAllocs()
	for b.Loop() {
		catalog, err := purramcp.DiscoverTools(b.Context(), f.session, "bench", f.bindings, opts)
		if err != nil || catalog == nil || catalog.Stale() {
			b.Fatalf("DiscoverTools: %v", err)
		}
		if last == nil {
			check(catalog)
		}
		last = catalog
	}
	check(last)
}

// benchRawList pages session.ListTools to the end in a loop, checking the
// tool count and the last name every iteration.
func benchRawList(b *testing.B, f benchDiscovery) {
	want := fmt.Sprintf("docs.search_%03d", benchCatalogSize-1)
	b.SetBytes(int64(f.bytes))
	b.ReportAllocs()
	for b.Loop() {
		tools, _, err := benchListAll(b.Context(), f.session)
		if err != nil || len(tools) != benchCatalogSize || tools[len(tools)-1].Name != want {
			b.Fatalf("ListTools: %d tools, %v", len(tools), err)
		}
	}
}

// BenchmarkDiscover256 discovers 256 bound tools with realistic schemas over
// 32 pages of 8 (about 330 KiB). Compare with BenchmarkRawListTools256.
func BenchmarkDiscover256(b *testing.B) {
	benchDiscover(b, benchDiscover256.get(b, func() (benchDiscovery, error) { return benchDiscoverySetup(0, 0) }))
}

// BenchmarkRawListTools256 is BenchmarkDiscover256's baseline: the same 32
// pages listed with session.ListTools on the same session.
func BenchmarkRawListTools256(b *testing.B) {
	benchRawList(b, benchDiscover256.get(b, func() (benchDiscovery, error) { return benchDiscoverySetup(0, 0) }))
}

// BenchmarkDiscoverMaxCatalog is BenchmarkDiscover256 at both byte bounds
// at once: the 32 pages total just under MaxCatalogBytes (1 MiB) and the
// identity value of the 256 bound entries just under the identity limit
// (1 MiB of detached bytes), the largest catalog
// discovery accepts by default. Descriptions are padded to reach the
// identity bound; titles, which are listed but not in the snapshot, fill
// the rest of the catalog bytes.
func BenchmarkDiscoverMaxCatalog(b *testing.B) {
	benchDiscover(b, benchDiscoverMax.get(b, benchMaxCatalogSetup))
}

// BenchmarkRawListToolsMaxCatalog is BenchmarkDiscoverMaxCatalog's baseline.
func BenchmarkRawListToolsMaxCatalog(b *testing.B) {
	benchRawList(b, benchDiscoverMax.get(b, benchMaxCatalogSetup))
}

// benchMaxCatalogSetup measures the unpadded catalog, then splits what is
// left under each bound equally among the tools: one ASCII byte of
// description padding adds one byte to both the catalog and the identity
// value, one byte of title only to the catalog (plus `"title":""` once).
func benchMaxCatalogSetup() (benchDiscovery, error) {
	base, err := benchDiscoverySetup(0, 0)
	if err != nil {
		return benchDiscovery{}, err
	}
	_ = base.session.Close()
	catalogLimit, identityLimit := purramcp.DefaultLimits().MaxCatalogBytes, benchIdentityLimits.Bytes
	descPad := (identityLimit - base.identityBytes) / benchCatalogSize
	titlePad := (catalogLimit-base.bytes)/benchCatalogSize - descPad - len(`,"title":""`)
	d, err := benchDiscoverySetup(descPad, titlePad)
	if err != nil {
		return benchDiscovery{}, err
	}
	if d.bytes > catalogLimit || d.bytes < catalogLimit-benchCatalogSize ||
		d.identityBytes > identityLimit || d.identityBytes < identityLimit-benchCatalogSize {
		return benchDiscovery{}, fmt.Errorf("padded catalog is %d bytes, identity %d; want just under %d and %d",
			d.bytes, d.identityBytes, catalogLimit, identityLimit)
	}
	return d, nil
}

// benchIdentityLimits are the limits every identity input must fit: depth
// 64, 65,536 nodes, 1 MiB of detached bytes.
var benchIdentityLimits = strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20}

// benchCatalogEntry is one entry shaped like an MCP catalog snapshot entry
// (the entries of a revisionDigest input).
func benchCatalogEntry(i int) map[string]any {
	name := fmt.Sprintf("search_%05d", i)
	str := func(desc string, maxLength int) map[string]any {
		return map[string]any{"type": "string", "description": desc, "minLength": 1, "maxLength": maxLength}
	}
	return map[string]any{
		"remoteName": "docs." + name,
		"localName":  name,
		"description": "Searches shard " + name + " of the document index for entries that match a " +
			"full-text query and returns them ranked, with a snippet around each match. Results are " +
			"read-only and reflect the index as of its last refresh, usually a few minutes old; use " +
			"the cursor from a previous call to page through long result lists, and tags to narrow " +
			"the search to one team, project or document type. Archived documents are excluded unless " +
			"a tag names the archive explicitly. Deleted documents never appear, even in the archive.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":  str("Full-text query; quoted phrases match exactly.", 512),
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
				"tags":   map[string]any{"type": "array", "items": str("Tag name", 64), "uniqueItems": true},
				"cursor": map[string]any{"type": []any{"string", "null"}},
			},
			"required":             []any{"query"},
			"additionalProperties": false,
		},
		"outputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"count": map[string]any{"type": "integer", "minimum": 0},
				"items": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			},
			"required": []any{"count", "items"},
		},
		"policy":          map[string]any{"mode": "read", "title": "Search " + name, "riskLevel": "read"},
		"concurrencySafe": i%3 != 0,
	}
}

// benchMeasure returns the node count and detached bytes of a decoded Go
// value, counted as the identity limits count them.
func benchMeasure(v any) (nodes, bytes int) {
	switch x := v.(type) {
	case nil, bool:
		return 1, 5
	case int, float64:
		return 1, 24
	case string:
		return 1, strictjson.StringCost(x)
	case []any:
		nodes, bytes = 1, 2+2*len(x)
		for _, item := range x {
			n, b := benchMeasure(item)
			nodes, bytes = nodes+n, bytes+b
		}
	case map[string]any:
		nodes, bytes = 1, 2+2*len(x)
		for k, item := range x {
			n, b := benchMeasure(item)
			nodes, bytes = nodes+1+n, bytes+strictjson.StringCost(k)+b
		}
	default:
		panic(fmt.Sprintf("bench: unexpected %T", v))
	}
	return nodes, bytes
}

// benchCatalog returns the largest catalog of benchCatalogEntry entries
// that fits the identity limits, just under 1 MiB of detached bytes.
func benchCatalog(b *testing.B) map[string]any {
	b.Helper()
	entries := []any{}
	catalog := map[string]any{"schemaVersion": 1, "serverId": "bench", "protocolVersion": "2025-11-25", "entries": entries}
	nodes, bytes := benchMeasure(catalog)
	for i := 0; ; i++ {
		e := benchCatalogEntry(i)
		n, by := benchMeasure(e)
		if nodes+n > benchIdentityLimits.Nodes || bytes+by+2 > benchIdentityLimits.Bytes {
			break
		}
		entries = append(entries, e)
		nodes, bytes = nodes+n, bytes+by+2
	}
	catalog["entries"] = entries
	if _, err := strictjson.Snapshot(catalog, benchIdentityLimits); err != nil {
		b.Fatalf("catalog of %d entries (%d nodes, %d bytes) outside the identity limits: %v", len(entries), nodes, bytes, err)
	}
	catalog["entries"] = append(entries, benchCatalogEntry(len(entries)))
	if _, err := strictjson.Snapshot(catalog, benchIdentityLimits); err == nil {
		b.Fatalf("catalog of %d entries is not the largest that fits", len(entries))
	}
	catalog["entries"] = entries
	b.Logf("catalog: %d entries, %d nodes, %d detached bytes", len(entries), nodes, bytes)
	return catalog
}

// BenchmarkIdentityDigest digests a ~1 MiB catalog-shaped value: as a
// decoded Go value (the path DiscoverTools takes), as raw JSON text, and
// the snapshot and encoding stages alone; and 400 small records decoded
// from JSON (decodedRecords, the interleaved harness's digest workload). SetBytes is the pre-image size
// in every case, so MB/s compares directly with BenchmarkSHA256PreImage.
func BenchmarkIdentityDigest(b *testing.B) {
	catalog := benchCatalog(b)
	want, err := purramcp.IdentityDigest(catalog)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(catalog)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := strictjson.Snapshot(catalog, benchIdentityLimits)
	if err != nil {
		b.Fatal(err)
	}
	preImage := int64(len(identity.PreImage(snap)))
	digest := func(b *testing.B, value any) {
		b.SetBytes(preImage)
		b.ReportAllocs()
		for b.Loop() {
			got, err := purramcp.IdentityDigest(value)
			if err != nil || got != want {
				b.Fatalf("IdentityDigest = %q, %v; want %q", got, err, want)
			}
		}
	}
	b.Run("catalog", func(b *testing.B) { digest(b, catalog) })
	b.Run("catalog-raw", func(b *testing.B) { digest(b, json.RawMessage(raw)) })
	b.Run("records", func(b *testing.B) {
		records := decodedRecords(b)
		want, err := purramcp.IdentityDigest(records)
		if err != nil {
			b.Fatal(err)
		}
		snap, err := strictjson.Snapshot(records, benchIdentityLimits)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(identity.PreImage(snap))))
		b.ReportAllocs()
		for b.Loop() {
			if got, err := purramcp.IdentityDigest(records); err != nil || got != want {
				b.Fatalf("IdentityDigest = %q, %v; want %q", got, err, want)
			}
		}
	})
	b.Run("snapshot-only", func(b *testing.B) {
		b.SetBytes(preImage)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := strictjson.Snapshot(catalog, benchIdentityLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-only", func(b *testing.B) {
		b.SetBytes(preImage)
		b.ReportAllocs()
		for b.Loop() {
			if got := identity.Digest(snap); got != want {
				b.Fatalf("identity.Digest = %q; want %q", got, want)
			}
		}
	})
}

// BenchmarkSHA256PreImage is the floor for BenchmarkIdentityDigest: one
// SHA-256 over the same catalog's pre-image, already encoded.
func BenchmarkSHA256PreImage(b *testing.B) {
	catalog := benchCatalog(b)
	digest, err := purramcp.IdentityDigest(catalog)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := strictjson.Snapshot(catalog, benchIdentityLimits)
	if err != nil {
		b.Fatal(err)
	}
	preImage := identity.PreImage(snap)
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], []byte(digest)); err != nil {
		b.Fatal(err)
	}
	sum := func(b *testing.B, preImage []byte, want [sha256.Size]byte) {
		b.SetBytes(int64(len(preImage)))
		b.ReportAllocs()
		for b.Loop() {
			if sha256.Sum256(preImage) != want {
				b.Fatal("SHA-256 of the pre-image is not the identity digest")
			}
		}
	}
	b.Run("catalog", func(b *testing.B) { sum(b, preImage, want) })
	b.Run("records", func(b *testing.B) {
		records := decodedRecords(b)
		snap, err := strictjson.Snapshot(records, benchIdentityLimits)
		if err != nil {
			b.Fatal(err)
		}
		sum(b, identity.PreImage(snap), sha256.Sum256(identity.PreImage(snap)))
	})
}

// benchResult returns a search result whose JSON encoding is about 64 KiB.
func benchResult() map[string]any {
	kinds := []any{"document", "page", "section", "attachment"}
	var items []any
	size := 0
	for i := 0; size < 64<<10-400; i++ {
		item := map[string]any{
			"id":      fmt.Sprintf("doc-%06d", i),
			"kind":    kinds[i%len(kinds)],
			"title":   fmt.Sprintf("Quarterly report %d: revenue, costs and outlook", i),
			"url":     fmt.Sprintf("https://docs.example.com/reports/%06d#summary", i),
			"score":   1 / float64(i+1),
			"snippet": "…the committee approved the budget for the next quarter after reviewing the " + strings.Repeat("figures ", 8) + "…",
			"tags":    []any{"finance", "report", fmt.Sprintf("q%d", i%4+1)},
			"updated": 1700000000 + i,
		}
		if i%5 == 0 {
			item["updated"] = nil
		}
		items = append(items, item)
		b, _ := json.Marshal(item)
		size += len(b) + 1
	}
	return map[string]any{"count": len(items), "nextCursor": "c2VhcmNoLzI", "items": items}
}

// benchUniqueItems returns n distinct objects that differ only in their
// last member in byte order, so every pairwise equality walks the whole
// shared part first (uniqueItems compares members in byte order).
func benchUniqueItems(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"a": []any{1, 2, 3, 4, 5, 6, 7, 8}, "z": i}
	}
	return map[string]any{"v": items}
}

// BenchmarkValidateValue validates decoded values: a realistic ~64 KiB
// result, and uniqueItems arrays whose O(n²) comparisons would need far
// more than the default ValidationSteps budget (100000), so that the
// budget, not n, bounds the time per op.
func BenchmarkValidateValue(b *testing.B) {
	newContract := func(b *testing.B, schema string) *purramcp.Contract {
		c, err := purramcp.NewContract(purramcp.ContractOptions{
			SchemaID: "bench", SchemaVersion: "1", Schema: json.RawMessage(schema)})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Run("64KiB", func(b *testing.B) {
		c := newContract(b, benchOutputSchema)
		value := benchResult()
		encoded, _ := json.Marshal(value)
		b.SetBytes(int64(len(encoded)))
		b.ReportAllocs()
		for b.Loop() {
			got, err := c.ValidateValue(value)
			if err != nil || len(got) != 3 {
				b.Fatalf("ValidateValue = %d members, %v", len(got), err)
			}
		}
	})
	unique := newContract(b, `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`)
	for _, bc := range []struct {
		name string
		n    int
	}{{"uniqueItems-adversarial", 1000}, {"uniqueItems-adversarial-x4", 4000}} {
		b.Run(bc.name, func(b *testing.B) {
			value := benchUniqueItems(bc.n)
			b.ReportAllocs()
			for b.Loop() {
				_, err := unique.ValidateValue(value)
				var ce *purramcp.ContractError
				if !errors.As(err, &ce) || ce.Code != purramcp.CodeValidationLimitExceeded {
					b.Fatalf("ValidateValue of %d items: %v, want %s", bc.n, err, purramcp.CodeValidationLimitExceeded)
				}
			}
		})
	}
}

// benchObservedFixture is BenchmarkRun's session and tool, discovered again
// with SlogObserver writing JSON records to io.Discard.
var benchObservedFixture benchShared[benchCall]

// BenchmarkRunObserved is BenchmarkRun with DiscoveryOptions.Observer set to
// SlogObserver over a JSON handler: the cost of auditing every call,
// measuring its result a second time included.
func BenchmarkRunObserved(b *testing.B) {
	shared := benchCallSetup(b)
	f := benchObservedFixture.get(b, func() (benchCall, error) {
		catalog, err := purramcp.DiscoverTools(context.Background(), shared.session, "bench",
			map[string]purramcp.ToolBinding{"docs.search": {LocalName: "search_documents",
				Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search documents"}, Scope: purramcp.Unscoped}},
			purramcp.DiscoveryOptions{Monitor: shared.monitor,
				Observer: purramcp.SlogObserver(slog.New(slog.NewJSONHandler(io.Discard, nil)))})
		if err != nil {
			return benchCall{}, err
		}
		return benchCall{benchSession: shared.benchSession, run: catalog.Registrations()[0].Run}, nil
	})
	benchRun(b, f, 3)
}

// benchNearEmpty is the session BenchmarkRunNearEmpty and
// BenchmarkRawCallToolNearEmpty share: the search tool, answering
// nearEmptyServer's result.
var benchNearEmpty benchShared[benchCall]

// BenchmarkRunNearEmpty is BenchmarkRun on a near-empty result (one short
// text block, no hits), where Run's fixed cost weighs most. Compare with
// BenchmarkRawCallToolNearEmpty.
func BenchmarkRunNearEmpty(b *testing.B) {
	benchRun(b, benchCallOn(b, &benchNearEmpty, nearEmptyServer), 0)
}

// BenchmarkRawCallToolNearEmpty is BenchmarkRunNearEmpty's baseline, as
// BenchmarkRawCallTool is BenchmarkRun's.
func BenchmarkRawCallToolNearEmpty(b *testing.B) {
	benchRawCallTool(b, benchCallOn(b, &benchNearEmpty, nearEmptyServer), 0)
}

// The catalogs and values that the benchmarks and the interleaved harness
// share.

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
