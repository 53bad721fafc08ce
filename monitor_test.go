package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	assert.Equal(t, &mcp.ClientCapabilities{}, bare.Capabilities, "no roots capability (go-sdk's nil default)")
	assert.Nil(t, base.Capabilities, "base unchanged")
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

// TestBehaviorC2_NegotiatedVersionInDigest: the snapshot's protocolVersion
// is the version the real handshake negotiated, and it is in the digest.
func TestBehaviorC2_NegotiatedVersionInDigest(t *testing.T) {
	f := loadMCPFixture(t)
	want := map[string]string{
		purramcp.ProtocolVersion20250618: "d5d8ba2584e1169a9285f82218bd76e662ba9cd11aef5eb3a8cc847c48912a1c",
		purramcp.ProtocolVersion20251125: f.RevisionDigest,
	}
	digests := map[string]bool{}
	for _, version := range append([]string{purramcp.ProtocolVersion20250618}, testVersions...) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		assert.Equal(t, version, h.session.InitializeResult().ProtocolVersion, "C2: negotiated")
		assert.Equal(t, version, h.monitor.ProtocolVersion(), "C2 at %s", version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err, "C2 at %s", version)
		snap := catalog.Snapshot()
		assert.Equal(t, version, snap.ProtocolVersion, "C2 at %s", version)
		if d, ok := want[version]; ok {
			assert.Equal(t, d, snap.RevisionDigest, "C2 at %s", version)
		}
		digests[snap.RevisionDigest] = true
	}
	assert.Len(t, digests, 3, "C2: one digest per version")
}

// TestBehaviorC3_ClosedMonitorDiscovery: discovery on a closed monitor fails
// mcp_connection_closed and sends nothing.
func TestBehaviorC3_ClosedMonitorDiscovery(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		h.monitor.Close()
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Nil(t, catalog)
		assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(err), "C3 at %s", version)
		lists, _ := h.counts()
		assert.Equal(t, 1, lists, "C3 at %s: lists unchanged", version)
	})
}

// TestBehaviorC4_CloseMakesStale: closing the monitor makes an existing
// catalog stale; its Run fails mcp_connection_closed with no request.
func TestBehaviorC4_CloseMakesStale(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		assert.False(t, catalog.Stale(), "C4 at %s", version)
		h.monitor.Close()
		assert.True(t, catalog.Stale(), "C4 at %s", version)
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_connection_closed"}, res, "C4 at %s", version)
		_, calls := h.counts()
		assert.Zero(t, calls, "C4 at %s", version)
	})
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
			assert.True(t, catalog.Stale(), "stale for good")
			assert.Equal(t, catalog.Snapshot().RevisionDigest, again.Snapshot().RevisionDigest)
			res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Empty(t, res.ErrorCode, "the new catalog runs")
		})
	}
}

// TestBehaviorK2_ListChangedDuringList: the server sends list_changed before
// its tools/list reply. go-sdk does not order the notification against the
// reply (adapter.md §9), so each discovery either fails mcp_catalog_stale or
// returns a catalog that turns stale within a bounded wait; the test accepts
// both and requires that the catalog ends up stale.
func TestBehaviorK2_ListChangedDuringList(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			for i := range 10 {
				raw := &rawServer{modern: modern, changedBeforeList: true, pages: []string{toolsPage(t, "", f.Tool)}}
				h := rawHarness(t, raw)
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				if err != nil {
					assert.Nil(t, catalog)
					assert.Equal(t, "mcp_catalog_stale", purramcp.CodeOf(err), "K2 round %d", i)
				} else {
					require.Eventually(t, catalog.Stale, waitFor, tick, "K2 round %d: ends up stale", i)
					res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
					require.NoError(t, err)
					assert.Equal(t, "mcp_catalog_stale", res.ErrorCode, "K2 round %d", i)
				}
				_, calls := h.counts()
				assert.Zero(t, calls, "K2 round %d", i)
			}
		})
	}
}

// TestBehaviorK3_StaleWhileCallInFlight: the server sends list_changed while
// it holds the call; once the change is seen it answers, and the late result
// is discarded → mcp_catalog_stale (the wait makes the order deterministic).
func TestBehaviorK3_StaleWhileCallInFlight(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		gate := make(chan struct{})
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", f.Tool)}}
		raw.beforeAnswer = func(ctx context.Context, _ json.RawMessage) {
			raw.notifyChanged()
			select {
			case <-gate:
			case <-ctx.Done():
			}
		}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		done := runAsync(t.Context(), catalog.Registrations()[0])
		require.Eventually(t, catalog.Stale, waitFor, tick, "K3 modern=%v", modern)
		close(gate)
		r := <-done
		require.NoError(t, r.err)
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_catalog_stale"},
			r.res, "K3 modern=%v: late result discarded", modern)
		_, calls := h.counts()
		assert.Equal(t, 1, calls, "K3 modern=%v", modern)
		assert.NoError(t, h.session.Ping(t.Context(), nil))
	}
}

// TestGap17_ProtocolConflict (reference-behaviors.md §5.17): a second,
// different version fails mcp_protocol_conflict and closes the monitor; a
// monitor whose version differs from the session's fails discovery with
// mcp_protocol_conflict; a monitor attached to another session is refused.
// Nothing is sent in any case.
func TestGap17_ProtocolConflict(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)

	m := purramcp.NewCatalogMonitor()
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125))
	err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728)
	assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err))
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(m.Check(0)), "a conflict closes the monitor")
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: m})
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(err), "discovery on the closed monitor")

	other := purramcp.NewCatalogMonitor()
	require.NoError(t, other.AcceptProtocolVersion(purramcp.ProtocolVersion20250618))
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: other})
	assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err), "monitor version differs from the session's")

	h2 := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h2.monitor})
	assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "monitor attached to another session")
	assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(h.monitor.Attach(h2.session)), "a second session")
	assert.NoError(t, h.monitor.Check(0), "a refused second session leaves the monitor open")

	lists, _ := h.counts()
	assert.Zero(t, lists)
	lists, _ = h2.counts()
	assert.Zero(t, lists)
}
