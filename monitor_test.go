package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// TestBehaviorC1_UnsupportedVersion: an unknown version fails and closes.
func TestBehaviorC1_UnsupportedVersion(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	err := m.AcceptProtocolVersion("2099-01-01")
	if got := purramcp.CodeOf(err); got != purramcp.CodeProtocolUnsupported {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeProtocolUnsupported)
	}
	if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeConnectionClosed {
		t.Errorf("unsupported closes the monitor: got %q, want %q", got, purramcp.CodeConnectionClosed)
	}
	for _, v := range []string{"", "2025-03-26", "2024-11-05", "2025-11-25 "} {
		if got := purramcp.CodeOf(purramcp.NewCatalogMonitor().AcceptProtocolVersion(v)); got != purramcp.CodeProtocolUnsupported {
			t.Errorf("%v: got %q, want %q", v, got, purramcp.CodeProtocolUnsupported)
		}
	}
}

func TestMonitor_Versions(t *testing.T) {
	for _, v := range []string{purramcp.ProtocolVersion20250618, purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728} {
		m := purramcp.NewCatalogMonitor()
		if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeNotInitialized {
			t.Errorf("purramcp.CodeOf(m.Check(0)) = %q, want %q", got, purramcp.CodeNotInitialized)
		}
		if err := m.AcceptProtocolVersion(v); err != nil {
			t.Fatalf("m.AcceptProtocolVersion(v): %v", err)
		}
		if err := m.AcceptProtocolVersion(v); err != nil {
			t.Fatalf("the same version again: %v", err)
		}
		if got := m.ProtocolVersion(); got != v {
			t.Errorf("m.ProtocolVersion() = %q, want %q", got, v)
		}
		if err := m.Check(0); err != nil {
			t.Errorf("m.Check(0): %v", err)
		}
	}
	m := purramcp.NewCatalogMonitor()
	if err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125); err != nil {
		t.Fatal(err)
	}
	err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20250618)
	if got := purramcp.CodeOf(err); got != purramcp.CodeProtocolConflict {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeProtocolConflict)
	}
	if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeConnectionClosed {
		t.Errorf("a conflict closes the monitor: got %q, want %q", got, purramcp.CodeConnectionClosed)
	}
	if got := m.ProtocolVersion(); got != purramcp.ProtocolVersion20251125 {
		t.Errorf("m.ProtocolVersion() = %q, want %q", got, purramcp.ProtocolVersion20251125)
	}
}

func TestMonitor_CheckOrder(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	m.OnNotification("notifications/tools/list_changed")
	if got, want := m.Revision(), uint64(1); got != want {
		t.Errorf("m.Revision() = %v, want %v", got, want)
	}
	if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeNotInitialized {
		t.Errorf("no version before stale: got %q, want %q", got, purramcp.CodeNotInitialized)
	}
	if err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728); err != nil {
		t.Fatal(err)
	}
	if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeCatalogStale {
		t.Errorf("purramcp.CodeOf(m.Check(0)) = %q, want %q", got, purramcp.CodeCatalogStale)
	}
	if err := m.Check(1); err != nil {
		t.Errorf("m.Check(1): %v", err)
	}
	m.OnNotification("notifications/resources/list_changed")
	m.OnNotification("notifications/message")
	if got, want := m.Revision(), uint64(1); got != want {
		t.Errorf("other methods are ignored: got %v, want %v", got, want)
	}
	m.Close()
	m.Close()
	if got := purramcp.CodeOf(m.Check(1)); got != purramcp.CodeConnectionClosed {
		t.Errorf("closed wins: got %q, want %q", got, purramcp.CodeConnectionClosed)
	}
}

// TestMonitor_NewClientOptions: the options NewClient builds its client
// with are a copy of the host's: list changes count on the monitor and then
// reach the host's handler, multi-round-trip retries are disabled and no
// capability is advertised unless the host sets one; the host's options are
// not modified.
func TestMonitor_NewClientOptions(t *testing.T) {
	var hostCalls int
	var mu sync.Mutex
	base := &mcp.ClientOptions{KeepAlive: 7, ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		mu.Lock()
		hostCalls++
		mu.Unlock()
	}}
	m := purramcp.NewCatalogMonitor()
	opts := purramcp.ClientOptionsOf(m, base)
	if opts == base {
		t.Fatalf("opts = %v, want anything else", opts)
	}
	if opts.KeepAlive != base.KeepAlive {
		t.Errorf("opts.KeepAlive = %v, want %v", opts.KeepAlive, base.KeepAlive)
	}
	if base.MultiRoundTrip != nil {
		t.Errorf("base unchanged: got %v, want nil", base.MultiRoundTrip)
	}
	if opts.MultiRoundTrip == nil {
		t.Fatalf("opts.MultiRoundTrip = nil, want non-nil")
	}
	if !opts.MultiRoundTrip.Disabled {
		t.Errorf("opts.MultiRoundTrip.Disabled is false")
	}
	opts.ToolListChangedHandler(t.Context(), nil)
	if got, want := m.Revision(), uint64(1); got != want {
		t.Errorf("m.Revision() = %v, want %v", got, want)
	}
	if hostCalls != 1 {
		t.Errorf("the host's handler runs too: got %v, want %v", hostCalls, 1)
	}

	bare := purramcp.ClientOptionsOf(purramcp.NewCatalogMonitor(), nil)
	if bare.ToolListChangedHandler == nil {
		t.Fatalf("bare.ToolListChangedHandler = nil, want non-nil")
	}
	if !bare.MultiRoundTrip.Disabled {
		t.Errorf("bare.MultiRoundTrip.Disabled is false")
	}
	if want := (&mcp.ClientCapabilities{}); !reflect.DeepEqual(bare.Capabilities, want) {
		t.Errorf("no roots capability (go-sdk's nil default): got %v, want %v", bare.Capabilities, want)
	}
	if base.Capabilities != nil {
		t.Errorf("base unchanged: got %v, want nil", base.Capabilities)
	}
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
				if got := h.monitor.ProtocolVersion(); got != version {
					t.Errorf("h.monitor.ProtocolVersion() = %q, want %q", got, version)
				}
				if err := h.monitor.Attach(h.session); err != nil {
					t.Fatalf("the same session again: %v", err)
				}
				other := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
				err := h.monitor.Attach(other.session)
				if got := purramcp.CodeOf(err); got != purramcp.CodeProtocolConflict {
					t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeProtocolConflict)
				}
				if err := h.monitor.Check(0); err != nil {
					t.Errorf("a refused second session leaves the monitor open: %v", err)
				}
				if got := purramcp.CodeOf(purramcp.NewCatalogMonitor().Attach(nil)); got != purramcp.CodeBindingInvalid {
					t.Errorf("got %q, want %q", got, purramcp.CodeBindingInvalid)
				}

				if err := h.session.Close(); err != nil {
					t.Fatalf("h.session.Close(): %v", err)
				}
				synctest.Wait()
				if got := purramcp.CodeOf(h.monitor.Check(0)); got != purramcp.CodeConnectionClosed {
					t.Errorf("purramcp.CodeOf(h.monitor.Check(0)) = %q, want %q", got, purramcp.CodeConnectionClosed)
				}
			})
		})
	}
}

func TestMonitor_Concurrent(t *testing.T) {
	m := purramcp.NewCatalogMonitor()
	if err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125); err != nil {
		t.Fatal(err)
	}
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
	if got, want := m.Revision(), uint64(50); got != want {
		t.Errorf("m.Revision() = %v, want %v", got, want)
	}
	if err := m.Check(50); err != nil {
		t.Errorf("m.Check(50): %v", err)
	}
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
		if got := h.session.InitializeResult().ProtocolVersion; got != version {
			t.Errorf("C2: negotiated: got %q, want %q", got, version)
		}
		if got := h.monitor.ProtocolVersion(); got != version {
			t.Errorf("C2 at %s: got %q, want %q", version, got, version)
		}
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatalf("C2 at %s: %v", version, err)
		}
		snap := catalog.Snapshot()
		if snap.ProtocolVersion != version {
			t.Errorf("C2 at %s: got %q, want %q", version, snap.ProtocolVersion, version)
		}
		if d, ok := want[version]; ok {
			if snap.RevisionDigest != d {
				t.Errorf("C2 at %s: got %q, want %q", version, snap.RevisionDigest, d)
			}
		}
		digests[snap.RevisionDigest] = true
	}
	if got := len(digests); got != 3 {
		t.Errorf("C2: one digest per version: len = %d, want %d", got, 3)
	}
}

// TestBehaviorC3_ClosedMonitorDiscovery: discovery on a closed monitor fails
// mcp_connection_closed and sends nothing.
func TestBehaviorC3_ClosedMonitorDiscovery(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		h.monitor.Close()
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeConnectionClosed {
			t.Errorf("C3 at %s: got %q, want %q", version, got, purramcp.CodeConnectionClosed)
		}
		lists, _ := h.counts()
		if lists != 1 {
			t.Errorf("C3 at %s: lists unchanged: got %v, want %v", version, lists, 1)
		}
	})
}

// TestBehaviorC4_CloseMakesStale: closing the monitor makes an existing
// catalog stale; its Run fails mcp_connection_closed with no request.
func TestBehaviorC4_CloseMakesStale(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if catalog.Stale() {
			t.Errorf("C4 at %s", version)
		}
		h.monitor.Close()
		if !catalog.Stale() {
			t.Errorf("C4 at %s", version)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeConnectionClosed}); !reflect.DeepEqual(res, want) {
			t.Errorf("C4 at %s: got %v, want %v", version, res, want)
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("C4 at %s: got %v, want 0", version, calls)
		}
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
				if err != nil {
					t.Fatal(err)
				}
				srv.MCP.AddTool(sdkTool(t, f.Tool), srv.call) // re-adding counts as a change
				awaitServerNotify()
				if !catalog.Stale() {
					t.Fatalf("catalog.Stale() is false")
				}
				res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorCode != purramcp.CodeCatalogStale {
					t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeCatalogStale)
				}
				if !reflect.DeepEqual(res.Content, emptyEnvelope) {
					t.Errorf("res.Content = %v, want %v", res.Content, emptyEnvelope)
				}
				_, calls := h.counts()
				if calls != 0 {
					t.Errorf("calls = %v, want 0", calls)
				}
				again, err := discoverDefault(t, h, purramcp.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if again.Stale() {
					t.Errorf("again.Stale() is true")
				}
				if !catalog.Stale() {
					t.Errorf("stale for good")
				}
				if got, want := again.Snapshot().RevisionDigest, catalog.Snapshot().RevisionDigest; got != want {
					t.Errorf("again.Snapshot().RevisionDigest = %q, want %q", got, want)
				}
				res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorCode != "" {
					t.Errorf("the new catalog runs: got %q, want empty", res.ErrorCode)
				}
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
						if catalog != nil {
							t.Errorf("catalog = %v, want nil", catalog)
						}
						if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
							t.Errorf("K2 round %d: got %q, want %q", i, got, purramcp.CodeCatalogStale)
						}
					} else {
						synctest.Wait()
						if !catalog.Stale() {
							t.Fatalf("K2 round %d: ends up stale", i)
						}
						res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
						if err != nil {
							t.Fatal(err)
						}
						if res.ErrorCode != purramcp.CodeCatalogStale {
							t.Errorf("K2 round %d: got %q, want %q", i, res.ErrorCode, purramcp.CodeCatalogStale)
						}
					}
					_, calls := h.counts()
					if calls != 0 {
						t.Errorf("K2 round %d: got %v, want 0", i, calls)
					}
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
			if err != nil {
				t.Fatal(err)
			}
			done := runAsync(t.Context(), catalog.Registrations()[0])
			synctest.Wait()
			if !catalog.Stale() {
				t.Fatalf("K3 modern=%v", modern)
			}
			close(gate)
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeCatalogStale}); !reflect.DeepEqual(r.res, want) {
				t.Errorf("K3 modern=%v: late result discarded: got %v, want %v", modern, r.res, want)
			}
			_, calls := h.counts()
			if calls != 1 {
				t.Errorf("K3 modern=%v: got %v, want %v", modern, calls, 1)
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("h.session.Ping(t.Context(), nil): %v", err)
			}
		})
	}
}

// TestMonitor_ProtocolConflict: a second,
// different version fails mcp_protocol_conflict and closes the monitor; a
// monitor whose version differs from the session's fails discovery with
// mcp_protocol_conflict; a monitor attached to another session is refused.
// Nothing is sent in any case.
func TestMonitor_ProtocolConflict(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)

	m := purramcp.NewCatalogMonitor()
	if err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125); err != nil {
		t.Fatal(err)
	}
	err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728)
	if got := purramcp.CodeOf(err); got != purramcp.CodeProtocolConflict {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeProtocolConflict)
	}
	if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeConnectionClosed {
		t.Errorf("a conflict closes the monitor: got %q, want %q", got, purramcp.CodeConnectionClosed)
	}
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: m})
	if got := purramcp.CodeOf(err); got != purramcp.CodeConnectionClosed {
		t.Errorf("discovery on the closed monitor: got %q, want %q", got, purramcp.CodeConnectionClosed)
	}

	other := purramcp.NewCatalogMonitor()
	if err := other.AcceptProtocolVersion(purramcp.ProtocolVersion20250618); err != nil {
		t.Fatal(err)
	}
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: other})
	if got := purramcp.CodeOf(err); got != purramcp.CodeProtocolConflict {
		t.Errorf("monitor version differs from the session's: got %q, want %q", got, purramcp.CodeProtocolConflict)
	}

	h2 := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: h2.monitor})
	if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
		t.Errorf("monitor attached to another session: got %q, want %q", got, purramcp.CodeBindingInvalid)
	}
	if got := purramcp.CodeOf(h.monitor.Attach(h2.session)); got != purramcp.CodeProtocolConflict {
		t.Errorf("a second session: got %q, want %q", got, purramcp.CodeProtocolConflict)
	}
	if err := h.monitor.Check(0); err != nil {
		t.Errorf("a refused second session leaves the monitor open: %v", err)
	}

	lists, _ := h.counts()
	if lists != 0 {
		t.Errorf("lists = %v, want 0", lists)
	}
	lists, _ = h2.counts()
	if lists != 0 {
		t.Errorf("lists = %v, want 0", lists)
	}
}

// legacyVersions are the versions AcceptLegacyProtocols adds.
var legacyVersions = []string{purramcp.ProtocolVersion20241105, purramcp.ProtocolVersion20250326}

// TestMonitor_LegacyVersions: the legacy versions fail
// mcp_protocol_unsupported by default and are accepted after
// AcceptLegacyProtocols; OfferedVersion reports every version given,
// accepted or not.
func TestMonitor_LegacyVersions(t *testing.T) {
	if purramcp.ProtocolVersion20241105 != "2024-11-05" {
		t.Errorf("purramcp.ProtocolVersion20241105 = %q, want %q", purramcp.ProtocolVersion20241105, "2024-11-05")
	}
	if purramcp.ProtocolVersion20250326 != "2025-03-26" {
		t.Errorf("purramcp.ProtocolVersion20250326 = %q, want %q", purramcp.ProtocolVersion20250326, "2025-03-26")
	}
	for _, v := range legacyVersions {
		m := purramcp.NewCatalogMonitor()
		if got := m.OfferedVersion(); got != "" {
			t.Errorf("nothing offered yet: got %q, want empty", got)
		}
		if got := purramcp.CodeOf(m.AcceptProtocolVersion(v)); got != purramcp.CodeProtocolUnsupported {
			t.Errorf("%v: got %q, want %q", v, got, purramcp.CodeProtocolUnsupported)
		}
		if got := m.OfferedVersion(); got != v {
			t.Errorf("m.OfferedVersion() = %q, want %q", got, v)
		}
		if got := m.ProtocolVersion(); got != "" {
			t.Errorf("m.ProtocolVersion() = %q, want empty", got)
		}
		if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeConnectionClosed {
			t.Errorf("purramcp.CodeOf(m.Check(0)) = %q, want %q", got, purramcp.CodeConnectionClosed)
		}

		m = purramcp.NewCatalogMonitor()
		m.AcceptLegacyProtocols()
		if err := m.AcceptProtocolVersion(v); err != nil {
			t.Fatalf("m.AcceptProtocolVersion(v): %v", err)
		}
		if got := m.ProtocolVersion(); got != v {
			t.Errorf("m.ProtocolVersion() = %q, want %q", got, v)
		}
		if got := m.OfferedVersion(); got != v {
			t.Errorf("also after success: got %q, want %q", got, v)
		}
		if err := m.Check(0); err != nil {
			t.Errorf("m.Check(0): %v", err)
		}
		if got := purramcp.CodeOf(m.AcceptProtocolVersion(purramcp.ProtocolVersion20251125)); got != purramcp.CodeProtocolConflict {
			t.Errorf("got %q, want %q", got, purramcp.CodeProtocolConflict)
		}
		if got := m.OfferedVersion(); got != purramcp.ProtocolVersion20251125 {
			t.Errorf("m.OfferedVersion() = %q, want %q", got, purramcp.ProtocolVersion20251125)
		}
	}
	m := purramcp.NewCatalogMonitor()
	m.AcceptLegacyProtocols()
	if got := purramcp.CodeOf(m.AcceptProtocolVersion("2024-10-07")); got != purramcp.CodeProtocolUnsupported {
		t.Errorf("only the two legacy versions are added: got %q, want %q", got, purramcp.CodeProtocolUnsupported)
	}
	if got := m.OfferedVersion(); got != "2024-10-07" {
		t.Errorf("m.OfferedVersion() = %q, want %q", got, "2024-10-07")
	}
	m = purramcp.NewCatalogMonitor()
	m.AcceptLegacyProtocols()
	if err := m.AcceptProtocolVersion(purramcp.ProtocolVersion20260728); err != nil {
		t.Fatalf("current versions stay accepted: %v", err)
	}
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
	ss, err := s.MCP.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close(); _ = ss.Wait() })
	m := purramcp.NewCatalogMonitor()
	if legacy {
		m.AcceptLegacyProtocols()
	}
	client := m.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
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
			if cs != nil {
				t.Errorf("cs = %v, want nil", cs)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeProtocolUnsupported {
				t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeProtocolUnsupported)
			}
			if got := m.OfferedVersion(); got != version {
				t.Errorf("m.OfferedVersion() = %q, want %q", got, version)
			}
			if got := purramcp.CodeOf(m.Check(0)); got != purramcp.CodeConnectionClosed {
				t.Errorf("purramcp.CodeOf(m.Check(0)) = %q, want %q", got, purramcp.CodeConnectionClosed)
			}

			cs, m, err = connectLegacy(t, s, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("cs.InitializeResult().ProtocolVersion = %q, want %q", got, version)
			}
			if got := m.ProtocolVersion(); got != version {
				t.Errorf("m.ProtocolVersion() = %q, want %q", got, version)
			}
			if got := m.OfferedVersion(); got != version {
				t.Errorf("m.OfferedVersion() = %q, want %q", got, version)
			}
			h := sessionHarness{session: cs, monitor: m, counts: s.counts, lastArguments: s.lastArguments}
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			snap := catalog.Snapshot()
			if snap.ProtocolVersion != version {
				t.Errorf("snap.ProtocolVersion = %q, want %q", snap.ProtocolVersion, version)
			}
			if snap.RevisionDigest != wantDigest[version] {
				t.Errorf("snap.RevisionDigest = %q, want %q", snap.RevisionDigest, wantDigest[version])
			}
			if want := loadMCPFixture(t).RevisionDigest; snap.RevisionDigest == want {
				t.Errorf("the version is in the digest: got %q, want anything else", snap.RevisionDigest)
			}
			res, err := catalog.Registrations()[0].Run(context.Background(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != "" {
				t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
			}
			if res.EffectState != "not_started" {
				t.Errorf("a read tool: got %q, want %q", res.EffectState, "not_started")
			}
			if want := map[string]any{"count": float64(1)}; !reflect.DeepEqual(res.Content.Structured, want) {
				t.Errorf("res.Content.Structured = %v, want %v", res.Content.Structured, want)
			}
			if got, want := s.lastArguments(), json.RawMessage(`{"q":"a"}`); !reflect.DeepEqual(got, want) {
				t.Errorf("s.lastArguments() = %v, want %v", got, want)
			}
			lists, calls := s.counts()
			if got, want := [2]int{lists, calls}, [2]int{1, 1}; !reflect.DeepEqual(got, want) {
				t.Errorf("[lists calls] = %v, want %v", got, want)
			}
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
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
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
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, hostOptions)
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.StreamableClientTransport{Endpoint: hs.URL,
		HTTPClient: &http.Client{Transport: transport}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	sessionOpen := true
	defer func() {
		if sessionOpen {
			_ = cs.Close()
		}
	}()
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	if got := monitor.ProtocolVersion(); got != wantVersion {
		t.Errorf("negotiated over HTTP: got %q, want %q", got, wantVersion)
	}
	h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts, lastArguments: srv.lastArguments}

	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if wantVersion == purramcp.ProtocolVersion20251125 {
		if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
			t.Errorf("fixture digest over HTTP: got %q, want %q", got, f.RevisionDigest)
		}
	}
	reg := catalog.Registrations()[0]
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}},
		EffectState: "not_started"}); !reflect.DeepEqual(res, want) {
		t.Errorf("res = %v, want %v", res, want)
	}
	if got, want := string(srv.lastArguments()), `{"q":"a"}`; !jsonEqual(t, got, want) {
		t.Errorf("got %s, want JSON equal to %s", got, want)
	}

	srv.MCP.AddTool(sdkTool(t, json.RawMessage(`{"name":"remote.added","inputSchema":{"type":"object"}}`)), srv.call)
	select { // real sockets, so no synctest bubble; the wait is on the monitor's count
	case <-changed:
	case <-time.After(waitFor):
		t.Fatalf("the list change did not reach the client over HTTP")
	}
	if !catalog.Stale() {
		t.Fatalf("the list change reaches the client over HTTP")
	}
	res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeCatalogStale {
		t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeCatalogStale)
	}
	_, calls := srv.counts()
	if calls != 1 {
		t.Errorf("no request for a stale catalog: got %v, want %v", calls, 1)
	}

	again, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Stale() {
		t.Errorf("again.Stale() is true")
	}
	if got, want := again.Snapshot().RevisionDigest, catalog.Snapshot().RevisionDigest; got != want {
		t.Errorf("the bound tool did not change: got %q, want %q", got, want)
	}
	res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	lists, calls := srv.counts()
	if lists != 2 {
		t.Errorf("lists = %v, want %v", lists, 2)
	}
	if calls != 2 {
		t.Errorf("calls = %v, want %v", calls, 2)
	}

	sessionOpen = false
	if err := cs.Close(); err != nil {
		t.Fatalf("cs.Close(): %v", err)
	}
	// Polls: the monitor closes on its own goroutine once go-sdk's session
	// over real HTTP sockets has ended; no bubble holds them, nothing signals it.
	if !eventually(func() bool { return monitor.Check(monitor.Revision()) != nil }, waitFor, tick) {
		t.Fatalf("the monitor closes with the session: not met in time")
	}
	res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeConnectionClosed {
		t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeConnectionClosed)
	}
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
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.StreamableClientTransport{Endpoint: hs.URL,
		HTTPClient: &http.Client{Transport: transport}, MaxRetries: 1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts, lastArguments: srv.lastArguments}
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}

	hs.CloseClientConnections()
	hs.Close()
	res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError}); !reflect.DeepEqual(res, want) {
		t.Errorf("res = %v, want %v", res, want)
	}
	_, err = discoverDefault(t, h, purramcp.Limits{})
	if got := purramcp.CodeOf(err); got != purramcp.CodeTransportError {
		t.Errorf("discovery against a dead server: got %q, want %q", got, purramcp.CodeTransportError)
	}
	if err := monitor.Check(monitor.Revision()); err != nil {
		t.Errorf("go-sdk keeps the HTTP session open: %v", err)
	}
}

// A real child process over stdio: testdata/stdioserver is a go-sdk server on
// mcp.StdioTransport, launched with mcp.CommandTransport.

// buildStdioServer returns testdata/stdioserver built with the go command of
// the running toolchain, once per test binary, into the package's temporary
// directory (see TestMain).
func buildStdioServer(t *testing.T) string {
	t.Helper()
	b := stdioServerBinary()
	if b.err != nil {
		t.Fatalf("go build ./testdata/stdioserver: %s: %v", b.output, b.err)
	}
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
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}),
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	want := version
	if want == "" {
		want = purramcp.ProtocolVersion20260728
	}
	if got := monitor.ProtocolVersion(); got != want {
		t.Fatalf("negotiated over stdio: got %q, want %q", got, want)
	}
	return stdioSession{cmd: cmd, session: cs, monitor: monitor}
}

// closeStdio closes the session and checks that the child exited with
// status exit and was reaped, and that the monitor closed with the session.
func closeStdio(t *testing.T, s stdioSession, exit int) {
	t.Helper()
	err := s.session.Close()
	if exit == 0 {
		if err != nil {
			t.Errorf("clean exit: %v", err)
		}
	}
	if s.cmd.ProcessState == nil {
		t.Fatalf("the child was waited for: got nil")
	}
	if !s.cmd.ProcessState.Exited() {
		t.Errorf("the child exited")
	}
	if got := s.cmd.ProcessState.ExitCode(); got != exit {
		t.Errorf("s.cmd.ProcessState.ExitCode() = %v, want %v", got, exit)
	}
	// Polls: the monitor closes on its own goroutine once go-sdk's session
	// with a real child process has ended; no bubble holds an OS process.
	if !eventually(func() bool { return s.monitor.Check(s.monitor.Revision()) != nil }, waitFor, tick) {
		t.Fatalf("condition not met in time")
	}
	if got := purramcp.CodeOf(s.monitor.Check(s.monitor.Revision())); got != purramcp.CodeConnectionClosed {
		t.Errorf("got %q, want %q", got, purramcp.CodeConnectionClosed)
	}
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
		if err != nil {
			t.Fatalf("L1 at %s: %v", version, err)
		}
		if version == purramcp.ProtocolVersion20251125 {
			if got := catalog.Snapshot().RevisionDigest; got != smokeDigest {
				t.Errorf("L1 at %s: got %q, want %q", version, got, smokeDigest)
			}
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{}`), purramcp.ToolContext{CallID: "call"})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 3.0}},
			EffectState: "not_started"}); !reflect.DeepEqual(res, want) {
			t.Errorf("L1 at %s: got %v, want %v", version, res, want)
		}
		if err := s.session.Ping(t.Context(), nil); err != nil {
			t.Errorf("L1 at %s: %v", version, err)
		}
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
		if err != nil {
			t.Fatalf("L2 at %s: %v", version, err)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("L2 at %s: got %q, want empty", version, res.ErrorCode)
		}
		if want := map[string]any{"count": 3.0}; !reflect.DeepEqual(res.Content.Structured, want) {
			t.Errorf("L2 at %s: got %v, want %v", version, res.Content.Structured, want)
		}
		if got := len(res.Content.Text); got != 1 {
			t.Fatalf("L2 at %s: len = %d, want %d", version, got, 1)
		}
		if got, want := res.Content.Text[0], `{"count":3}`; !jsonEqual(t, got, want) {
			t.Errorf("L2 at %s: got %s, want JSON equal to %s", version, got, want)
		}
		if err := s.session.Ping(t.Context(), nil); err != nil {
			t.Errorf("s.session.Ping(t.Context(), nil): %v", err)
		}
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
		if err != nil {
			t.Fatalf("stdio at %q: %v", version, err)
		}
		if version == purramcp.ProtocolVersion20251125 {
			if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
				t.Errorf("stdio fixture digest: got %q, want %q", got, f.RevisionDigest)
			}
		}
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"found"}, Structured: map[string]any{"count": 1.0}},
			EffectState: "not_started"}); !reflect.DeepEqual(res, want) {
			t.Errorf("stdio at %q: got %v, want %v", version, res, want)
		}
		res, err = reg.Run(t.Context(), json.RawMessage(`{"q":"too long"}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeInvalidArguments)
		}
		closeStdio(t, s, 0)
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeConnectionClosed {
			t.Errorf("after close at %q: got %q, want %q", version, res.ErrorCode, purramcp.CodeConnectionClosed)
		}
	}

	s := connectStdio(t, bin, "")
	bindings := map[string]purramcp.ToolBinding{"remote.exit": {LocalName: "exit",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Exit"}, Scope: purramcp.Unscoped}}
	catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "fixture", bindings, purramcp.DiscoveryOptions{Monitor: s.monitor})
	if err != nil {
		t.Fatal(err)
	}
	res, err := catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError}); !reflect.DeepEqual(res, want) {
		t.Errorf("the child exits mid-call: got %v, want %v", res, want)
	}
	// Polls: as in closeStdio, a real child process.
	if !eventually(func() bool { return s.monitor.Check(s.monitor.Revision()) != nil }, waitFor, tick) {
		t.Fatalf("the monitor closes with the session: not met in time")
	}
	res, err = catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeConnectionClosed {
		t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeConnectionClosed)
	}
	closeStdio(t, s, 3)
}
