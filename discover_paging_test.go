package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// fuzzPageSeparator separates pages in FuzzDiscoverPage's input; a raw NUL
// is never part of JSON text.
const fuzzPageSeparator = "\x00"

// fuzzPageSeeds returns page sequences built from the fixture: the tool
// alone, beside each schema case renamed, the declared-dialect tool, over
// two and three pages, with a repeated, an empty and an oversized cursor, a
// repeated name, an unbound tool only, and the fixture file itself.
func fuzzPageSeeds(t testing.TB, fx mcpFixture) []string {
	t.Helper()
	other := withField(t, fx.Tool, "name", "remote.other")
	join := func(pages ...string) string { return strings.Join(pages, fuzzPageSeparator) }
	seeds := []string{
		join(toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, "", fx.DeclaredDialectTool)),
		join(toolsPage(t, "", other, fx.Tool)),
		join(toolsPage(t, "c1", other), toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, "c1"), toolsPage(t, "c2", other), toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, "c1", fx.Tool), toolsPage(t, "c1", other)),
		join(toolsPage(t, "c1", fx.Tool)), // the page repeats: its cursor does too
		join(`{"tools":[],"nextCursor":""}`, toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, strings.Repeat("c", 513), fx.Tool)),
		join(toolsPage(t, "", fx.Tool, fx.Tool)),
		join(toolsPage(t, "", other)),
		join(`{"tools":[null]}`, toolsPage(t, "", fx.Tool)),
		string(readVector(t, "mcp_tools.json")),
	}
	for _, sc := range fx.SchemaCases {
		seeds = append(seeds, join(toolsPage(t, "", sc.Tool)),
			join(toolsPage(t, "next", withField(t, sc.Tool, "name", "remote.other")), toolsPage(t, "", fx.Tool)))
	}
	return seeds
}

// FuzzDiscoverPage serves fuzzed tools/list pages (tools, cursors and page
// count, separated by NUL) from the raw scripted server and discovers
// remote.search, and remote.other when other is set, under fuzzed MaxPages
// and MaxCatalogBytes. Discovery returns within its
// bounds, never sends more than MaxPages tools/list and no tools/call, and
// returns either a catalog that fuzzCheckCatalog accepts, read from pages
// that fit MaxCatalogBytes and ending on a page without a cursor, or a
// closed-surface *Error with a code from fuzzPageCodes (a first page over
// MaxCatalogBytes: mcp_catalog_limit_exceeded).
func FuzzDiscoverPage(f *testing.F) {
	fx := loadMCPFixture(f)
	seeds := fuzzPageSeeds(f, fx)
	if got := len(seeds); got != 13+2*6 {
		f.Fatalf("seed count: len = %d, want %d", got, 13+2*6)
	}
	for i, s := range seeds {
		f.Add(s, uint8(0), uint32(0), i%2 == 0, i%3 == 0)
	}
	f.Add(seeds[4], uint8(2), uint32(0), false, false) // pages exhausted
	f.Add(seeds[0], uint8(0), uint32(50), true, false) // first page over
	f.Fuzz(func(t *testing.T, text string, maxPages uint8, maxCatalogBytes uint32, modern, other bool) {
		var pages []string
		for _, p := range strings.Split(text, fuzzPageSeparator) {
			if json.Valid([]byte(p)) {
				pages = append(pages, p) // the raw server can only send JSON
			}
		}
		if len(pages) == 0 {
			return
		}
		limits := purramcp.Limits{MaxPages: fuzzLimit(uint32(maxPages), 32),
			MaxCatalogBytes: fuzzLimit(maxCatalogBytes, 1<<20), Timeout: 10 * time.Second}
		resolved, err := purramcp.ResolveLimits(limits)
		if err != nil {
			t.Fatal(err)
		}
		bindings := searchBinding()
		if other {
			bindings = otherBinding()
		}
		fuzzNoGoroutineGrowth(t)
		h := rawHarness(t, &rawServer{modern: modern, pages: pages})
		start := time.Now()
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fuzz", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
		elapsed := time.Since(start)
		lists, calls := h.counts()
		what := "pages " + strings.Join(pages, " | ")
		if limit := time.Duration(resolved.MaxPages) * resolved.Timeout; elapsed >= limit {
			t.Fatalf("%s: got %v, want < %v", what, elapsed, limit)
		}
		if lists > resolved.MaxPages {
			t.Fatalf("%s: tools/list requests: got %v, want <= %v", what, lists, resolved.MaxPages)
		}
		if lists < 1 {
			t.Fatalf("%s: tools/list requests: got %v, want >= %v", what, lists, 1)
		}
		if calls != 0 {
			t.Fatalf("%s: tools/call requests: got %v, want 0", what, calls)
		}

		sizes := fuzzServedSizes(t, pages, lists)
		if err != nil {
			code := fuzzCheckError(t, catalog, err, fuzzPageCodes, what)
			if len(sizes) > 0 && sizes[0] > resolved.MaxCatalogBytes {
				if code != purramcp.CodeCatalogLimitExceeded {
					t.Fatalf("%s: first page of %d bytes: got %q, want %q", what, sizes[0], code, purramcp.CodeCatalogLimitExceeded)
				}
			}
			return
		}
		fuzzCheckCatalog(t, catalog, bindings, h.monitor.ProtocolVersion(), what)
		if got := len(sizes); got != lists {
			t.Fatalf("%s: go-sdk decodes every page discovery read: len = %d, want %d", what, got, lists)
		}
		total := 0
		for _, n := range sizes {
			total += n
		}
		if total > resolved.MaxCatalogBytes {
			t.Fatalf("%s: catalog bytes: got %v, want <= %v", what, total, resolved.MaxCatalogBytes)
		}
		var last struct {
			NextCursor *string `json:"nextCursor"`
		}
		if json.Unmarshal([]byte(pages[min(lists, len(pages))-1]), &last) == nil && last.NextCursor != nil {
			if got := *last.NextCursor; got != "" {
				t.Fatalf("%s: discovery ended on a page with a cursor: got %q, want empty", what, got)
			}
		}
	})
}

// fuzzServedSizes lists the first n pages again from a fresh raw server
// (2025-11-25, so go-sdk caches nothing) and measures each as go-sdk
// delivers it, by the full encoding/json path; it stops at the first page
// go-sdk fails to decode.
func fuzzServedSizes(t *testing.T, pages []string, n int) []int {
	cs, _ := (&rawServer{pages: pages}).start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var sizes []int
	for range n {
		page, err := cs.ListTools(ctx, nil)
		if err != nil {
			break
		}
		size, err := jssize.Size(page)
		if err != nil {
			t.Fatalf("size of a decoded page: %v", err)
		}
		sizes = append(sizes, size)
	}
	return sizes
}

// TestBehaviorD1_PaginationSkipsUnbound: cursors [none, "next"]; the unbound
// tool's $ref schema is never compiled and not in the digest (D1, G4).
func TestBehaviorD1_PaginationSkipsUnbound(t *testing.T) {
	f := loadMCPFixture(t)
	unbound := json.RawMessage(`{"name":"unbound","inputSchema":{"type":"object","$ref":"https://example.invalid/private"}}`)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "next", unbound), toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(catalog.Registrations()); got != 1 {
			t.Fatalf("len(catalog.Registrations()) = %d, want %d", got, 1)
		}
		cursors := raw.seenCursors()
		if got := len(cursors); got != 2 {
			t.Fatalf("len(cursors) = %d, want %d", got, 2)
		}
		if cursors[0] != nil {
			t.Errorf("the first request carries no cursor: got %v, want nil", cursors[0])
		}
		if cursors[1] == nil {
			t.Fatalf("cursors[1] = nil, want non-nil")
		}
		if got := *cursors[1]; got != "next" {
			t.Errorf("*cursors[1] = %q, want %q", got, "next")
		}
		if !modern {
			if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
				t.Errorf("catalog.Snapshot().RevisionDigest = %q, want %q", got, f.RevisionDigest)
			}
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("D1 modern=%v: got %v, want 0", modern, calls)
		}
	}
}

// TestBehaviorD2_RepeatedCursor: the same cursor twice fails.
func TestBehaviorD2_RepeatedCursor(t *testing.T) {
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "again")}}
		h := rawHarness(t, raw)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		if got := purramcp.CodeOf(err); got != purramcp.CodePaginationInvalid {
			t.Errorf("D2 modern=%v: got %q, want %q", modern, got, purramcp.CodePaginationInvalid)
		}
		lists, calls := h.counts()
		if lists != 2 {
			t.Errorf("D2 modern=%v: got %v, want %v", modern, lists, 2)
		}
		if calls != 0 {
			t.Errorf("D2 modern=%v: got %v, want 0", modern, calls)
		}
	}
}

// TestBehaviorD3_OneListNoRelist: one page without nextCursor is one
// tools/list, and calls never trigger a hidden re-list.
func TestBehaviorD3_OneListNoRelist(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		for range 3 {
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != "" {
				t.Errorf("D3 at %s: got %q, want empty", version, res.ErrorCode)
			}
		}
		lists, calls := h.counts()
		if lists != 1 {
			t.Errorf("D3 at %s: tools/list requests: got %v, want %v", version, lists, 1)
		}
		if calls != 3 {
			t.Errorf("D3 at %s: tools/call requests: got %v, want %v", version, calls, 3)
		}
	})
}

// TestDiscover_CursorCycle: A → B → A repeats a cursor seen two pages
// earlier; paging stops there.
func TestDiscover_CursorCycle(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "A", f.Tool), toolsPage(t, "B"), toolsPage(t, "A")}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodePaginationInvalid {
			t.Errorf("modern=%v: got %q, want %q", modern, got, purramcp.CodePaginationInvalid)
		}
		lists, calls := h.counts()
		if lists != 3 {
			t.Errorf("modern=%v: got %v, want %v", modern, lists, 3)
		}
		if calls != 0 {
			t.Errorf("calls = %v, want 0", calls)
		}
		cursors := raw.seenCursors()
		if got := len(cursors); got != 3 {
			t.Fatalf("len(cursors) = %d, want %d", got, 3)
		}
		if cursors[0] != nil {
			t.Errorf("cursors[0] = %v, want nil", cursors[0])
		}
		if got, want := []string{*cursors[1], *cursors[2]}, []string{"A", "B"}; !reflect.DeepEqual(got, want) {
			t.Errorf("cursors[1:3] = %v, want %v", got, want)
		}
	}
}

// TestGap7_EmptyCursor: purra-mcp rejects a
// present but empty nextCursor. go-sdk decodes "nextCursor":"" and an absent
// nextCursor to the same empty string, so the adapter cannot tell them apart:
// paging ends and discovery succeeds on that page.
func TestGap7_EmptyCursor(t *testing.T) {
	f := loadMCPFixture(t)
	page := `{"tools":[` + string(f.Tool) + `],"nextCursor":""}`
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{page, toolsPage(t, "")}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatalf("empty cursor ends paging, modern=%v: %v", modern, err)
		}
		if got := len(catalog.Registrations()); got != 1 {
			t.Errorf("len(catalog.Registrations()) = %d, want %d", got, 1)
		}
		lists, _ := h.counts()
		if lists != 1 {
			t.Errorf("no second request, modern=%v: got %v, want %v", modern, lists, 1)
		}
		if !modern {
			if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
				t.Errorf("catalog.Snapshot().RevisionDigest = %q, want %q", got, f.RevisionDigest)
			}
		}
	}
}

// TestGap7_CursorTooLong: a nextCursor over 512 UTF-8 bytes fails
// mcp_pagination_invalid before it is sent; 512 bytes is allowed.
func TestGap7_CursorTooLong(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id, cursor string
		ok         bool
	}{
		{"513_ascii", strings.Repeat("c", 513), false},
		{"513_bytes_171_runes", strings.Repeat("猫", 171), false},
		{"512_ascii", strings.Repeat("c", 512), true},
		{"512_bytes_256_runes", strings.Repeat("é", 256), true},
	} {
		raw := &rawServer{pages: []string{toolsPage(t, tc.cursor), toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		lists, calls := h.counts()
		if calls != 0 {
			t.Errorf("%v: got %v, want 0", tc.id, calls)
		}
		if tc.ok {
			if err != nil {
				t.Errorf("%s is allowed: %v", tc.id, err)
			}
			if lists != 2 {
				t.Errorf("%v: got %v, want %v", tc.id, lists, 2)
			}
			continue
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodePaginationInvalid {
			t.Errorf("%v: got %q, want %q", tc.id, got, purramcp.CodePaginationInvalid)
		}
		if lists != 1 {
			t.Errorf("%s: the cursor is never sent: got %v, want %v", tc.id, lists, 1)
		}
	}
}

// TestGap7_DuplicateNameAcrossPages: a remote name repeated on a later page,
// bound or not, fails mcp_name_conflict.
func TestGap7_DuplicateNameAcrossPages(t *testing.T) {
	f := loadMCPFixture(t)
	other := json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`)
	for _, tc := range []struct {
		id    string
		pages []string
	}{
		{"bound", []string{toolsPage(t, "p2", f.Tool), toolsPage(t, "", f.Tool)}},
		{"unbound", []string{toolsPage(t, "p2", other, f.Tool), toolsPage(t, "", other)}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				h := rawHarness(t, &rawServer{modern: modern, pages: tc.pages})
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				if catalog != nil {
					t.Errorf("catalog = %v, want nil", catalog)
				}
				if got := purramcp.CodeOf(err); got != purramcp.CodeNameConflict {
					t.Errorf("%s modern=%v: got %q, want %q", tc.id, modern, got, purramcp.CodeNameConflict)
				}
				lists, calls := h.counts()
				if lists != 2 {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, lists, 2)
				}
				if calls != 0 {
					t.Errorf("calls = %v, want 0", calls)
				}
			}
		})
	}
}

// TestDiscover_OversizedPage: a page over MaxCatalogBytes fails
// mcp_catalog_limit_exceeded, and bytes add up across pages.
func TestDiscover_OversizedPage(t *testing.T) {
	f := loadMCPFixture(t)
	big := func(name string, n int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":{"type":"object"}}`, name, strings.Repeat("d", n)))
	}
	for _, tc := range []struct {
		id        string
		pages     []string
		limits    purramcp.Limits
		wantLists int
	}{
		{"default_limit_one_page", []string{toolsPage(t, "", f.Tool, big("big", purramcp.DefaultLimits().MaxCatalogBytes))}, purramcp.Limits{}, 1},
		{"default_limit_accumulated", []string{toolsPage(t, "p2", f.Tool, big("big1", 600_000)), toolsPage(t, "", big("big2", 600_000))}, purramcp.Limits{}, 2},
		{"lowered_limit_accumulated", []string{toolsPage(t, "p2", f.Tool), toolsPage(t, "", big("big", 100))}, purramcp.Limits{MaxCatalogBytes: 600}, 2},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: tc.pages})
			catalog, err := discoverDefault(t, h, tc.limits)
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
				t.Errorf("%v: got %q, want %q", tc.id, got, purramcp.CodeCatalogLimitExceeded)
			}
			lists, calls := h.counts()
			if lists != tc.wantLists {
				t.Errorf("%v: got %v, want %v", tc.id, lists, tc.wantLists)
			}
			if calls != 0 {
				t.Errorf("%v: got %v, want 0", tc.id, calls)
			}
		})
	}
}

// TestBehaviorE1_MaxPages: the page budget is gone after one page.
func TestBehaviorE1_MaxPages(t *testing.T) {
	catalogLimitCase(t, "E1", purramcp.Limits{MaxPages: 1}, 1)
}

// TestBehaviorE2_MaxTools: page 2 brings the tools seen to 2 > 1.
func TestBehaviorE2_MaxTools(t *testing.T) {
	catalogLimitCase(t, "E2", purramcp.Limits{MaxTools: 1}, 2)
}

// TestBehaviorE3_MaxCatalogBytes: page 1 alone is over 64 bytes.
func TestBehaviorE3_MaxCatalogBytes(t *testing.T) {
	catalogLimitCase(t, "E3", purramcp.Limits{MaxCatalogBytes: 64}, 1)
}

// TestDiscover_PageSizeIsJSSize: the page size discovery charges, with the
// schemas measured apart from the page, equals jssize.Size of the whole page,
// and each schema size it reuses equals jssize.Size of the schema,
// for fixture tools, schema cases, a null schema, annotations, a null tool
// and values JavaScript and Go spell differently.
func TestDiscover_PageSizeIsJSSize(t *testing.T) {
	f := loadMCPFixture(t)
	tools := []*mcp.Tool{sdkTool(t, f.Tool), sdkTool(t, f.DeclaredDialectTool), nil,
		{Name: "odd<&>\u2028", Title: "t\xff", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"minimum": math.Copysign(0, -1), "maximum": 1e21}}}},
		{Name: "null-schema"}}
	for _, sc := range f.SchemaCases {
		tools = append(tools, sdkTool(t, sc.Tool))
	}
	for _, tool := range tools {
		if tool != nil && tool.InputSchema != nil {
			var decoded any // as go-sdk decodes it
			raw, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &decoded); err != nil {
				t.Fatalf("json.Unmarshal(raw, &decoded): %v", err)
			}
			tool.InputSchema = decoded
		}
	}
	pages := []*mcp.ListToolsResult{{Tools: tools}, {Tools: tools[:1], NextCursor: "c1"}, {}, {Tools: []*mcp.Tool{}}}
	for i, page := range pages {
		want, err := jssize.Size(page)
		if err != nil {
			t.Fatal(err)
		}
		got, schemaSizes, err := purramcp.PageSize(page, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("page %d: got %v, want %v", i, got, want)
		}
		for _, limit := range []int{0, want / 2, want - 1, want} {
			n, _, err := purramcp.PageSize(page, limit)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := n > limit, want > limit; got != want {
				t.Errorf("page %d under limit %d: %d: got %v, want %v", i, limit, n, got, want)
			}
			if want <= limit {
				if n != want {
					t.Errorf("page %d at limit %d: got %v, want %v", i, limit, n, want)
				}
			}
		}
		if got := len(schemaSizes); got != len(page.Tools) {
			t.Fatalf("page %d: len = %d, want %d", i, got, len(page.Tools))
		}
		for j, tool := range page.Tools {
			var wantSchemas [2]int
			if tool != nil {
				for k, schema := range []any{tool.InputSchema, tool.OutputSchema} {
					if schema != nil {
						wantSchemas[k], err = jssize.Size(schema)
						if err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if !reflect.DeepEqual(schemaSizes[j], wantSchemas) {
				t.Errorf("page %d, tool %d: schema sizes: got %v, want %v", i, j, schemaSizes[j], wantSchemas)
			}
		}
	}
}

// TestDiscover_NoPageRequestAfterCancel: once the caller's context has
// ended, paging sends no further tools/list; discovery returns ErrCanceled.
// The context ends as the first of two pages arrives at the client.
func TestDiscover_NoPageRequestAfterCancel(t *testing.T) {
	f := loadMCPFixture(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, &mcp.ServerOptions{PageSize: 1,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	var lists atomic.Int32
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	unused := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("no call expected")
	}
	server.AddTool(sdkTool(t, f.Tool), unused)
	server.AddTool(sdkTool(t, json.RawMessage(otherTool)), unused)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				cancel()
			}
			return res, err
		}
	})
	cs, err := client.Connect(t.Context(), monitor.Transport(ct), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	if err := monitor.Attach(cs); err != nil {
		t.Fatal(err)
	}

	catalog, err := purramcp.DiscoverTools(ctx, cs, "fixture", otherBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
	if catalog != nil || !errors.Is(err, purramcp.ErrCanceled) {
		t.Fatalf("got catalog %v, error %v; want no catalog and ErrCanceled", catalog, err)
	}
	if got := lists.Load(); got != 1 {
		t.Errorf("tools/list requests = %d, want 1 (none after the context ended)", got)
	}
}
