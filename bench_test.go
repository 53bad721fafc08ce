package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// Adapter paths against their raw go-sdk baselines (style.md B1). Each pair
// shares one in-memory session, set up once per process and never closed:
// the benchmarks differ only in what runs over that session.

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

// benchArguments are the arguments of every benchmarked call.
var benchArguments = json.RawMessage(`{"query":"quarterly report","limit":3,"tags":["finance"]}`)

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

// benchSession is one monitored in-memory session over a bench server.
type benchSession struct {
	session *mcp.ClientSession
	monitor *purramcp.CatalogMonitor
}

// benchConnect connects a monitored client to server at go-sdk's default
// version. The session lives until the process exits.
func benchConnect(server *mcp.Server) (benchSession, error) {
	st, ct := mcp.NewInMemoryTransports()
	if _, err := server.Connect(context.Background(), st, nil); err != nil {
		return benchSession{}, err
	}
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(context.Background(), monitor.Transport(ct), nil)
	if err != nil {
		return benchSession{}, err
	}
	return benchSession{session: cs, monitor: monitor}, monitor.Attach(cs)
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

// benchCatalogSize is the number of tools (and bindings) of both discovery
// fixtures: MaxTools, served 8 per page over MaxPages pages.
const (
	benchCatalogSize = 256
	benchPageSize    = 8
)

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

// benchIdentityBytes returns the detached bytes (schema-profile.md A3.5) of
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
// (1 MiB of detached bytes, schema-profile.md B1.1), the largest catalog
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
