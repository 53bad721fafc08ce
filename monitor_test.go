package purramcp_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// TestBehaviorC1_UnsupportedVersion: an unknown version fails and closes.
func TestBehaviorC1_UnsupportedVersion(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	err := m.AcceptProtocolVersion("2099-01-01")
	assert.Equal(t, "mcp_protocol_unsupported", purramcp.CodeOf(err))
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(m.Check(0)), "unsupported closes the monitor")
	for _, v := range []string{"", "2025-03-26", "2024-11-05", "2025-11-25 "} {
		assert.Equal(t, "mcp_protocol_unsupported", purramcp.CodeOf(purramcp.NewCatalogMonitor().AcceptProtocolVersion(v)), v)
	}
}

func TestMonitor_Versions(t *testing.T) {
	for _, v := range []string{purramcp.ProtocolVersion20250618, purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728} {
		m := purramcp.NewCatalogMonitor()
		assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(m.Check(0)))
		require.NoError(t, m.AcceptProtocolVersion(v))
		require.NoError(t, m.AcceptProtocolVersion(v), "the same version again")
		assert.Equal(t, v, m.ProtocolVersion())
		assert.NoError(t, m.Check(0))
	}
	m := purramcp.NewCatalogMonitor()
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125))
	err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20250618)
	assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err))
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(m.Check(0)), "a conflict closes the monitor")
	assert.Equal(t, purramcp.ProtocolVersion20251125, m.ProtocolVersion())
}

func TestMonitor_CheckOrder(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	m.OnNotification("notifications/tools/list_changed")
	assert.Equal(t, uint64(1), m.Revision())
	assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(m.Check(0)), "no version before stale")
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728))
	assert.Equal(t, "mcp_catalog_stale", purramcp.CodeOf(m.Check(0)))
	assert.NoError(t, m.Check(1))
	m.OnNotification("notifications/resources/list_changed")
	m.OnNotification("notifications/message")
	assert.Equal(t, uint64(1), m.Revision(), "other methods are ignored")
	m.Close()
	m.Close()
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(m.Check(1)), "closed wins")
}

func TestMonitor_ClientOptions(t *testing.T) {
	var hostCalls int
	var mu sync.Mutex
	base := &mcp.ClientOptions{KeepAlive: 7, ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		mu.Lock()
		hostCalls++
		mu.Unlock()
	}}
	m := purramcp.NewCatalogMonitor()
	opts := m.ClientOptions(base)
	require.NotSame(t, base, opts)
	assert.Equal(t, base.KeepAlive, opts.KeepAlive)
	assert.Nil(t, base.MultiRoundTrip, "base unchanged")
	require.NotNil(t, opts.MultiRoundTrip)
	assert.True(t, opts.MultiRoundTrip.Disabled)
	opts.ToolListChangedHandler(t.Context(), nil)
	assert.Equal(t, uint64(1), m.Revision())
	assert.Equal(t, 1, hostCalls, "the host's handler runs too")

	bare := purramcp.NewCatalogMonitor().ClientOptions(nil)
	require.NotNil(t, bare.ToolListChangedHandler)
	assert.True(t, bare.MultiRoundTrip.Disabled)
	bare.ToolListChangedHandler(t.Context(), nil)
}

// TestMonitor_Attach records the negotiated version at both versions and
// closes when the session ends.
func TestMonitor_Attach(t *testing.T) {
	f := loadMCPFixture(t)
	for _, version := range append([]string{purramcp.ProtocolVersion20250618}, testVersions...) {
		t.Run(version, func(t *testing.T) {
			srv := newSDKServer(t, nil, f.Tool)
			h := sdkHarness(t, srv, version)
			assert.Equal(t, version, h.monitor.ProtocolVersion())
			require.NoError(t, h.monitor.Attach(h.session), "the same session again")
			other := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
			err := h.monitor.Attach(other.session)
			assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err))
			assert.NoError(t, h.monitor.Check(0), "a refused second session leaves the monitor open")
			assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(purramcp.NewCatalogMonitor().Attach(nil)))

			require.NoError(t, h.session.Close())
			require.Eventually(t, func() bool { return h.monitor.Check(0) != nil }, waitFor, tick)
			assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(h.monitor.Check(0)))
		})
	}
}

func TestMonitor_Concurrent(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			m.OnNotification("notifications/tools/list_changed")
			_ = m.Check(m.Revision())
			_ = m.ProtocolVersion()
			_ = m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125)
		})
	}
	wg.Wait()
	assert.Equal(t, uint64(50), m.Revision())
	assert.NoError(t, m.Check(50))
}
