package purramcp_test

import (
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// Snapshot, identity and digest: the snapshot's shape, its immutability and
// a revisionDigest that depends on the catalog, never on order or time.

// TestBehaviorG1_SnapshotShape: schemaVersion, serverId, protocolVersion,
// revisionDigest and entries (sorted by localName) with the exact entry
// fields; the digest is that of the snapshot minus revisionDigest.
func TestBehaviorG1_SnapshotShape(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			snap := catalog.Snapshot()
			tool := decodeObject(t, f.Tool)
			want := map[string]any{"schemaVersion": 1.0, "serverId": "fixture", "protocolVersion": version,
				"revisionDigest": snap.RevisionDigest, "entries": []any{map[string]any{
					"remoteName": "remote.search", "localName": "search", "description": "Search documents",
					"inputSchema": tool["inputSchema"], "outputSchema": tool["outputSchema"],
					"policy":          map[string]any{"mode": "read", "title": "Search", "riskLevel": "read"},
					"concurrencySafe": true}}}
			got, err := json.Marshal(snap)
			require.NoError(t, err)
			assert.Equal(t, want, decodeObject(t, got), "G1 at %s", version)
			delete(want, "revisionDigest")
			digest, err := purramcp.IdentityDigest(want)
			require.NoError(t, err)
			assert.Equal(t, digest, snap.RevisionDigest, "G1 at %s: digest of the snapshot minus revisionDigest", version)

			other := withField(t, f.Tool, "name", "remote.other")
			h2 := rawHarness(t, &rawServer{modern: version == purramcp.ProtocolVersion20260728,
				pages: []string{toolsPage(t, "", f.Tool, other)}})
			two, err := purramcp.DiscoverTools(t.Context(), h2.session, "fixture", otherBinding(),
				purramcp.DiscoveryOptions{Monitor: h2.monitor})
			require.NoError(t, err)
			entries := two.Snapshot().Entries
			require.Len(t, entries, 2)
			assert.Equal(t, []string{"another", "search"}, []string{entries[0].LocalName, entries[1].LocalName},
				"G1 at %s: entries sorted by localName", version)
		})
	}
}

// TestBehaviorG2_ReadPolicyAndConcurrency: every entry's policy is
// {read, title, read}; concurrencySafe comes from the binding (default false).
func TestBehaviorG2_ReadPolicyAndConcurrency(t *testing.T) {
	f := loadMCPFixture(t)
	other := withField(t, f.Tool, "name", "remote.other")
	for _, modern := range modernities {
		h := rawHarness(t, &rawServer{modern: modern, pages: []string{toolsPage(t, "", f.Tool, other)}})
		bindings := otherBinding()
		b := bindings["remote.search"]
		b.Policy.RiskLevel = "read"
		bindings["remote.search"] = b
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		require.NoError(t, err)
		entries := catalog.Snapshot().Entries
		regs := catalog.Registrations()
		require.Len(t, regs, 2)
		assert.Equal(t, purramcp.ToolPolicy{Mode: "read", Title: "Other", RiskLevel: "read"}, entries[0].Policy, "G2: riskLevel normalized")
		assert.Equal(t, purramcp.ToolPolicy{Mode: "read", Title: "Search", RiskLevel: "read"}, entries[1].Policy, "G2")
		assert.Equal(t, "another", regs[0].Name)
		assert.False(t, regs[0].ConcurrencySafe, "G2: concurrencySafe defaults to false")
		assert.False(t, entries[0].ConcurrencySafe)
		assert.Equal(t, "search", regs[1].Name)
		assert.True(t, regs[1].ConcurrencySafe, "G2: concurrencySafe from the binding")
		assert.True(t, entries[1].ConcurrencySafe)
		assert.Equal(t, entries[1].Policy, regs[1].Policy)
	}
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

// TestBehaviorG4_FixtureDigest: discovery D1 (an unbound tool on page 1) at
// 2025-11-25 gives the fixture's revisionDigest; the negotiated version is in
// the identity, so 2026-07-28 gives another.
func TestBehaviorG4_FixtureDigest(t *testing.T) {
	f := loadMCPFixture(t)
	unbound := json.RawMessage(`{"name":"unbound","inputSchema":{"type":"object","$ref":"https://example.invalid/private"}}`)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "next", unbound), toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		snap := catalog.Snapshot()
		if modern {
			assert.Equal(t, purramcp.ProtocolVersion20260728, snap.ProtocolVersion)
			assert.NotEqual(t, f.RevisionDigest, snap.RevisionDigest, "G4: the version is in the identity")
		} else {
			assert.Equal(t, purramcp.ProtocolVersion20251125, snap.ProtocolVersion)
			assert.Equal(t, f.RevisionDigest, snap.RevisionDigest, "G4: fixture digest with the unbound tool on page 1")
		}
	}
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest, "G4: go-sdk server at %s", version)
		} else {
			assert.NotEqual(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest, "G4: go-sdk server at %s", version)
		}
	})
}

// TestBehaviorG5_RediscoverSameDigest: rediscovery after a list change, over
// unchanged content, gives the same digest; the monitor revision is not in
// the identity.
func TestBehaviorG5_RediscoverSameDigest(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		synctest.Test(t, func(t *testing.T) {
			srv := newSDKServer(t, nil, f.Tool)
			h := sdkHarness(t, srv, version)
			first, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			srv.server.AddTool(sdkTool(t, f.Tool), srv.call) // re-adding counts as a change
			awaitServerNotify()
			require.True(t, first.Stale(), "G5 at %s", version)
			again, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			assert.Positive(t, h.monitor.Revision(), "G5 at %s", version)
			assert.Equal(t, first.Snapshot().RevisionDigest, again.Snapshot().RevisionDigest, "G5 at %s", version)
			if version == purramcp.ProtocolVersion20251125 {
				assert.Equal(t, f.RevisionDigest, again.Snapshot().RevisionDigest, "G5 at %s", version)
			}
		})
	})
}

// TestBehaviorG6_OrderIndependence: neither the order of the bindings nor
// the order the server lists its tools in changes the snapshot or digest.
func TestBehaviorG6_OrderIndependence(t *testing.T) {
	f := loadMCPFixture(t)
	other := withField(t, f.Tool, "name", "remote.other")
	changed := withField(t, f.Tool, "description", "Changed description")
	bindings := otherBinding()
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
