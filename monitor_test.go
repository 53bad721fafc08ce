package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// TestBehaviorC1_UnsupportedVersion: an unknown version fails and closes.
func TestBehaviorC1_UnsupportedVersion(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	err := m.AcceptProtocolVersion("2099-01-01")
	assert.Equal(t, purramcp.CodeProtocolUnsupported, purramcp.CodeOf(err))
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(m.Check(0)), "unsupported closes the monitor")
	for _, v := range []string{"", "2025-03-26", "2024-11-05", "2025-11-25 "} {
		assert.Equal(t, purramcp.CodeProtocolUnsupported, purramcp.CodeOf(purramcp.NewCatalogMonitor().AcceptProtocolVersion(v)), v)
	}
}

func TestMonitor_Versions(t *testing.T) {
	for _, v := range []string{purramcp.ProtocolVersion20250618, purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728} {
		m := purramcp.NewCatalogMonitor()
		assert.Equal(t, purramcp.CodeNotInitialized, purramcp.CodeOf(m.Check(0)))
		require.NoError(t, m.AcceptProtocolVersion(v))
		require.NoError(t, m.AcceptProtocolVersion(v), "the same version again")
		assert.Equal(t, v, m.ProtocolVersion())
		assert.NoError(t, m.Check(0))
	}
	m := purramcp.NewCatalogMonitor()
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125))
	err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20250618)
	assert.Equal(t, purramcp.CodeProtocolConflict, purramcp.CodeOf(err))
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(m.Check(0)), "a conflict closes the monitor")
	assert.Equal(t, purramcp.ProtocolVersion20251125, m.ProtocolVersion())
}

func TestMonitor_CheckOrder(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	m.OnNotification("notifications/tools/list_changed")
	assert.Equal(t, uint64(1), m.Revision())
	assert.Equal(t, purramcp.CodeNotInitialized, purramcp.CodeOf(m.Check(0)), "no version before stale")
	require.NoError(t, m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728))
	assert.Equal(t, purramcp.CodeCatalogStale, purramcp.CodeOf(m.Check(0)))
	assert.NoError(t, m.Check(1))
	m.OnNotification("notifications/resources/list_changed")
	m.OnNotification("notifications/message")
	assert.Equal(t, uint64(1), m.Revision(), "other methods are ignored")
	m.Close()
	m.Close()
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(m.Check(1)), "closed wins")
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
			synctest.Test(t, func(t *testing.T) {
				srv := newSDKServer(t, nil, f.Tool)
				h := sdkHarness(t, srv, version)
				assert.Equal(t, version, h.monitor.ProtocolVersion())
				require.NoError(t, h.monitor.Attach(h.session), "the same session again")
				other := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
				err := h.monitor.Attach(other.session)
				assert.Equal(t, purramcp.CodeProtocolConflict, purramcp.CodeOf(err))
				assert.NoError(t, h.monitor.Check(0), "a refused second session leaves the monitor open")
				assert.Equal(t, purramcp.CodeBindingInvalid, purramcp.CodeOf(purramcp.NewCatalogMonitor().Attach(nil)))

				require.NoError(t, h.session.Close())
				synctest.Wait()
				assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(h.monitor.Check(0)))
			})
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
		assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(err), "C3 at %s", version)
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
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeConnectionClosed}, res, "C4 at %s", version)
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
			synctest.Test(t, func(t *testing.T) {
				srv := newSDKServer(t, nil, f.Tool)
				h := sdkHarness(t, srv, version)
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				require.NoError(t, err)
				srv.server.AddTool(sdkTool(t, f.Tool), srv.call) // re-adding counts as a change
				awaitServerNotify()
				require.True(t, catalog.Stale())
				res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
				require.NoError(t, err)
				assert.Equal(t, purramcp.CodeCatalogStale, res.ErrorCode)
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
		})
	}
}

// TestBehaviorK2_ListChangedDuringList: the server sends list_changed before
// its tools/list reply. go-sdk does not order the notification against the
// reply, so each discovery either fails mcp_catalog_stale or
// returns a catalog that is stale once the bubble settles; the test accepts
// both and requires that the catalog ends up stale.
func TestBehaviorK2_ListChangedDuringList(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			for i := range 10 {
				synctest.Test(t, func(t *testing.T) {
					raw := &rawServer{modern: modern, changedBeforeList: true, pages: []string{toolsPage(t, "", f.Tool)}}
					h := rawHarness(t, raw)
					catalog, err := discoverDefault(t, h, purramcp.Limits{})
					if err != nil {
						assert.Nil(t, catalog)
						assert.Equal(t, purramcp.CodeCatalogStale, purramcp.CodeOf(err), "K2 round %d", i)
					} else {
						synctest.Wait()
						require.True(t, catalog.Stale(), "K2 round %d: ends up stale", i)
						res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
						require.NoError(t, err)
						assert.Equal(t, purramcp.CodeCatalogStale, res.ErrorCode, "K2 round %d", i)
					}
					_, calls := h.counts()
					assert.Zero(t, calls, "K2 round %d", i)
				})
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
		synctest.Test(t, func(t *testing.T) {
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
			synctest.Wait()
			require.True(t, catalog.Stale(), "K3 modern=%v", modern)
			close(gate)
			r := <-done
			require.NoError(t, r.err)
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeCatalogStale},
				r.res, "K3 modern=%v: late result discarded", modern)
			_, calls := h.counts()
			assert.Equal(t, 1, calls, "K3 modern=%v", modern)
			assert.NoError(t, h.session.Ping(t.Context(), nil))
		})
	}
}

// TestGap17_ProtocolConflict: a second,
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
	assert.Equal(t, purramcp.CodeProtocolConflict, purramcp.CodeOf(err))
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(m.Check(0)), "a conflict closes the monitor")
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: m})
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(err), "discovery on the closed monitor")

	other := purramcp.NewCatalogMonitor()
	require.NoError(t, other.AcceptProtocolVersion(purramcp.ProtocolVersion20250618))
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: other})
	assert.Equal(t, purramcp.CodeProtocolConflict, purramcp.CodeOf(err), "monitor version differs from the session's")

	h2 := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h2.monitor})
	assert.Equal(t, purramcp.CodeBindingInvalid, purramcp.CodeOf(err), "monitor attached to another session")
	assert.Equal(t, purramcp.CodeProtocolConflict, purramcp.CodeOf(h.monitor.Attach(h2.session)), "a second session")
	assert.NoError(t, h.monitor.Check(0), "a refused second session leaves the monitor open")

	lists, _ := h.counts()
	assert.Zero(t, lists)
	lists, _ = h2.counts()
	assert.Zero(t, lists)
}

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
		assert.Equal(t, purramcp.CodeProtocolUnsupported, purramcp.CodeOf(m.AcceptProtocolVersion(v)), v)
		assert.Equal(t, v, m.OfferedVersion())
		assert.Empty(t, m.ProtocolVersion())
		assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(m.Check(0)))

		m = purramcp.NewCatalogMonitor()
		m.AcceptLegacyProtocols()
		require.NoError(t, m.AcceptProtocolVersion(v))
		assert.Equal(t, v, m.ProtocolVersion())
		assert.Equal(t, v, m.OfferedVersion(), "also after success")
		assert.NoError(t, m.Check(0))
		assert.Equal(t, purramcp.CodeProtocolConflict, purramcp.CodeOf(m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125)))
		assert.Equal(t, purramcp.ProtocolVersion20251125, m.OfferedVersion())
	}
	m := purramcp.NewCatalogMonitor()
	m.AcceptLegacyProtocols()
	assert.Equal(t, purramcp.CodeProtocolUnsupported, purramcp.CodeOf(m.AcceptProtocolVersion("2024-10-07")),
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
			assert.Equal(t, purramcp.CodeProtocolUnsupported, purramcp.CodeOf(err))
			assert.Equal(t, version, m.OfferedVersion())
			assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(m.Check(0)))

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

// Streamable HTTP: a go-sdk server behind
// mcp.NewStreamableHTTPHandler on httptest, a client on
// mcp.StreamableClientTransport. Stateful sessions negotiate 2025-11-25 and
// get list changes on the standalone SSE stream; stateless ones negotiate
// 2026-07-28 and get them on a subscriptions/listen stream.

// httpRoundTrip discovers, calls, sees a list change (the server adds a
// tool) make the catalog stale, rediscovers and closes, then checks that no
// goroutine is left.
func httpRoundTrip(t *testing.T, stateless bool, wantVersion string) {
	f := loadMCPFixture(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	srv := newSDKServer(t, nil, f.Tool)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.server },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	transport := &http.Transport{}
	defer func() {
		hs.Close() // after the session: it blocks on an open SSE GET
		transport.CloseIdleConnections()
	}()

	monitor := purramcp.NewCatalogMonitor()
	// changed receives each list change once the monitor has counted it (its
	// handler counts before it calls the host's).
	changed := make(chan struct{}, 1)
	hostOptions := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(hostOptions))
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.StreamableClientTransport{Endpoint: hs.URL,
		HTTPClient: &http.Client{Transport: transport}}), nil)
	require.NoError(t, err)
	sessionOpen := true
	defer func() {
		if sessionOpen {
			_ = cs.Close()
		}
	}()
	require.NoError(t, monitor.Attach(cs))
	assert.Equal(t, wantVersion, monitor.ProtocolVersion(), "negotiated over HTTP")
	h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts, lastArguments: srv.lastArguments}

	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	if wantVersion == purramcp.ProtocolVersion20251125 {
		assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest, "fixture digest over HTTP")
	}
	reg := catalog.Registrations()[0]
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}},
		EffectState: "not_started"}, res)
	assert.JSONEq(t, `{"q":"a"}`, string(srv.lastArguments()))

	srv.server.AddTool(sdkTool(t, json.RawMessage(`{"name":"remote.added","inputSchema":{"type":"object"}}`)), srv.call)
	select { // real sockets, so no synctest bubble; the wait is on the monitor's count
	case <-changed:
	case <-time.After(waitFor):
		require.FailNow(t, "the list change did not reach the client over HTTP")
	}
	require.True(t, catalog.Stale(), "the list change reaches the client over HTTP")
	res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.CodeCatalogStale, res.ErrorCode)
	_, calls := srv.counts()
	assert.Equal(t, 1, calls, "no request for a stale catalog")

	again, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	assert.False(t, again.Stale())
	assert.Equal(t, catalog.Snapshot().RevisionDigest, again.Snapshot().RevisionDigest, "the bound tool did not change")
	res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	lists, calls := srv.counts()
	assert.Equal(t, 2, lists)
	assert.Equal(t, 2, calls)

	sessionOpen = false
	require.NoError(t, cs.Close())
	// Polls: the monitor closes on its own goroutine once go-sdk's session
	// over real HTTP sockets has ended; no bubble holds them, nothing signals it.
	require.Eventually(t, func() bool { return monitor.Check(monitor.Revision()) != nil }, waitFor, tick, "the monitor closes with the session")
	res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.CodeConnectionClosed, res.ErrorCode)
}

// TestHTTP_Stateful: the default handler, 2025-11-25.
func TestHTTP_Stateful(t *testing.T) {
	httpRoundTrip(t, false, purramcp.ProtocolVersion20251125)
}

// TestHTTP_Stateless: Stateless: true, 2026-07-28.
func TestHTTP_Stateless(t *testing.T) {
	httpRoundTrip(t, true, purramcp.ProtocolVersion20260728)
}

// TestHTTP_ServerGone: over stateless HTTP a dead server surfaces as go-sdk's
// -32005 "rejected by transport", which the adapter reports as
// mcp_transport_error for discovery and Run alike, never with remote text.
// go-sdk does not end an HTTP session when a request fails, so the monitor
// stays open and every call tries again.
func TestHTTP_ServerGone(t *testing.T) {
	f := loadMCPFixture(t)
	srv := newSDKServer(t, nil, f.Tool)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.server },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.StreamableClientTransport{Endpoint: hs.URL,
		HTTPClient: &http.Client{Transport: transport}, MaxRetries: 1}), nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	require.NoError(t, monitor.Attach(cs))
	h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts, lastArguments: srv.lastArguments}
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)

	hs.CloseClientConnections()
	hs.Close()
	res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError}, res)
	_, err = discoverDefault(t, h, purramcp.Limits{})
	assert.Equal(t, purramcp.CodeTransportError, purramcp.CodeOf(err), "discovery against a dead server")
	assert.NoError(t, monitor.Check(monitor.Revision()), "go-sdk keeps the HTTP session open")
}

// A real child process over stdio: testdata/stdioserver is a go-sdk server on
// mcp.StdioTransport, launched with mcp.CommandTransport.

// buildStdioServer returns testdata/stdioserver built with the go command of
// the running toolchain, once per test binary, into the package's temporary
// directory (see TestMain).
func buildStdioServer(t *testing.T) string {
	t.Helper()
	b := stdioServerBinary()
	require.NoError(t, b.err, "go build ./testdata/stdioserver: %s", b.output)
	return b.path
}

// builtBinary is the outcome of one go build.
type builtBinary struct {
	path   string
	output []byte
	err    error
}

// stdioServerBinary builds the child server on first use.
var stdioServerBinary = sync.OnceValue(func() builtBinary {
	bin := filepath.Join(packageTempDir, "stdioserver")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./testdata/stdioserver")
	out, err := cmd.CombinedOutput()
	return builtBinary{bin, out, err}
})

// stdioSession is one connected child process.
type stdioSession struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	monitor *purramcp.CatalogMonitor
}

// connectStdio launches bin and connects a monitored client at version ("" =
// go-sdk's default). The caller closes the session: leak checks run before
// t.Cleanup would.
func connectStdio(t *testing.T, bin, version string) stdioSession {
	t.Helper()
	cmd := exec.Command(bin)
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}),
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	require.NoError(t, monitor.Attach(cs))
	want := version
	if want == "" {
		want = purramcp.ProtocolVersion20260728
	}
	require.Equal(t, want, monitor.ProtocolVersion(), "negotiated over stdio")
	return stdioSession{cmd: cmd, session: cs, monitor: monitor}
}

// closeStdio closes the session and checks that the child exited with
// status exit and was reaped, and that the monitor closed with the session.
func closeStdio(t *testing.T, s stdioSession, exit int) {
	t.Helper()
	err := s.session.Close()
	if exit == 0 {
		assert.NoError(t, err, "clean exit")
	}
	require.NotNil(t, s.cmd.ProcessState, "the child was waited for")
	assert.True(t, s.cmd.ProcessState.Exited(), "the child exited")
	assert.Equal(t, exit, s.cmd.ProcessState.ExitCode())
	// Polls: the monitor closes on its own goroutine once go-sdk's session
	// with a real child process has ended; no bubble holds an OS process.
	require.Eventually(t, func() bool { return s.monitor.Check(s.monitor.Revision()) != nil }, waitFor, tick)
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(s.monitor.Check(s.monitor.Revision())))
}

// TestBehaviorL1_StdioSmoke is the TypeScript installed smoke over a real
// stdio child: discovery of count (serverId "local", the smoke digest at
// 2025-11-25), Run({}) → structured {count:3}, ping, close; nothing leaks.
func TestBehaviorL1_StdioSmoke(t *testing.T) {
	bin := buildStdioServer(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	forEachVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, bin, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "local", countBinding("count"),
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		require.NoError(t, err, "L1 at %s", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, smokeDigest, catalog.Snapshot().RevisionDigest, "L1 at %s", version)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{}`), purramcp.ToolContext{CallID: "call"})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 3.0}},
			EffectState: "not_started"}, res, "L1 at %s", version)
		assert.NoError(t, s.session.Ping(t.Context(), nil), "L1 at %s", version)
		closeStdio(t, s, 0)
	})
}

// TestBehaviorL2_StdioTypedSmoke is the Python installed smoke: the server
// returns a typed value, go-sdk adds the JSON text block, and the envelope
// carries both.
func TestBehaviorL2_StdioTypedSmoke(t *testing.T) {
	bin := buildStdioServer(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	forEachVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, bin, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "local", countBinding("count_typed"),
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		require.NoError(t, err, "L2 at %s", version)
		res, err := catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Empty(t, res.ErrorCode, "L2 at %s", version)
		assert.Equal(t, map[string]any{"count": 3.0}, res.Content.Structured, "L2 at %s", version)
		require.Len(t, res.Content.Text, 1, "L2 at %s", version)
		assert.JSONEq(t, `{"count":3}`, res.Content.Text[0], "L2 at %s", version)
		assert.NoError(t, s.session.Ping(t.Context(), nil))
		closeStdio(t, s, 0)
	})
}

// TestStdio_DiscoverCallClose: the fixture tool over a real child process
// gives the fixture digest at 2025-11-25 and the reference result; a child
// that dies mid-call fails mcp_transport_error, closes the monitor and is
// reaped with its exit status.
func TestStdio_DiscoverCallClose(t *testing.T) {
	f := loadMCPFixture(t)
	bin := buildStdioServer(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, version := range append([]string{""}, testVersions...) {
		s := connectStdio(t, bin, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		require.NoError(t, err, "stdio at %q", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest, "stdio fixture digest")
		}
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"found"}, Structured: map[string]any{"count": 1.0}},
			EffectState: "not_started"}, res, "stdio at %q", version)
		res, err = reg.Run(t.Context(), json.RawMessage(`{"q":"too long"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode)
		closeStdio(t, s, 0)
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.CodeConnectionClosed, res.ErrorCode, "after close at %q", version)
	}

	s := connectStdio(t, bin, "")
	bindings := map[string]purramcp.ToolBinding{"remote.exit": {LocalName: "exit",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Exit"}, Scope: purramcp.Unscoped}}
	catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "fixture", bindings, purramcp.DiscoveryOptions{Monitor: s.monitor})
	require.NoError(t, err)
	res, err := catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError}, res,
		"the child exits mid-call")
	// Polls: as in closeStdio, a real child process.
	require.Eventually(t, func() bool { return s.monitor.Check(s.monitor.Revision()) != nil }, waitFor, tick, "the monitor closes with the session")
	res, err = catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.CodeConnectionClosed, res.ErrorCode)
	closeStdio(t, s, 3)
}
