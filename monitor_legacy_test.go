package purramcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// legacyVersions are the versions AcceptLegacyProtocols adds.
var legacyVersions = []string{purramcp.ProtocolVersion20241105, purramcp.ProtocolVersion20250326}

// TestMonitor_LegacyVersions: the legacy versions fail
// mcp_protocol_unsupported by default and are accepted after
// AcceptLegacyProtocols; OfferedVersion reports every version given,
// accepted or not.
func TestMonitor_LegacyVersions(t *testing.T) {
	assert.Equal(t, "2024-11-05", purramcp.ProtocolVersion20241105)
	assert.Equal(t, "2025-03-26", purramcp.ProtocolVersion20250326)
	for _, v := range legacyVersions {
		m := purramcp.NewCatalogMonitor()
		assert.Empty(t, m.OfferedVersion(), "nothing offered yet")
		assert.Equal(t, "mcp_protocol_unsupported", purramcp.CodeOf(m.AcceptProtocolVersion(v)), v)
		assert.Equal(t, v, m.OfferedVersion())
		assert.Empty(t, m.ProtocolVersion())
		assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(m.Check(0)))

		m = purramcp.NewCatalogMonitor()
		m.AcceptLegacyProtocols()
		require.NoError(t, m.AcceptProtocolVersion(v))
		assert.Equal(t, v, m.ProtocolVersion())
		assert.Equal(t, v, m.OfferedVersion(), "also after success")
		assert.NoError(t, m.Check(0))
		assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125)))
		assert.Equal(t, purramcp.ProtocolVersion20251125, m.OfferedVersion())
	}
	m := purramcp.NewCatalogMonitor()
	m.AcceptLegacyProtocols()
	assert.Equal(t, "mcp_protocol_unsupported", purramcp.CodeOf(m.AcceptProtocolVersion("2024-10-07")),
		"only the two legacy versions are added")
	assert.Equal(t, "2024-10-07", m.OfferedVersion())
	m = purramcp.NewCatalogMonitor()
	m.AcceptLegacyProtocols()
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728), "current versions stay accepted")
}

// legacyServer is the fixture server speaking only version.
func legacyServer(t *testing.T, version string) *sdkServer {
	t.Helper()
	return newSDKServerVersions(t, []string{version}, nil, loadMCPFixture(t).Tool)
}

// connectLegacy connects go-sdk's client with its default version to a
// server that only speaks version, through the monitor's Connect.
func connectLegacy(t *testing.T, s *sdkServer, legacy bool) (*mcp.ClientSession, *purramcp.CatalogMonitor, error) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close(); _ = ss.Wait() })
	m := purramcp.NewCatalogMonitor()
	if legacy {
		m.AcceptLegacyProtocols()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, m.ClientOptions(nil))
	cs, err := m.Connect(t.Context(), client, ct, nil)
	if cs != nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, m, err
}

// TestMonitor_LegacyEndToEnd: a go-sdk server that only speaks a legacy
// version negotiates it with go-sdk's default client. Without
// AcceptLegacyProtocols Connect fails mcp_protocol_unsupported and
// OfferedVersion names the version; with it, discovery and Run work as
// under the current versions, with the legacy version in the snapshot and
// its digest.
func TestMonitor_LegacyEndToEnd(t *testing.T) {
	wantDigest := map[string]string{
		purramcp.ProtocolVersion20241105: "cc8ecb951084511a06880e0eadc535f22090e7a44a134c5db9016eb5bba81be8",
		purramcp.ProtocolVersion20250326: "0172490e9ed0932be06b38e4d7006a17764f018358ba0609a4a6378853ac6d22",
	}
	for _, version := range legacyVersions {
		t.Run(version, func(t *testing.T) {
			s := legacyServer(t, version)
			cs, m, err := connectLegacy(t, s, false)
			assert.Nil(t, cs)
			assert.Equal(t, "mcp_protocol_unsupported", purramcp.CodeOf(err))
			assert.Equal(t, version, m.OfferedVersion())
			assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(m.Check(0)))

			cs, m, err = connectLegacy(t, s, true)
			require.NoError(t, err)
			assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			assert.Equal(t, version, m.ProtocolVersion())
			assert.Equal(t, version, m.OfferedVersion())
			h := sessionHarness{session: cs, monitor: m, counts: s.counts, lastArguments: s.lastArguments}
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			require.NoError(t, err)
			snap := catalog.Snapshot()
			assert.Equal(t, version, snap.ProtocolVersion)
			assert.Equal(t, wantDigest[version], snap.RevisionDigest)
			assert.NotEqual(t, loadMCPFixture(t).RevisionDigest, snap.RevisionDigest, "the version is in the digest")
			res, err := catalog.Registrations()[0].Run(context.Background(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Empty(t, res.ErrorCode)
			assert.Equal(t, "not_started", res.EffectState, "a read tool")
			assert.Equal(t, map[string]any{"count": float64(1)}, res.Content.Structured)
			assert.Equal(t, json.RawMessage(`{"q":"a"}`), s.lastArguments())
			lists, calls := s.counts()
			assert.Equal(t, [2]int{1, 1}, [2]int{lists, calls})
		})
	}
}
