package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// discoverDefault runs the reference's default discovery.
func discoverDefault(t testing.TB, h sessionHarness, limits purramcp.Limits) (*purramcp.Catalog, error) {
	t.Helper()
	return purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
}

// modernities are both raw-server handshakes: initialize (2025-11-25) and
// server/discover (2026-07-28).
var modernities = []bool{false, true}

// TestBehaviorA1_NonReadPolicy: a policy mode other than "read" (TS "write",
// Py "propose") fails mcp_binding_invalid before any request.
func TestBehaviorA1_NonReadPolicy(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for _, mode := range []string{"write", "propose", "confirm", "", "READ", " read"} {
		bindings := searchBinding()
		b := bindings["remote.search"]
		b.Policy = purramcp.ToolPolicy{Mode: mode, Title: "Write"}
		bindings["remote.search"] = b
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		assert.Nil(t, catalog, "mode %q", mode)
		assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "mode %q", mode)
	}
	lists, _ := h.counts()
	assert.Zero(t, lists, "A1: no tools/list sent")
}

// TestBehaviorA2_DuplicateLocalName: two bindings with one local name fail
// mcp_name_conflict before any request, whatever the map order.
func TestBehaviorA2_DuplicateLocalName(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	b := searchBinding()["remote.search"]
	for _, bindings := range []map[string]purramcp.ToolBinding{
		{"remote.search": b, "other": b},
		{"remote.search": b, "a.first": b},
	} {
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		assert.Nil(t, catalog)
		assert.Equal(t, "mcp_name_conflict", purramcp.CodeOf(err), "A2 bindings %v", len(bindings))
	}
	lists, _ := h.counts()
	assert.Zero(t, lists, "A2: lists stays empty")
}

// TestBehaviorA3_BindingsCopied: changing the bindings afterwards changes nothing.
func TestBehaviorA3_BindingsCopied(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	bindings := searchBinding()
	b := bindings["remote.search"]
	b.Policy.Title = "  Search\n"
	bindings["remote.search"] = b
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
		purramcp.DiscoveryOptions{Monitor: h.monitor})
	require.NoError(t, err)
	b.LocalName = "mutated"
	bindings["remote.search"] = b
	delete(bindings, "remote.search")
	assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest, "title stored trimmed")
	regs := catalog.Registrations()
	require.Len(t, regs, 1)
	assert.Equal(t, "search", regs[0].Name)
	assert.Equal(t, "Search", regs[0].Policy.Title)
}

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

// TestGap3_BindingValidation covers binding, server id and limit validation
// before any request (reference-behaviors.md §5.1–5.4, adapter.md §3.1–3.3).
func TestGap3_BindingValidation(t *testing.T) {
	f := loadMCPFixture(t)
	ok := searchBinding()["remote.search"]
	with := func(edit func(*purramcp.ToolBinding)) map[string]purramcp.ToolBinding {
		b := ok
		edit(&b)
		return map[string]purramcp.ToolBinding{"remote.search": b}
	}
	for _, tc := range []struct {
		id       string
		bindings map[string]purramcp.ToolBinding
		limits   purramcp.Limits
		serverID string
		want     string
	}{
		{"nil_bindings", nil, purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"no_bindings", map[string]purramcp.ToolBinding{}, purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"more_than_maxTools", map[string]purramcp.ToolBinding{"a": ok, "b": with(func(b *purramcp.ToolBinding) { b.LocalName = "b" })["remote.search"]}, purramcp.Limits{MaxTools: 1}, "fixture", "mcp_binding_invalid"},
		{"bad_server_id", searchBinding(), purramcp.Limits{}, "bad id", "mcp_binding_invalid"},
		{"long_server_id", searchBinding(), purramcp.Limits{}, strings.Repeat("s", 129), "mcp_binding_invalid"},
		{"bad_remote_name", map[string]purramcp.ToolBinding{"remote search": ok}, purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"bad_local_name", with(func(b *purramcp.ToolBinding) { b.LocalName = "1search" }), purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"long_local_name", with(func(b *purramcp.ToolBinding) { b.LocalName = strings.Repeat("s", 65) }), purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"risk_write", with(func(b *purramcp.ToolBinding) { b.Policy.RiskLevel = "write" }), purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"blank_title", with(func(b *purramcp.ToolBinding) { b.Policy.Title = " \t\u00a0\ufeff\u2028" }), purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"nil_scope", with(func(b *purramcp.ToolBinding) { b.Scope = nil }), purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"bad_limits", searchBinding(), purramcp.Limits{MaxPages: 33}, "fixture", "mcp_binding_invalid"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, tc.serverID, tc.bindings,
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.limits})
			assert.Nil(t, catalog)
			assert.Equal(t, tc.want, purramcp.CodeOf(err), tc.id)
			lists, _ := h.counts()
			assert.Zero(t, lists, "%s: nothing sent", tc.id)
		})
	}
	_, err := purramcp.DiscoverTools(t.Context(), nil, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: purramcp.NewCatalogMonitor()})
	assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "nil session")
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{})
	assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "nil monitor")
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
		require.NoError(t, err)
		require.Len(t, catalog.Registrations(), 1)
		cursors := raw.seenCursors()
		require.Len(t, cursors, 2)
		assert.Nil(t, cursors[0], "the first request carries no cursor")
		require.NotNil(t, cursors[1])
		assert.Equal(t, "next", *cursors[1])
		if !modern {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest)
		}
		_, calls := h.counts()
		assert.Zero(t, calls, "D1 modern=%v", modern)
	}
}

// TestBehaviorD2_RepeatedCursor: the same cursor twice fails.
func TestBehaviorD2_RepeatedCursor(t *testing.T) {
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "again")}}
		h := rawHarness(t, raw)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Equal(t, "mcp_pagination_invalid", purramcp.CodeOf(err), "D2 modern=%v", modern)
		lists, calls := h.counts()
		assert.Equal(t, 2, lists, "D2 modern=%v", modern)
		assert.Zero(t, calls, "D2 modern=%v", modern)
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
			require.NoError(t, err)
			assert.Empty(t, res.ErrorCode, "D3 at %s", version)
		}
		lists, calls := h.counts()
		assert.Equal(t, 1, lists, "D3 at %s: tools/list requests", version)
		assert.Equal(t, 3, calls, "D3 at %s: tools/call requests", version)
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
		assert.Nil(t, catalog)
		assert.Equal(t, "mcp_pagination_invalid", purramcp.CodeOf(err), "modern=%v", modern)
		lists, calls := h.counts()
		assert.Equal(t, 3, lists, "modern=%v", modern)
		assert.Zero(t, calls)
		cursors := raw.seenCursors()
		require.Len(t, cursors, 3)
		assert.Nil(t, cursors[0])
		assert.Equal(t, []string{"A", "B"}, []string{*cursors[1], *cursors[2]})
	}
}

// TestGap7_EmptyCursor (reference-behaviors.md §5.7): purra-mcp rejects a
// present but empty nextCursor. go-sdk decodes "nextCursor":"" and an absent
// nextCursor to the same empty string, so the adapter cannot tell them apart:
// paging ends and discovery succeeds on that page (adapter.md §3.6, §9).
func TestGap7_EmptyCursor(t *testing.T) {
	f := loadMCPFixture(t)
	page := `{"tools":[` + string(f.Tool) + `],"nextCursor":""}`
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{page, toolsPage(t, "")}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err, "empty cursor ends paging, modern=%v", modern)
		assert.Len(t, catalog.Registrations(), 1)
		lists, _ := h.counts()
		assert.Equal(t, 1, lists, "no second request, modern=%v", modern)
		if !modern {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest)
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
		assert.Zero(t, calls, tc.id)
		if tc.ok {
			assert.NoError(t, err, "%s is allowed", tc.id)
			assert.Equal(t, 2, lists, tc.id)
			continue
		}
		assert.Equal(t, "mcp_pagination_invalid", purramcp.CodeOf(err), tc.id)
		assert.Equal(t, 1, lists, "%s: the cursor is never sent", tc.id)
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
				assert.Nil(t, catalog)
				assert.Equal(t, "mcp_name_conflict", purramcp.CodeOf(err), "%s modern=%v", tc.id, modern)
				lists, calls := h.counts()
				assert.Equal(t, 2, lists, "%s modern=%v", tc.id, modern)
				assert.Zero(t, calls)
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
			assert.Nil(t, catalog)
			assert.Equal(t, "mcp_catalog_limit_exceeded", purramcp.CodeOf(err), tc.id)
			lists, calls := h.counts()
			assert.Equal(t, tc.wantLists, lists, tc.id)
			assert.Zero(t, calls, tc.id)
		})
	}
}

// catalogLimitCase runs one §E row: pages [tool + "next", other] under
// limits fail mcp_catalog_limit_exceeded after wantLists requests.
func catalogLimitCase(t *testing.T, id string, limits purramcp.Limits, wantLists int) {
	f := loadMCPFixture(t)
	other := json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "next", f.Tool), toolsPage(t, "", other)}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, limits)
		assert.Nil(t, catalog)
		assert.Equal(t, "mcp_catalog_limit_exceeded", purramcp.CodeOf(err), "%s modern=%v", id, modern)
		lists, calls := h.counts()
		assert.Equal(t, wantLists, lists, "%s modern=%v: tools/list requests", id, modern)
		assert.Zero(t, calls, "%s modern=%v", id, modern)
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

// TestBehaviorE4_MaxDescriptionBytes: the bound tool's 16-byte description
// is over 1.
func TestBehaviorE4_MaxDescriptionBytes(t *testing.T) {
	catalogLimitCase(t, "E4", purramcp.Limits{MaxDescriptionBytes: 1}, 1)
}

// TestDiscover_CatalogRejects covers the remaining "catalog rejects" cases
// (reference-behaviors.md §4) and non-object schemas.
func TestDiscover_CatalogRejects(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id    string
		pages []string
		want  string
	}{
		{"duplicate", []string{toolsPage(t, "", f.Tool, f.Tool)}, "mcp_name_conflict"},
		{"missing", []string{toolsPage(t, "")}, "mcp_binding_missing"},
		{"input_not_object", []string{`{"tools":[{"name":"remote.search","inputSchema":true}]}`}, "mcp_schema_unsupported"},
		{"output_not_object", []string{`{"tools":[{"name":"remote.search","inputSchema":{"type":"object"},"outputSchema":[1]}]}`}, "mcp_schema_unsupported"},
		{"dialect_not_string", []string{`{"tools":[{"name":"remote.search","inputSchema":{"type":"object","$schema":1}}]}`}, "mcp_schema_unsupported"},
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

// TestDiscover_RequiredTaskDroppedByGoSDK documents adapter.md §9: purra-mcp
// rejects a bound tool with execution.taskSupport "required"
// (mcp_tool_unsupported), but go-sdk v1.8.0 drops the execution field while
// decoding, so the adapter never sees it and the tool binds as the fixture.
func TestDiscover_RequiredTaskDroppedByGoSDK(t *testing.T) {
	f := loadMCPFixture(t)
	task := withField(t, f.Tool, "execution", map[string]any{"taskSupport": "required"})
	h := rawHarness(t, &rawServer{pages: []string{toolsPage(t, "", task)}})
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err, "go-sdk drops execution.taskSupport")
	assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest)
}

// TestGap6_ToolsUnavailable: a server without the tools capability fails
// mcp_tools_unavailable before any request (reference-behaviors.md §5.6).
func TestGap6_ToolsUnavailable(t *testing.T) {
	for _, modern := range modernities {
		h := rawHarness(t, &rawServer{modern: modern, noTools: true, pages: []string{toolsPage(t, "")}})
		_, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Equal(t, "mcp_tools_unavailable", purramcp.CodeOf(err), "raw modern=%v", modern)
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
		assert.Equal(t, "mcp_tools_unavailable", purramcp.CodeOf(err), "go-sdk server at %s", version)
	})
}

// TestGap5_NotInitialized: a monitor that accepted no protocol version fails
// mcp_not_initialized before any request (reference-behaviors.md §5.5).
func TestGap5_NotInitialized(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		fresh := purramcp.NewCatalogMonitor()
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: fresh})
		assert.Nil(t, catalog)
		assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(err), version)
		fresh.OnNotification("notifications/tools/list_changed")
		_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: fresh})
		assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(err), "%s: not initialized before stale", version)
		lists, _ := h.counts()
		assert.Zero(t, lists, version)
	})
}

// TestDiscover_TTLCache: under 2026-07-28 go-sdk serves tools/list from its
// TTL cache, sharing its result with every caller (gosdk-notes §2). A second
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

// TestDiscover_InvalidHeaderToolDroppedByGoSDK documents adapter.md §9:
// go-sdk silently drops a tool whose input schema carries an invalid
// x-mcp-header annotation, at every version, so a bound one fails
// mcp_binding_missing.
func TestDiscover_InvalidHeaderToolDroppedByGoSDK(t *testing.T) {
	tool := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}`)
	for _, modern := range modernities {
		h := rawHarness(t, &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)}})
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Nil(t, catalog)
		assert.Equal(t, "mcp_binding_missing", purramcp.CodeOf(err), "modern=%v", modern)
	}
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
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &decoded))
			tool.InputSchema = decoded
		}
	}
	pages := []*mcp.ListToolsResult{{Tools: tools}, {Tools: tools[:1], NextCursor: "c1"}, {}, {Tools: []*mcp.Tool{}}}
	for i, page := range pages {
		want, err := jssize.Size(page)
		require.NoError(t, err)
		got, schemaSizes, err := purramcp.PageSize(page, math.MaxInt)
		require.NoError(t, err)
		assert.Equal(t, want, got, "page %d", i)
		for _, limit := range []int{0, want / 2, want - 1, want} {
			n, _, err := purramcp.PageSize(page, limit)
			require.NoError(t, err)
			assert.Equal(t, want > limit, n > limit, "page %d under limit %d: %d", i, limit, n)
			if want <= limit {
				assert.Equal(t, want, n, "page %d at limit %d", i, limit)
			}
		}
		require.Len(t, schemaSizes, len(page.Tools), "page %d", i)
		for j, tool := range page.Tools {
			var wantSchemas [2]int
			if tool != nil {
				for k, schema := range []any{tool.InputSchema, tool.OutputSchema} {
					if schema != nil {
						wantSchemas[k], err = jssize.Size(schema)
						require.NoError(t, err)
					}
				}
			}
			assert.Equal(t, wantSchemas, schemaSizes[j], "page %d, tool %d: schema sizes", i, j)
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
			cs, monitor, closeSession, err := interleaveConnect(server, "", true)
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
	for _, tc := range []struct{ fault, want string }{{"silent", "mcp_timeout"}, {"close", "mcp_transport_error"}} {
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
