package purramcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// discoverDefault runs the reference's default discovery.
func discoverDefault(t testing.TB, h sessionHarness, limits purramcp.Limits) (*purramcp.Catalog, error) {
	t.Helper()
	return purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
}

// TestBehaviorH_SharedBoundaryCases runs all 14 mcp_tools.json cases through
// discovery and Run at both negotiated versions (reference-behaviors.md §H).
func TestBehaviorH_SharedBoundaryCases(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range testVersions {
		for _, tc := range f.Cases {
			t.Run(version+"/"+tc.ID, func(t *testing.T) {
				runSharedCase(t, f, tc, version)
			})
		}
	}
}

func runSharedCase(t *testing.T, f mcpFixture, tc mcpCallCase, version string) {
	var limits purramcp.Limits
	if tc.Limits != nil {
		limits.MaxResultBytes, limits.MaxContentBlocks = tc.Limits.MaxResultBytes, tc.Limits.MaxContentBlocks
	}
	var h sessionHarness
	if tc.Malformed {
		raw := &rawServer{modern: version == purramcp.ProtocolVersion20260728,
			pages: []string{toolsPage(t, "", f.Tool)},
			call:  func(json.RawMessage) (string, *jsonrpcError) { return string(tc.Result), nil }}
		h = rawHarness(t, raw)
	} else {
		h = sdkHarness(t, newSDKServer(t, tc.Result, f.Tool), version)
	}
	require.Equal(t, version, h.monitor.ProtocolVersion(), "case %s", tc.ID)
	catalog, err := discoverDefault(t, h, limits)
	require.NoError(t, err, "case %s", tc.ID)
	regs := catalog.Registrations()
	require.Len(t, regs, 1)
	res, err := regs[0].Run(t.Context(), tc.Arguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
	require.NoError(t, err, "case %s", tc.ID)

	want := ""
	if tc.ErrorCode != nil {
		want = *tc.ErrorCode
	}
	assert.Equal(t, want, res.ErrorCode, "case %s", tc.ID)
	assert.Equal(t, "not_started", res.EffectState, "case %s", tc.ID)
	lists, calls := h.counts()
	assert.Equal(t, 1, lists, "case %s: tools/list requests", tc.ID)
	wantCalls := 1
	if want == "mcp_invalid_arguments" {
		wantCalls = 0
	}
	assert.Equal(t, wantCalls, calls, "case %s: tools/call requests", tc.ID)
	if want == "" {
		var result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(tc.Result, &result))
		text := []string{}
		for _, b := range result.Content {
			text = append(text, b.Text)
		}
		assert.Equal(t, purramcp.Envelope{Text: text, Structured: result.StructuredContent}, res.Content, "case %s", tc.ID)
		assert.Equal(t, decodeObject(t, tc.Arguments), decodeObject(t, h.lastArguments()), "case %s: arguments sent", tc.ID)
	} else {
		assert.Equal(t, emptyEnvelope, res.Content, "case %s", tc.ID)
	}
	assert.NoError(t, h.session.Ping(t.Context(), nil), "case %s: session left open", tc.ID)
}

// TestBehaviorF_SchemaCases checks that every mcp_tools.json schemaCase fails
// discovery before any call (reference-behaviors.md F6–F12).
func TestBehaviorF_SchemaCases(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range testVersions {
		for _, tc := range f.SchemaCases {
			t.Run(version+"/"+tc.ID, func(t *testing.T) {
				h := sdkHarness(t, newSDKServer(t, nil, tc.Tool), version)
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				assert.Nil(t, catalog)
				assert.Equal(t, tc.ErrorCode, purramcp.CodeOf(err), "case %s", tc.ID)
				lists, calls := h.counts()
				assert.Equal(t, 1, lists, "case %s", tc.ID)
				assert.Equal(t, 0, calls, "case %s", tc.ID)
			})
		}
	}
}

// TestBehaviorF13_SchemaBytesIncludeDialect: 74 compact bytes with the
// declaration (17 without) against maxSchemaBytes 60.
func TestBehaviorF13_SchemaBytesIncludeDialect(t *testing.T) {
	tool := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema"}}`)
	for _, version := range testVersions {
		h := sdkHarness(t, newSDKServer(t, nil, tool), version)
		_, err := discoverDefault(t, h, purramcp.Limits{MaxSchemaBytes: 60})
		assert.Equal(t, "mcp_schema_unsupported", purramcp.CodeOf(err), version)
		_, calls := h.counts()
		assert.Zero(t, calls)
	}
}

// TestBehaviorG4_FixtureDigest checks the snapshot shape and digest, the
// 2025-11-25 digest being the fixture's (reference-behaviors.md G1, G2, G4).
func TestBehaviorG4_FixtureDigest(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			snap := catalog.Snapshot()
			if version == purramcp.ProtocolVersion20251125 {
				assert.Equal(t, f.RevisionDigest, snap.RevisionDigest)
			} else {
				assert.NotEqual(t, f.RevisionDigest, snap.RevisionDigest, "the version is in the identity")
			}
			tool := decodeObject(t, f.Tool)
			want := map[string]any{"schemaVersion": 1.0, "serverId": "fixture", "protocolVersion": version,
				"revisionDigest": snap.RevisionDigest, "entries": []any{map[string]any{
					"remoteName": "remote.search", "localName": "search", "description": "Search documents",
					"inputSchema": tool["inputSchema"], "outputSchema": tool["outputSchema"],
					"policy":          map[string]any{"mode": "read", "title": "Search", "riskLevel": "read"},
					"concurrencySafe": true}}}
			got, err := json.Marshal(snap)
			require.NoError(t, err)
			assert.Equal(t, want, decodeObject(t, got))
			delete(want, "revisionDigest")
			digest, err := purramcp.IdentityDigest(want)
			require.NoError(t, err)
			assert.Equal(t, digest, snap.RevisionDigest, "digest of the snapshot minus revisionDigest")
			assert.True(t, catalog.Registrations()[0].ConcurrencySafe)
		})
	}
}

// TestBehaviorG7_DeclaredDialect covers the declared 2020-12 dialect
// (reference-behaviors.md F2, G7, H17, H18).
func TestBehaviorG7_DeclaredDialect(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			srv := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), f.DeclaredDialectTool)
			h := sdkHarness(t, srv, version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			snap := catalog.Snapshot()
			const dialect = "https://json-schema.org/draft/2020-12/schema"
			assert.Equal(t, dialect, snap.Entries[0].InputSchema["$schema"])
			assert.Equal(t, dialect, snap.Entries[0].OutputSchema["$schema"])
			if version == purramcp.ProtocolVersion20251125 {
				assert.Equal(t, "4f50042f2d82970db42ef5e7437557a2722ec73e5b2d700c035538493dd0448c", snap.RevisionDigest)
			}
			reg := catalog.Registrations()[0]
			assert.NotContains(t, reg.InputSchema, "$schema")
			assert.NotContains(t, reg.ArgumentContract.Schema(), "$schema")

			res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"too long"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, "mcp_invalid_arguments", res.ErrorCode)
			_, calls := h.counts()
			assert.Equal(t, 0, calls)

			res, err = reg.Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}}, res.Content)

			srv.mu.Lock()
			srv.result = json.RawMessage(`{"content":[],"structuredContent":{"count":"wrong"}}`)
			srv.mu.Unlock()
			res, err = reg.Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, "mcp_result_invalid", res.ErrorCode)
			_, calls = h.counts()
			assert.Equal(t, 2, calls)
		})
	}
}

// TestBehaviorD1_PaginationSkipsUnbound: cursors [none, "next"]; the unbound
// tool's $ref schema is never compiled and not in the digest (D1, G4).
func TestBehaviorD1_PaginationSkipsUnbound(t *testing.T) {
	f := loadMCPFixture(t)
	unbound := json.RawMessage(`{"name":"unbound","inputSchema":{"type":"object","$ref":"https://example.invalid/private"}}`)
	for _, modern := range []bool{false, true} {
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
	}
}

// TestBehaviorD2_RepeatedCursor: the same cursor twice fails.
func TestBehaviorD2_RepeatedCursor(t *testing.T) {
	raw := &rawServer{pages: []string{toolsPage(t, "again")}}
	h := rawHarness(t, raw)
	_, err := discoverDefault(t, h, purramcp.Limits{})
	assert.Equal(t, "mcp_pagination_invalid", purramcp.CodeOf(err))
	lists, calls := h.counts()
	assert.Equal(t, 2, lists)
	assert.Zero(t, calls)
}

func TestDiscover_CursorTooLong(t *testing.T) {
	raw := &rawServer{pages: []string{toolsPage(t, strings.Repeat("c", 513))}}
	_, err := discoverDefault(t, rawHarness(t, raw), purramcp.Limits{})
	assert.Equal(t, "mcp_pagination_invalid", purramcp.CodeOf(err))

	raw = &rawServer{pages: []string{toolsPage(t, strings.Repeat("c", 512)), toolsPage(t, "", loadMCPFixture(t).Tool)}}
	_, err = discoverDefault(t, rawHarness(t, raw), purramcp.Limits{})
	assert.NoError(t, err, "512 bytes is allowed")
}

// TestBehaviorE_CatalogLimits (reference-behaviors.md E1–E4).
func TestBehaviorE_CatalogLimits(t *testing.T) {
	f := loadMCPFixture(t)
	other := json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`)
	for _, tc := range []struct {
		id        string
		limits    purramcp.Limits
		wantLists int
	}{
		{"E1_maxPages", purramcp.Limits{MaxPages: 1}, 1},
		{"E2_maxTools", purramcp.Limits{MaxTools: 1}, 2},
		{"E3_maxCatalogBytes", purramcp.Limits{MaxCatalogBytes: 64}, 1},
		{"E4_maxDescriptionBytes", purramcp.Limits{MaxDescriptionBytes: 1}, 1},
	} {
		t.Run(tc.id, func(t *testing.T) {
			raw := &rawServer{pages: []string{toolsPage(t, "next", f.Tool), toolsPage(t, "", other)}}
			h := rawHarness(t, raw)
			_, err := discoverDefault(t, h, tc.limits)
			assert.Equal(t, "mcp_catalog_limit_exceeded", purramcp.CodeOf(err))
			lists, calls := h.counts()
			assert.Equal(t, tc.wantLists, lists)
			assert.Zero(t, calls)
		})
	}
}

func TestDiscover_CatalogRejects(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id    string
		pages []string
		want  string
	}{
		{"duplicate", []string{toolsPage(t, "", f.Tool, f.Tool)}, "mcp_name_conflict"},
		{"duplicate_across_pages", []string{toolsPage(t, "p2", f.Tool), toolsPage(t, "", f.Tool)}, "mcp_name_conflict"},
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

func TestDiscover_ToolsUnavailable(t *testing.T) {
	for _, modern := range []bool{false, true} {
		h := rawHarness(t, &rawServer{modern: modern, noTools: true, pages: []string{toolsPage(t, "")}})
		_, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Equal(t, "mcp_tools_unavailable", purramcp.CodeOf(err))
		lists, _ := h.counts()
		assert.Zero(t, lists)
	}
}

// TestBehaviorA_Bindings covers binding validation before any request
// (reference-behaviors.md A1, A2, §5.1–5.4).
func TestBehaviorA_Bindings(t *testing.T) {
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
		{"A1_write_mode", with(func(b *purramcp.ToolBinding) { b.Policy.Mode = "write" }), purramcp.Limits{}, "fixture", "mcp_binding_invalid"},
		{"A2_duplicate_local", map[string]purramcp.ToolBinding{"remote.search": ok, "other": ok}, purramcp.Limits{}, "fixture", "mcp_name_conflict"},
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

// TestBehaviorG3_SnapshotImmutable: changing returned values changes nothing.
func TestBehaviorG3_SnapshotImmutable(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	before, err := json.Marshal(catalog.Snapshot())
	require.NoError(t, err)
	snap := catalog.Snapshot()
	snap.Entries[0].InputSchema["required"].([]any)[0] = "changed"
	snap.Entries[0].OutputSchema["type"] = "array"
	snap.Entries[0].LocalName = "x"
	regs := catalog.Registrations()
	regs[0].InputSchema["type"] = "array"
	regs[0].Name = "x"
	after, err := json.Marshal(catalog.Snapshot())
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after))
	assert.Equal(t, "search", catalog.Registrations()[0].Name)
	assert.Equal(t, "object", catalog.Registrations()[0].InputSchema["type"])
}

// TestBehaviorG6_OrderIndependence (reference-behaviors.md G6).
func TestBehaviorG6_OrderIndependence(t *testing.T) {
	f := loadMCPFixture(t)
	other := withField(t, f.Tool, "name", "remote.other")
	changed := withField(t, f.Tool, "description", "Changed description")
	bindings := searchBinding()
	bindings["remote.other"] = purramcp.ToolBinding{LocalName: "another",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Other"}, Scope: purramcp.Unscoped}
	var digests []string
	for _, page := range []string{toolsPage(t, "", f.Tool, other), toolsPage(t, "", other, f.Tool), toolsPage(t, "", other, changed)} {
		h := rawHarness(t, &rawServer{pages: []string{page}})
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		require.NoError(t, err)
		var names []string
		for _, r := range catalog.Registrations() {
			names = append(names, r.Name)
		}
		assert.Equal(t, []string{"another", "search"}, names)
		digests = append(digests, catalog.Snapshot().RevisionDigest)
	}
	assert.Equal(t, "d2e792eb8724832f433b1bf5ecd9822cf58dc58afe9ce13cc2761a7eebd68d5d", digests[0])
	assert.Equal(t, digests[0], digests[1])
	assert.Equal(t, "75f2bc87bfa454d5200c2ab8685281645c6d733cb87c177d47d73b5693f750f3", digests[2])
}

// TestBehaviorF3_TextOnlyTool: no output schema → outputSchema null (F3, H15).
func TestBehaviorF3_TextOnlyTool(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	srv := newSDKServer(t, json.RawMessage(`{"content":[{"type":"text","text":"{\"count\":3}"}]}`), tool)
	h := sdkHarness(t, srv, purramcp.ProtocolVersion20251125)
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	snap := catalog.Snapshot()
	assert.Nil(t, snap.Entries[0].OutputSchema)
	assert.Equal(t, "9828c43572192bfbeca54e94830f6658f448945c066240f375fa4d978d043e3f", snap.RevisionDigest)
	b, err := json.Marshal(snap.Entries[0])
	require.NoError(t, err)
	assert.Contains(t, decodeObject(t, b), "outputSchema")
	assert.Nil(t, decodeObject(t, b)["outputSchema"])

	res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.Envelope{Text: []string{`{"count":3}`}}, res.Content)
	assert.Empty(t, res.ErrorCode)
}

// TestBehaviorC3_ClosedMonitor: discovery on a closed monitor sends nothing,
// and a catalog turns stale (C3, C4).
func TestBehaviorC3_ClosedMonitor(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	assert.False(t, catalog.Stale())
	h.monitor.Close()
	assert.True(t, catalog.Stale())
	_, err = discoverDefault(t, h, purramcp.Limits{})
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(err))
	lists, _ := h.counts()
	assert.Equal(t, 1, lists)
}

func TestDiscover_MonitorStates(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)

	fresh := purramcp.NewCatalogMonitor()
	_, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: fresh})
	assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(err))

	other := purramcp.NewCatalogMonitor()
	require.NoError(t, other.AcceptProtocolVersion(purramcp.ProtocolVersion20250618))
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: other})
	assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err), "monitor version differs from the session's")

	h2 := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h2.monitor})
	assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "monitor attached to another session")

	lists, _ := h.counts()
	assert.Zero(t, lists)
}

// TestBehaviorJ1_CanceledDiscovery: a done ctx sends nothing.
func TestBehaviorJ1_CanceledDiscovery(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	ctx, cancel := contextWithCancel(t)
	cancel()
	catalog, err := purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h.monitor})
	assert.Nil(t, catalog)
	assert.ErrorIs(t, err, purramcp.ErrCanceled)
	assert.ErrorIs(t, err, errContextCanceled)
	lists, _ := h.counts()
	assert.Zero(t, lists)
}

// TestBehaviorK1_ListChangedMakesStale, then rediscovery gives the same
// digest (K1, G5).
func TestBehaviorK1_ListChangedMakesStale(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			srv := newSDKServer(t, nil, f.Tool)
			h := sdkHarness(t, srv, version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			srv.server.AddTool(sdkTool(t, f.Tool), srv.call) // re-adding counts as a change
			require.Eventually(t, catalog.Stale, waitFor, tick)
			res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, "mcp_catalog_stale", res.ErrorCode)
			assert.Equal(t, emptyEnvelope, res.Content)
			_, calls := h.counts()
			assert.Zero(t, calls)
			again, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			assert.False(t, again.Stale())
			assert.Equal(t, catalog.Snapshot().RevisionDigest, again.Snapshot().RevisionDigest)
		})
	}
}

// TestBehaviorK2_ListChangedDuringList: go-sdk does not order the
// notification against the reply (adapter.md §9), so discovery either fails
// stale or returns a catalog that ends up stale.
func TestBehaviorK2_ListChangedDuringList(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			h := rawHarness(t, &rawServer{modern: modern, changedBeforeList: true, pages: []string{toolsPage(t, "", f.Tool)}})
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			if err != nil {
				assert.Equal(t, "mcp_catalog_stale", purramcp.CodeOf(err))
				return
			}
			require.Eventually(t, catalog.Stale, waitFor, tick)
		})
	}
}
