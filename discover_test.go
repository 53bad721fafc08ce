package purramcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			require.NoError(t, err, "A4 %s at %s", name, version)
			snap, err := json.Marshal(catalog.Snapshot())
			require.NoError(t, err)
			assert.NotContains(t, string(snap), "annotations", "A4 %s at %s", name, version)
			assert.NotContains(t, string(snap), "Hint", "A4 %s at %s", name, version)
			digests[name] = catalog.Snapshot().RevisionDigest
		}
		assert.Equal(t, digests["fixture"], digests["read_only"], "A4 at %s", version)
		assert.Equal(t, digests["fixture"], digests["none"], "A4 at %s", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, f.RevisionDigest, digests["fixture"], "A4: fixture digest")
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
			assert.Nil(t, catalog)
			assert.Equal(t, tc.want, purramcp.CodeOf(err))
			_, calls := h.counts()
			assert.Zero(t, calls)
		})
	}
}

// TestGap6_ToolsUnavailable: a server without the tools capability fails
// mcp_tools_unavailable before any request.
func TestGap6_ToolsUnavailable(t *testing.T) {
	for _, modern := range modernities {
		h := rawHarness(t, &rawServer{modern: modern, noTools: true, pages: []string{toolsPage(t, "")}})
		_, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Equal(t, purramcp.CodeToolsUnavailable, purramcp.CodeOf(err), "raw modern=%v", modern)
		lists, _ := h.counts()
		assert.Zero(t, lists, "raw modern=%v", modern)
	}
	forEachVersion(t, func(t *testing.T, version string) {
		// A go-sdk server with no tool and no tools capability advertises none.
		server := mcp.NewServer(&mcp.Implementation{Name: "toolless", Version: "1"}, nil)
		cs, monitor := connectSDK(t, server, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: monitor})
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodeToolsUnavailable, purramcp.CodeOf(err), "go-sdk server at %s", version)
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
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodeNotInitialized, purramcp.CodeOf(err), version)
		fresh.OnNotification("notifications/tools/list_changed")
		_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: fresh})
		assert.Equal(t, purramcp.CodeNotInitialized, purramcp.CodeOf(err), "%s: not initialized before stale", version)
		lists, _ := h.counts()
		assert.Zero(t, lists, version)
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
		require.NoError(t, err)
		snap := first.Snapshot()
		snap.Entries[0].InputSchema["type"] = "array"
		second, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		lists, _ := h.counts()
		assert.Equal(t, 1, lists, "the second discovery was served from go-sdk's cache")
		before, err := json.Marshal(first.Snapshot())
		require.NoError(t, err)
		after, err := json.Marshal(second.Snapshot())
		require.NoError(t, err)
		assert.JSONEq(t, string(before), string(after), "same catalog from the shared cached result")

		raw.notifyChanged()
		synctest.Wait()
		require.True(t, second.Stale())
		third, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		lists, _ = h.counts()
		assert.Equal(t, 2, lists, "the list change invalidated the cache")
		assert.Equal(t, first.Snapshot().RevisionDigest, third.Snapshot().RevisionDigest)
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
		require.Equal(t, 1, lists)
		cancel()
		err := <-done
		assert.ErrorIs(t, err, purramcp.ErrCanceled)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, purramcp.CodeOf(err))
		assert.NoError(t, h.session.Ping(t.Context(), nil))
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
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodeBindingMissing, purramcp.CodeOf(err), "modern=%v", modern)
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
		assert.Nil(t, catalog)
		assert.ErrorIs(t, err, purramcp.ErrCanceled, "J1 at %s", version)
		assert.ErrorIs(t, err, errContextCanceled, "J1 at %s", version)
		lists, _ := h.counts()
		assert.Zero(t, lists, "J1 at %s", version)
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
			assert.Nil(t, catalog)
			assert.Equal(t, tc.want, purramcp.CodeOf(err), tc.fault)
			var e *purramcp.Error
			assert.ErrorAs(t, err, &e, tc.fault)
			if tc.fault == "silent" {
				assert.Equal(t, time.Second, time.Since(start))
			}
			lists, _ := h.counts()
			assert.Equal(t, 1, lists, tc.fault)
		})
	}
}
