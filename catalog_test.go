package purramcp_test

import (
	"encoding/json"
	"math"
	"reflect"
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
			if err != nil {
				t.Fatal(err)
			}
			snap := catalog.Snapshot()
			tool := decodeObject(t, f.Tool)
			want := map[string]any{"schemaVersion": 1.0, "serverId": "fixture", "protocolVersion": version,
				"revisionDigest": snap.RevisionDigest, "entries": []any{map[string]any{
					"remoteName": "remote.search", "localName": "search", "description": "Search documents",
					"inputSchema": tool["inputSchema"], "outputSchema": tool["outputSchema"],
					"policy":          map[string]any{"mode": "read", "title": "Search", "riskLevel": "read"},
					"concurrencySafe": true}}}
			got, err := json.Marshal(snap)
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeObject(t, got); !reflect.DeepEqual(got, want) {
				t.Errorf("G1 at %s: got %v, want %v", version, got, want)
			}
			delete(want, "revisionDigest")
			digest, err := purramcp.IdentityDigest(want)
			if err != nil {
				t.Fatal(err)
			}
			if snap.RevisionDigest != digest {
				t.Errorf("G1 at %s: digest of the snapshot minus revisionDigest: got %q, want %q", version, snap.RevisionDigest, digest)
			}

			other := withField(t, f.Tool, "name", "remote.other")
			h2 := rawHarness(t, &rawServer{modern: version == purramcp.ProtocolVersion20260728,
				pages: []string{toolsPage(t, "", f.Tool, other)}})
			two, err := purramcp.DiscoverTools(t.Context(), h2.session, "fixture", otherBinding(),
				purramcp.DiscoveryOptions{Monitor: h2.monitor})
			if err != nil {
				t.Fatal(err)
			}
			entries := two.Snapshot().Entries
			if got := len(entries); got != 2 {
				t.Fatalf("len(entries) = %d, want %d", got, 2)
			}
			if got, want := []string{entries[0].LocalName, entries[1].LocalName}, []string{"another", "search"}; !reflect.DeepEqual(got, want) {
				t.Errorf("G1 at %s: entries sorted by localName: got %v, want %v", version, got, want)
			}
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
		if err != nil {
			t.Fatal(err)
		}
		entries := catalog.Snapshot().Entries
		regs := catalog.Registrations()
		if got := len(regs); got != 2 {
			t.Fatalf("len(regs) = %d, want %d", got, 2)
		}
		if want := (purramcp.ToolPolicy{Mode: "read", Title: "Other", RiskLevel: "read"}); !reflect.DeepEqual(entries[0].Policy, want) {
			t.Errorf("G2: riskLevel normalized: got %v, want %v", entries[0].Policy, want)
		}
		if want := (purramcp.ToolPolicy{Mode: "read", Title: "Search", RiskLevel: "read"}); !reflect.DeepEqual(entries[1].Policy, want) {
			t.Errorf("G2: got %v, want %v", entries[1].Policy, want)
		}
		if regs[0].Name != "another" {
			t.Errorf("regs[0].Name = %q, want %q", regs[0].Name, "another")
		}
		if regs[0].ConcurrencySafe {
			t.Errorf("G2: concurrencySafe defaults to false")
		}
		if entries[0].ConcurrencySafe {
			t.Errorf("entries[0].ConcurrencySafe is true")
		}
		if regs[1].Name != "search" {
			t.Errorf("regs[1].Name = %q, want %q", regs[1].Name, "search")
		}
		if !regs[1].ConcurrencySafe {
			t.Errorf("G2: concurrencySafe from the binding")
		}
		if !entries[1].ConcurrencySafe {
			t.Errorf("entries[1].ConcurrencySafe is false")
		}
		if !reflect.DeepEqual(regs[1].Policy, entries[1].Policy) {
			t.Errorf("regs[1].Policy = %v, want %v", regs[1].Policy, entries[1].Policy)
		}
	}
}

// TestBehaviorG3_SnapshotImmutable: changing returned values changes nothing.
func TestBehaviorG3_SnapshotImmutable(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := json.Marshal(catalog.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	snap := catalog.Snapshot()
	snap.Entries[0].InputSchema["required"].([]any)[0] = "changed"
	snap.Entries[0].OutputSchema["type"] = "array"
	snap.Entries[0].LocalName = "x"
	regs := catalog.Registrations()
	regs[0].InputSchema["type"] = "array"
	regs[0].Name = "x"
	after, err := json.Marshal(catalog.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(after), string(before); !jsonEqual(t, got, want) {
		t.Errorf("got %s, want JSON equal to %s", got, want)
	}
	if got := catalog.Registrations()[0].Name; got != "search" {
		t.Errorf("catalog.Registrations()[0].Name = %q, want %q", got, "search")
	}
	if got := catalog.Registrations()[0].InputSchema["type"]; !reflect.DeepEqual(got, "object") {
		t.Errorf("catalog.Registrations()[0].InputSchema[\"type\"] = %v, want %v", got, "object")
	}
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
		if err != nil {
			t.Fatal(err)
		}
		snap := catalog.Snapshot()
		if modern {
			if snap.ProtocolVersion != purramcp.ProtocolVersion20260728 {
				t.Errorf("snap.ProtocolVersion = %q, want %q", snap.ProtocolVersion, purramcp.ProtocolVersion20260728)
			}
			if snap.RevisionDigest == f.RevisionDigest {
				t.Errorf("G4: the version is in the identity: got %q, want anything else", snap.RevisionDigest)
			}
		} else {
			if snap.ProtocolVersion != purramcp.ProtocolVersion20251125 {
				t.Errorf("snap.ProtocolVersion = %q, want %q", snap.ProtocolVersion, purramcp.ProtocolVersion20251125)
			}
			if snap.RevisionDigest != f.RevisionDigest {
				t.Errorf("G4: fixture digest with the unbound tool on page 1: got %q, want %q", snap.RevisionDigest, f.RevisionDigest)
			}
		}
	}
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if version == purramcp.ProtocolVersion20251125 {
			if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
				t.Errorf("G4: go-sdk server at %s: got %q, want %q", version, got, f.RevisionDigest)
			}
		} else {
			if got := catalog.Snapshot().RevisionDigest; got == f.RevisionDigest {
				t.Errorf("G4: go-sdk server at %s: got %q, want anything else", version, got)
			}
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
			if err != nil {
				t.Fatal(err)
			}
			srv.MCP.AddTool(sdkTool(t, f.Tool), srv.call) // re-adding counts as a change
			awaitServerNotify()
			if !first.Stale() {
				t.Fatalf("G5 at %s", version)
			}
			again, err := discoverDefault(t, h, purramcp.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := h.monitor.Revision(); got <= 0 {
				t.Errorf("G5 at %s: got %v, want > 0", version, got)
			}
			if got, want := again.Snapshot().RevisionDigest, first.Snapshot().RevisionDigest; got != want {
				t.Errorf("G5 at %s: got %q, want %q", version, got, want)
			}
			if version == purramcp.ProtocolVersion20251125 {
				if got := again.Snapshot().RevisionDigest; got != f.RevisionDigest {
					t.Errorf("G5 at %s: got %q, want %q", version, got, f.RevisionDigest)
				}
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
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range catalog.Registrations() {
			names = append(names, r.Name)
		}
		if want := []string{"another", "search"}; !reflect.DeepEqual(names, want) {
			t.Errorf("names = %v, want %v", names, want)
		}
		digests = append(digests, catalog.Snapshot().RevisionDigest)
	}
	if digests[0] != "d2e792eb8724832f433b1bf5ecd9822cf58dc58afe9ce13cc2761a7eebd68d5d" {
		t.Errorf("digests[0] = %q, want %q", digests[0], "d2e792eb8724832f433b1bf5ecd9822cf58dc58afe9ce13cc2761a7eebd68d5d")
	}
	if digests[1] != digests[0] {
		t.Errorf("digests[1] = %q, want %q", digests[1], digests[0])
	}
	if digests[2] != "75f2bc87bfa454d5200c2ab8685281645c6d733cb87c177d47d73b5693f750f3" {
		t.Errorf("digests[2] = %q, want %q", digests[2], "75f2bc87bfa454d5200c2ab8685281645c6d733cb87c177d47d73b5693f750f3")
	}
}

// TestSnapshot_DigestAndClone: a catalog's snapshot recomputes its own
// revision digest, any change gives another, a value outside the identity
// domain fails, and Clone shares nothing.
func TestSnapshot_DigestAndClone(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	snap := catalog.Snapshot()
	digest, err := snap.Digest()
	require.NoError(t, err)
	assert.Equal(t, snap.RevisionDigest, digest, "a catalog's snapshot gives back its digest")
	stored, err := json.Marshal(snap)
	require.NoError(t, err)
	var loaded purramcp.Snapshot
	require.NoError(t, json.Unmarshal(stored, &loaded))
	digest, err = loaded.Digest()
	require.NoError(t, err)
	assert.Equal(t, snap.RevisionDigest, digest, "a snapshot stored as JSON and read back gives back its digest")
	typed := loaded.Clone()
	typed.Entries[0].InputSchema["required"] = []string{"q"}
	loaded.Entries[0].InputSchema["required"] = []any{"q"}
	typedDigest, err := typed.Digest()
	require.NoError(t, err)
	digest, err = loaded.Digest()
	require.NoError(t, err)
	assert.Equal(t, digest, typedDigest, "a schema value hashes as its JSON")

	clone := snap.Clone()
	require.Equal(t, snap, clone)
	clone.Entries[0].InputSchema["type"] = "array"
	clone.Entries[0].Description = "changed"
	again, err := snap.Digest()
	require.NoError(t, err)
	assert.Equal(t, digest, again, "changing the clone changes nothing in the snapshot")
	changed, err := clone.Digest()
	require.NoError(t, err)
	assert.NotEqual(t, digest, changed, "a changed snapshot has another digest")

	clone.Entries[0].InputSchema["maximum"] = math.Inf(1) // outside the identity domain
	_, err = clone.Digest()
	assert.Error(t, err)
}
