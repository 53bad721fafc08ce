package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/purramcptest"
)

// eraSnapshot discovers the two unit tools as server id over a session at
// protocol version version and returns the snapshot.
func eraSnapshot(t *testing.T, id, version string) purramcp.Snapshot {
	t.Helper()
	s := purramcptest.Start(t, purramcptest.Options{ProtocolVersion: version}, unitTools("")...)
	catalog, err := purramcp.DiscoverTools(t.Context(), s.Session, id, unitBindings(""), purramcp.DiscoveryOptions{Monitor: s.Monitor})
	require.NoError(t, err)
	return catalog.Snapshot()
}

func TestFleet_LockPinsTheEra(t *testing.T) {
	legacy := eraSnapshot(t, "u", purramcp.ProtocolVersion20251125)
	modern := eraSnapshot(t, "u", purramcp.ProtocolVersion20260728)
	require.NotEqual(t, legacy.RevisionDigest, modern.RevisionDigest)

	// A server locked at 2025-11-25 whose SDK learned 2026-07-28 (go-sdk
	// speaks both, and prefers 2026-07-28) stays ready at the locked era.
	both := newMemServer(t)
	lock := &fleet.Lock{}
	lock.Set("u", legacy)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(both, "", 0)}},
		fleet.Options{Lock: lock, Backoff: fastBackoff})
	st := waitState(t, f, "u", fleet.StateReady, legacy.RevisionDigest)
	assert.Equal(t, purramcp.ProtocolVersion20251125, st.Protocol)
	assert.Equal(t, "", run(t, registration(t, f, "convert_units"), convertArgs))

	// The same server with no lock entry connects as before: 2026-07-28.
	f2 := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(both, "", 0)}},
		fleet.Options{Lock: &fleet.Lock{}, Backoff: fastBackoff})
	st = waitState(t, f2, "u", fleet.StateUnapproved, modern.RevisionDigest)
	assert.Equal(t, purramcp.ProtocolVersion20260728, st.Protocol)

	// Locked at 2026-07-28, the server stays at 2026-07-28.
	lock3 := &fleet.Lock{}
	lock3.Set("u", modern)
	f3 := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(both, "", 0)}},
		fleet.Options{Lock: lock3, Backoff: fastBackoff})
	st = waitState(t, f3, "u", fleet.StateReady, modern.RevisionDigest)
	assert.Equal(t, purramcp.ProtocolVersion20260728, st.Protocol)
}

func TestFleet_DroppedEraIsDrift(t *testing.T) {
	legacy := eraSnapshot(t, "u", purramcp.ProtocolVersion20251125)
	modern := eraSnapshot(t, "u", purramcp.ProtocolVersion20260728)
	m := newMemServer(t)
	m.modernOnly = true
	lock := &fleet.Lock{}
	lock.Set("u", legacy)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Lock: lock, Backoff: fastBackoff})
	st := waitState(t, f, "u", fleet.StateUnapproved, modern.RevisionDigest)
	assert.Equal(t, purramcp.CodeCatalogUnapproved, st.Code)
	assert.Equal(t, purramcp.ProtocolVersion20260728, st.Protocol)
	assert.Empty(t, f.Registrations())
	pending, changes, ok := f.Pending("u")
	require.True(t, ok)
	assert.Equal(t, purramcp.ProtocolVersion20260728, pending.ProtocolVersion)
	assert.Equal(t, []purramcp.Change{{Kind: "changed", Fields: []string{"protocolVersion"}}}, changes)

	// Approving it pins the new era: the next session is at 2026-07-28.
	require.NoError(t, f.Approve("u", modern.RevisionDigest))
	assert.Equal(t, purramcp.ProtocolVersion20260728, f.Lock().ProtocolVersion("u"))
	m.Kill()
	st = waitState(t, f, "u", fleet.StateReady, modern.RevisionDigest)
	assert.Equal(t, purramcp.ProtocolVersion20260728, st.Protocol)
}

func TestConnect_ProtocolVersionPins(t *testing.T) {
	both := newMemServer(t)
	cases := []struct {
		name, pin, want string
		modernOnly      bool
		dials           int32
	}{
		{"no pin", "", purramcp.ProtocolVersion20260728, false, 1},
		{"legacy pin, both spoken", purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20251125, false, 1},
		{"older pin, both spoken", purramcp.ProtocolVersion20250618, purramcp.ProtocolVersion20250618, false, 1},
		{"modern pin", purramcp.ProtocolVersion20260728, purramcp.ProtocolVersion20260728, false, 1},
		{"unknown pin is no pin", "2099-01-01", purramcp.ProtocolVersion20260728, false, 1},
		{"legacy pin, modern only", purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := both
			if c.modernOnly {
				m = newMemServer(t)
				m.modernOnly = true
			}
			before := m.dials.Load()
			s, err := fleet.Connect(t.Context(), memConfig(m, "", 0), fleet.ConnectOptions{ProtocolVersion: c.pin})
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, c.want, s.Monitor().ProtocolVersion())
			assert.Equal(t, c.dials, m.dials.Load()-before)
		})
	}

	// A server that speaks only a legacy era, pinned at 2026-07-28: go-sdk
	// falls back to initialize itself; one dial, the legacy era.
	old := newMemServer(t)
	old.versions = []string{purramcp.ProtocolVersion20250618}
	s, err := fleet.Connect(t.Context(), memConfig(old, "", 0), fleet.ConnectOptions{ProtocolVersion: purramcp.ProtocolVersion20260728})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ProtocolVersion20250618, s.Monitor().ProtocolVersion())
	assert.Equal(t, int32(1), old.dials.Load())
	s.Close()

	// A failure that is not the era (the server is down) is not retried.
	down := newMemServer(t)
	down.set("", true)
	_, err = fleet.Connect(t.Context(), memConfig(down, "", 0), fleet.ConnectOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	require.Error(t, err)
	assert.Equal(t, int32(1), down.dials.Load())
}
