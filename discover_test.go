package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
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

// TestGap6_ToolsUnavailable: a server without the tools capability fails
// mcp_tools_unavailable before any request.
func TestGap6_ToolsUnavailable(t *testing.T) {
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

// TestGap5_NotInitialized: a monitor that accepted no protocol version fails
// mcp_not_initialized before any request.
func TestGap5_NotInitialized(t *testing.T) {
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
