package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// TestBehaviorA4_AnnotationsGrantNothing: the fixture's write-looking
// annotations (readOnlyHint false, destructiveHint true) do not block a read
// binding, and no annotation reaches the snapshot or the digest.
func TestBehaviorA4_AnnotationsGrantNothing(t *testing.T) {
	f := loadMCPFixture(t)
	variants := map[string]json.RawMessage{
		"fixture":   f.Tool,
		"read_only": withField(t, f.Tool, "annotations", map[string]any{"readOnlyHint": true, "destructiveHint": false, "title": "T"}),
		"none":      withField(t, f.Tool, "annotations", nil),
	}
	forEachVersion(t, func(t *testing.T, version string) {
		digests := map[string]string{}
		for name, tool := range variants {
			h := sdkHarness(t, newSDKServer(t, nil, tool), version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			if err != nil {
				t.Fatalf("A4 %s at %s: %v", name, version, err)
			}
			snap, err := json.Marshal(catalog.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(snap), "annotations") {
				t.Errorf("A4 %s at %s: %q contains %q", name, version, string(snap), "annotations")
			}
			if strings.Contains(string(snap), "Hint") {
				t.Errorf("A4 %s at %s: %q contains %q", name, version, string(snap), "Hint")
			}
			digests[name] = catalog.Snapshot().RevisionDigest
		}
		if digests["read_only"] != digests["fixture"] {
			t.Errorf("A4 at %s: got %q, want %q", version, digests["read_only"], digests["fixture"])
		}
		if digests["none"] != digests["fixture"] {
			t.Errorf("A4 at %s: got %q, want %q", version, digests["none"], digests["fixture"])
		}
		if version == purramcp.ProtocolVersion20251125 {
			if digests["fixture"] != f.RevisionDigest {
				t.Errorf("A4: fixture digest: got %q, want %q", digests["fixture"], f.RevisionDigest)
			}
		}
	})
}

// TestDiscover_CatalogRejects covers the remaining "catalog rejects" cases
// (a bound tool missing from the catalog, a tool listed twice) and
// non-object schemas.
func TestDiscover_CatalogRejects(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id    string
		pages []string
		want  string
	}{
		{"duplicate", []string{toolsPage(t, "", f.Tool, f.Tool)}, purramcp.CodeNameConflict},
		{"missing", []string{toolsPage(t, "")}, purramcp.CodeBindingMissing},
		{"input_not_object", []string{`{"tools":[{"name":"remote.search","inputSchema":true}]}`}, purramcp.CodeSchemaUnsupported},
		{"output_not_object", []string{`{"tools":[{"name":"remote.search","inputSchema":{"type":"object"},"outputSchema":[1]}]}`}, purramcp.CodeSchemaUnsupported},
		{"dialect_not_string", []string{`{"tools":[{"name":"remote.search","inputSchema":{"type":"object","$schema":1}}]}`}, purramcp.CodeSchemaUnsupported},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: tc.pages})
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, tc.want)
			}
			_, calls := h.counts()
			if calls != 0 {
				t.Errorf("calls = %v, want 0", calls)
			}
		})
	}
}

// TestDiscover_ToolsUnavailable: a server without the tools capability fails
// mcp_tools_unavailable before any request.
func TestDiscover_ToolsUnavailable(t *testing.T) {
	for _, modern := range modernities {
		h := rawHarness(t, &rawServer{modern: modern, noTools: true, pages: []string{toolsPage(t, "")}})
		_, err := discoverDefault(t, h, purramcp.Limits{})
		if got := purramcp.CodeOf(err); got != purramcp.CodeToolsUnavailable {
			t.Errorf("raw modern=%v: got %q, want %q", modern, got, purramcp.CodeToolsUnavailable)
		}
		lists, _ := h.counts()
		if lists != 0 {
			t.Errorf("raw modern=%v: got %v, want 0", modern, lists)
		}
	}
	forEachVersion(t, func(t *testing.T, version string) {
		// A go-sdk server with no tool and no tools capability advertises none.
		server := mcp.NewServer(&mcp.Implementation{Name: "toolless", Version: "1"}, nil)
		cs, monitor := connectSDK(t, server, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: monitor})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeToolsUnavailable {
			t.Errorf("go-sdk server at %s: got %q, want %q", version, got, purramcp.CodeToolsUnavailable)
		}
	})
}

// TestDiscover_NotInitialized: a monitor that accepted no protocol version fails
// mcp_not_initialized before any request.
func TestDiscover_NotInitialized(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		fresh := purramcp.NewCatalogMonitor()
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: fresh})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeNotInitialized {
			t.Errorf("%v: got %q, want %q", version, got, purramcp.CodeNotInitialized)
		}
		fresh.OnNotification("notifications/tools/list_changed")
		_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: fresh})
		if got := purramcp.CodeOf(err); got != purramcp.CodeNotInitialized {
			t.Errorf("%s: not initialized before stale: got %q, want %q", version, got, purramcp.CodeNotInitialized)
		}
		lists, _ := h.counts()
		if lists != 0 {
			t.Errorf("%v: got %v, want 0", version, lists)
		}
	})
}

// TestDiscover_TTLCache: under 2026-07-28 go-sdk serves tools/list from its
// TTL cache, sharing its result with every caller. A second
// discovery from the cache gives the same catalog, so the adapter changed
// nothing it was handed; a list change invalidates the cache and rediscovery
// asks the server again.
func TestDiscover_TTLCache(t *testing.T) {
	f := loadMCPFixture(t)
	page := `{"tools":[` + string(f.Tool) + `],"ttlMs":600000,"cacheScope":"private"}`
	synctest.Test(t, func(t *testing.T) {
		raw := &rawServer{modern: true, pages: []string{page}}
		h := rawHarness(t, raw)
		first, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		snap := first.Snapshot()
		snap.Entries[0].InputSchema["type"] = "array"
		second, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		lists, _ := h.counts()
		if lists != 1 {
			t.Errorf("the second discovery was served from go-sdk's cache: got %v, want %v", lists, 1)
		}
		before, err := json.Marshal(first.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		after, err := json.Marshal(second.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(after), string(before); !jsonEqual(t, got, want) {
			t.Errorf("same catalog from the shared cached result: got %s, want JSON equal to %s", got, want)
		}

		raw.notifyChanged()
		synctest.Wait()
		if !second.Stale() {
			t.Fatalf("second.Stale() is false")
		}
		third, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		lists, _ = h.counts()
		if lists != 2 {
			t.Errorf("the list change invalidated the cache: got %v, want %v", lists, 2)
		}
		if got, want := third.Snapshot().RevisionDigest, first.Snapshot().RevisionDigest; got != want {
			t.Errorf("third.Snapshot().RevisionDigest = %q, want %q", got, want)
		}
	})
}

// TestDiscover_CancelInFlight: the caller's ctx ending while tools/list is
// unanswered fails ErrCanceled (never mcp_timeout); the session stays usable.
func TestDiscover_CancelInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		raw := &rawServer{listFault: "silent", pages: []string{toolsPage(t, "")}}
		h := rawHarness(t, raw)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h.monitor})
			done <- err
		}()
		synctest.Wait()
		lists, _ := h.counts()
		if lists != 1 {
			t.Fatalf("lists = %v, want %v", lists, 1)
		}
		cancel()
		err := <-done
		if !errors.Is(err, purramcp.ErrCanceled) {
			t.Errorf("error %v, want one matching %v", err, purramcp.ErrCanceled)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want one matching %v", err, context.Canceled)
		}
		if got := purramcp.CodeOf(err); got != "" {
			t.Errorf("purramcp.CodeOf(err) = %q, want empty", got)
		}
		if err := h.session.Ping(t.Context(), nil); err != nil {
			t.Errorf("h.session.Ping(t.Context(), nil): %v", err)
		}
	})
}

// TestDiscover_InvalidHeaderToolDroppedByGoSDK documents a go-sdk behaviour:
// go-sdk silently drops a tool whose input schema carries an invalid
// x-mcp-header annotation, at every version, so a bound one fails
// mcp_binding_missing.
func TestDiscover_InvalidHeaderToolDroppedByGoSDK(t *testing.T) {
	tool := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}`)
	for _, modern := range modernities {
		h := rawHarness(t, &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)}})
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingMissing {
			t.Errorf("modern=%v: got %q, want %q", modern, got, purramcp.CodeBindingMissing)
		}
	}
}

// TestSchemaSharing_ConcurrentDiscoveries: discoveries running at once over
// one session share its schema cache (and so the snapshot objects and
// compiled nodes it shares between schemas) and all return the catalog a
// discovery alone returns, on the distinct catalog and on the one whose
// tools share nothing; under -race this checks the sharing's locking.
func TestSchemaSharing_ConcurrentDiscoveries(t *testing.T) {
	leakChecked(t, "discoveries", func(t *testing.T) {
		for _, build := range []func() (*mcp.Server, map[string]purramcp.ToolBinding){distinctCatalog, uniqueLeavesCatalog} {
			server, bindings := build()
			want := interleaveDigest(t, benchWorkload(server, bindings))
			cs, monitor, closeSession, err := connectInMemory(server, "", true)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			digests := make([]string, 4)
			errs := make([]error, 4)
			for i := range digests {
				wg.Add(1)
				go func() {
					defer wg.Done()
					catalog, err := purramcp.DiscoverTools(context.Background(), cs, "bench", bindings,
						purramcp.DiscoveryOptions{Monitor: monitor})
					if err == nil {
						digests[i] = catalog.Snapshot().RevisionDigest
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			closeSession()
			for i := range digests {
				if errs[i] != nil || digests[i] != want {
					t.Fatalf("discovery %d: digest %s, %v; want %s", i, digests[i], errs[i], want)
				}
			}
		}
	})
}

// TestBehaviorJ1_CanceledDiscovery: a done ctx sends nothing.
func TestBehaviorJ1_CanceledDiscovery(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		ctx, cancel := contextWithCancel(t)
		cancel()
		catalog, err := purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h.monitor})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if !errors.Is(err, purramcp.ErrCanceled) {
			t.Errorf("J1 at %s: error %v, want one matching %v", version, err, purramcp.ErrCanceled)
		}
		if !errors.Is(err, errContextCanceled) {
			t.Errorf("J1 at %s: error %v, want one matching %v", version, err, errContextCanceled)
		}
		lists, _ := h.counts()
		if lists != 0 {
			t.Errorf("J1 at %s: got %v, want 0", version, lists)
		}
	})
}

// TestDiscover_RequestFailures: a tools/list answer that never comes fails
// mcp_timeout at Limits.Timeout; a connection closed instead of an answer
// fails mcp_transport_error. Discovery returns only *Error values.
func TestDiscover_RequestFailures(t *testing.T) {
	for _, tc := range []struct{ fault, want string }{{"silent", purramcp.CodeTimeout}, {"close", purramcp.CodeTransportError}} {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{listFault: tc.fault, pages: []string{toolsPage(t, "")}}
			h := rawHarness(t, raw)
			start := time.Now()
			catalog, err := discoverDefault(t, h, purramcp.Limits{Timeout: time.Second})
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.fault, got, tc.want)
			}
			var e *purramcp.Error
			if !errors.As(err, &e) {
				t.Errorf("%v: error %v, want one of type %T", tc.fault, err, &e)
			}
			if tc.fault == "silent" {
				if got := time.Since(start); got != time.Second {
					t.Errorf("time.Since(start) = %v, want %v", got, time.Second)
				}
			}
			lists, _ := h.counts()
			if lists != 1 {
				t.Errorf("%v: got %v, want %v", tc.fault, lists, 1)
			}
		})
	}
}

// TestBehaviorE4_MaxDescriptionBytes: the bound tool's 16-byte description
// is over 1.
func TestBehaviorE4_MaxDescriptionBytes(t *testing.T) {
	catalogLimitCase(t, "E4", purramcp.Limits{MaxDescriptionBytes: 1}, 1)
}

// TestDiscover_RequiredTaskDroppedByGoSDK documents a go-sdk behaviour: purra-mcp
// rejects a bound tool with execution.taskSupport "required"
// (mcp_tool_unsupported), but go-sdk v1.8.0 drops the execution field while
// decoding, so the adapter never sees it and the tool binds as the fixture.
func TestDiscover_RequiredTaskDroppedByGoSDK(t *testing.T) {
	f := loadMCPFixture(t)
	task := withField(t, f.Tool, "execution", map[string]any{"taskSupport": "required"})
	h := rawHarness(t, &rawServer{pages: []string{toolsPage(t, "", task)}})
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatalf("go-sdk drops execution.taskSupport: %v", err)
	}
	if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
		t.Errorf("catalog.Snapshot().RevisionDigest = %q, want %q", got, f.RevisionDigest)
	}
}

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

// TestDiscover_EmptyCursorEndsPaging: purra-mcp rejects a
// present but empty nextCursor. go-sdk decodes "nextCursor":"" and an absent
// nextCursor to the same empty string, so the adapter cannot tell them apart:
// paging ends and discovery succeeds on that page.
func TestDiscover_EmptyCursorEndsPaging(t *testing.T) {
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

// TestDiscover_CursorTooLong: a nextCursor over 512 UTF-8 bytes fails
// mcp_pagination_invalid before it is sent; 512 bytes is allowed.
func TestDiscover_CursorTooLong(t *testing.T) {
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

// TestDiscover_DuplicateNameAcrossPages: a remote name repeated on a later page,
// bound or not, fails mcp_name_conflict.
func TestDiscover_DuplicateNameAcrossPages(t *testing.T) {
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
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
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

// everythingServer is the pattern of @modelcontextprotocol/server-everything
// (and many servers built on the TypeScript SDK's McpServer): a go-sdk server
// that adds a tool from its InitializedHandler, so go-sdk announces
// notifications/tools/list_changed (10ms later) while the host's first
// discovery is running.
//
// With gated set the race is made deterministic: the client transport holds
// the notification back until the client has sent its first tools/list, and
// the server answers that first tools/list only once the client's monitor
// has counted the notification. The first discovery then always sees the
// change between its revision read and its first page.
//
// The session negotiates 2025-11-25: under 2026-07-28 there is no
// initialized notification, so no InitializedHandler runs.
type everythingServer struct {
	server  *mcp.Server
	monitor *purramcp.CatalogMonitor
	session *mcp.ClientSession

	mu    sync.Mutex
	lists int
}

func newEverythingServer(t *testing.T, gated bool) *everythingServer {
	t.Helper()
	f := loadMCPFixture(t)
	e := &everythingServer{monitor: purramcp.NewCatalogMonitor()}
	// counted closes once the monitor has counted a list change: the
	// monitor's handler counts before it calls the host's.
	counted := make(chan struct{})
	var countedOnce sync.Once
	hostOptions := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		countedOnce.Do(func() { close(counted) })
	}}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	e.server = mcp.NewServer(&mcp.Implementation{Name: "everything", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
			e.server.AddTool(sdkTool(t, withField(t, f.Tool, "name", "late.tool")), handler)
		},
	})
	e.server.AddTool(sdkTool(t, f.Tool), handler)
	e.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				e.mu.Lock()
				e.lists++
				first := e.lists == 1
				e.mu.Unlock()
				if gated && first {
					select { // until the client's monitor has counted the change
					case <-counted:
					case <-ctx.Done():
					}
				}
			}
			return next(ctx, method, req)
		}
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var transport mcp.Transport = ct
	if gated {
		transport = &gatedTransport{Transport: ct, listSent: make(chan struct{}), closed: make(chan struct{})}
	}
	client := e.monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, hostOptions)
	e.session, err = client.Connect(context.Background(), e.monitor.Transport(transport),
		&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.session.Close()
		_ = ss.Wait()
	})
	if err := e.monitor.Attach(e.session); err != nil {
		t.Fatalf("e.monitor.Attach(e.session): %v", err)
	}
	return e
}

func (e *everythingServer) listCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lists
}

// gatedTransport delays delivering notifications/tools/list_changed to the
// client until the client has written a tools/list request.
type gatedTransport struct {
	mcp.Transport
	listSent  chan struct{}
	closed    chan struct{}
	sentOnce  sync.Once
	closeOnce sync.Once
}

func (g *gatedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Connection: c, g: g}, nil
}

type gatedConn struct {
	mcp.Connection
	g *gatedTransport
}

func (c *gatedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" {
		c.g.sentOnce.Do(func() { close(c.g.listSent) })
	}
	return c.Connection.Write(ctx, msg)
}

func (c *gatedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == listChanged {
		select {
		case <-c.g.listSent:
		case <-c.g.closed:
		case <-ctx.Done():
		}
	}
	return msg, err
}

func (c *gatedConn) Close() error {
	c.g.closeOnce.Do(func() { close(c.g.closed) })
	return c.Connection.Close()
}

// TestStaleRetries_ServerEverythingPattern: a server that announces a list
// change right after initialization fails the first discovery
// mcp_catalog_stale without retries; with StaleRetries: 2 the host binds, on
// the second attempt, a catalog that saw no change.
func TestStaleRetries_ServerEverythingPattern(t *testing.T) {
	bindings := otherBinding()
	delete(bindings, "remote.other")
	bindings["late.tool"] = purramcp.ToolBinding{LocalName: "late", Scope: purramcp.Unscoped,
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Late"}}

	e := newEverythingServer(t, true)
	catalog, err := purramcp.DiscoverTools(t.Context(), e.session, "everything", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: e.monitor})
	if catalog != nil {
		t.Errorf("catalog = %v, want nil", catalog)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
		t.Errorf("without retries: got %q, want %q", got, purramcp.CodeCatalogStale)
	}
	if got := e.listCount(); got != 1 {
		t.Errorf("e.listCount() = %v, want %v", got, 1)
	}

	var events []purramcp.Event
	observe := func(_ context.Context, ev purramcp.Event) {
		if ev.Start.IsZero() {
			t.Errorf("ev.Start.IsZero() is true")
		}
		ev.Duration, ev.Start = 0, time.Time{}
		events = append(events, ev)
	}
	e = newEverythingServer(t, true)
	catalog, err = purramcp.DiscoverTools(t.Context(), e.session, "everything", bindings,
		purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: 2, Observer: observe})
	if err != nil {
		t.Fatalf("with StaleRetries: 2: %v", err)
	}
	if catalog.Stale() {
		t.Errorf("catalog.Stale() is true")
	}
	if got := e.listCount(); got != 2 {
		t.Errorf("one listing per attempt, no more: got %v, want %v", got, 2)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != 2 {
		t.Fatalf("the tool added after initialization is bound too: len = %d, want %d", got, 2)
	}
	res, err := regs[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	digest := catalog.Snapshot().RevisionDigest
	if got, want := events[:2], []purramcp.Event{
		{Kind: "discover", ServerID: "everything", Code: purramcp.CodeCatalogStale, Attempt: 1, Pages: 1,
			ProtocolVersion: "2025-11-25"},
		{Kind: "discover", ServerID: "everything", RevisionDigest: digest, Attempt: 2, Pages: 1,
			ProtocolVersion: "2025-11-25"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("events[:2] = %v, want %v", got, want)
	}

	// Ungated, the race goes either way; with retries it always binds.
	for range 3 {
		e := newEverythingServer(t, false)
		catalog, err := purramcp.DiscoverTools(t.Context(), e.session, "everything", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: 2})
		if err != nil {
			t.Fatal(err)
		}
		if catalog == nil {
			t.Errorf("catalog = nil, want non-nil")
		}
		if got := e.listCount(); got > 2 {
			t.Errorf("e.listCount() = %v, want <= %v", got, 2)
		}
	}
}

// TestStaleRetries_InspectCatalog: the inspector honours the option.
func TestStaleRetries_InspectCatalog(t *testing.T) {
	e := newEverythingServer(t, true)
	report, err := purramcp.InspectCatalog(t.Context(), e.session, "everything", purramcp.DiscoveryOptions{Monitor: e.monitor})
	if report != nil {
		t.Errorf("report = %v, want nil", report)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeCatalogStale)
	}

	e = newEverythingServer(t, true)
	report, err = purramcp.InspectCatalog(t.Context(), e.session, "everything",
		purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(report.Tools); got != 2 {
		t.Fatalf("len(report.Tools) = %d, want %d", got, 2)
	}
	if got, want := []string{report.Tools[0].Name, report.Tools[1].Name}, []string{"late.tool", "remote.search"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	catalog, err := purramcp.DiscoverTools(t.Context(), e.session, "everything", report.Bindings,
		purramcp.DiscoveryOptions{Monitor: e.monitor})
	if err != nil {
		t.Fatal(err)
	}
	if want := catalog.Snapshot().RevisionDigest; report.RevisionDigest != want {
		t.Errorf("report.RevisionDigest = %q, want %q", report.RevisionDigest, want)
	}

	for _, n := range []int{-1, 9} {
		_, err := purramcp.InspectCatalog(t.Context(), e.session, "everything", purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: n})
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("StaleRetries %d: got %q, want %q", n, got, purramcp.CodeBindingInvalid)
		}
	}
}

// TestStaleRetries_Range: 0..8, else mcp_binding_invalid before any request.
func TestStaleRetries_Range(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for _, n := range []int{-1, 9, 1 << 40} {
		catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: n})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("StaleRetries %d: got %q, want %q", n, got, purramcp.CodeBindingInvalid)
		}
	}
	lists, _ := h.counts()
	if lists != 0 {
		t.Errorf("lists = %v, want 0", lists)
	}
	for _, n := range []int{0, 1, 8} {
		_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: n})
		if err != nil {
			t.Errorf("StaleRetries %d: %v", n, err)
		}
	}
}

// TestStaleRetries_Exhausted: a server that changes on every attempt costs
// StaleRetries+1 listings, then fails mcp_catalog_stale.
func TestStaleRetries_Exhausted(t *testing.T) {
	f := loadMCPFixture(t)
	for _, retries := range []int{0, 2, 8} {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
		approvals := 0
		var attempts []int
		catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: retries,
			Approve: func(context.Context, purramcp.Snapshot) error {
				approvals++
				h.monitor.OnNotification(listChanged)
				return nil
			},
			Observer: func(_ context.Context, e purramcp.Event) { attempts = append(attempts, e.Attempt) }})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
			t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeCatalogStale)
		}
		if want := retries + 1; approvals != want {
			t.Errorf("approvals = %v, want %v", approvals, want)
		}
		lists, _ := h.counts()
		if want := retries + 1; lists != want {
			t.Errorf("lists = %v, want %v", lists, want)
		}
		want := make([]int, retries+1)
		for i := range want {
			want[i] = i + 1
		}
		if !reflect.DeepEqual(attempts, want) {
			t.Errorf("attempts = %v, want %v", attempts, want)
		}
	}
}

// TestStaleRetries_OnlyForListChanges: no other failure is retried, a
// canceled ctx included, and nothing is rediscovered after the return.
func TestStaleRetries_OnlyForListChanges(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id   string
		raw  *rawServer
		want string
	}{
		{"protocol_error", &rawServer{pages: []string{page("", string(f.Tool))}, listError: &jsonrpc.Error{Code: -32000, Message: secret}},
			purramcp.CodeProtocolError},
		{"pagination", &rawServer{pages: []string{page("p")}}, purramcp.CodePaginationInvalid},
		{"binding_missing", &rawServer{pages: []string{page("", otherTool)}}, purramcp.CodeBindingMissing},
		{"schema", &rawServer{pages: []string{page("", `{"name":"remote.search","inputSchema":{"type":"string"}}`)}}, purramcp.CodeSchemaUnsupported},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, tc.raw)
			_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: 8})
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, got, tc.want)
			}
			lists, _ := h.counts()
			if lists > 2 {
				t.Errorf("%s: one attempt: got %v, want <= %v", tc.id, lists, 2)
			} // pagination reads two pages
			if tc.id != "pagination" {
				if lists != 1 {
					t.Errorf("%v: got %v, want %v", tc.id, lists, 1)
				}
			}
		})
	}

	// A change, then a canceled ctx: the change would be retried, the
	// cancellation ends it.
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	ctx, cancel := context.WithCancel(t.Context())
	approvals := 0
	_, err := approving(t, ctx, h, purramcp.DiscoveryOptions{StaleRetries: 8, Approve: func(context.Context, purramcp.Snapshot) error {
		approvals++
		h.monitor.OnNotification(listChanged)
		cancel()
		return nil
	}})
	if !reflect.DeepEqual(err, purramcp.ErrCanceled) {
		t.Errorf("err = %v, want %v", err, purramcp.ErrCanceled)
	}
	if approvals != 1 {
		t.Errorf("approvals = %v, want %v", approvals, 1)
	}

	// After the return: the catalog turns stale and nothing is listed again.
	synctest.Test(t, func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		h := sdkHarness(t, srv, "")
		catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: 8})
		if err != nil {
			t.Fatal(err)
		}
		srv.MCP.AddTool(sdkTool(t, json.RawMessage(otherTool)), srv.call)
		awaitServerNotify()
		if !catalog.Stale() {
			t.Fatalf("catalog.Stale() is false")
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeCatalogStale {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeCatalogStale)
		}
		lists, calls := h.counts()
		if lists != 1 {
			t.Errorf("no implicit rediscovery: got %v, want %v", lists, 1)
		}
		if calls != 0 {
			t.Errorf("calls = %v, want 0", calls)
		}
	})
}
