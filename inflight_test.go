package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// In-flight errors, cancellation and timeouts (reference-behaviors.md §I,
// §J, adapter.md §4.5–4.6). Timeouts run in synctest bubbles (style.md T5).

// gatedServer answers tools/call only when its gate opens or the call's ctx
// ends (the reference's gate; go-sdk cancels a handler's ctx when the client
// sends notifications/cancelled).
type gatedServer struct {
	*sdkServer
	started, finished chan struct{}
	gate              chan struct{}
	rpcError          bool
	// ctxEnded counts handlers that returned because their ctx ended.
	ctxEnded atomic.Int32
}

func newGatedServer(t testing.TB, tool json.RawMessage) *gatedServer {
	g := &gatedServer{sdkServer: newSDKServer(t, nil, tool), started: make(chan struct{}, 8),
		finished: make(chan struct{}, 8), gate: make(chan struct{})}
	g.handler = func(ctx context.Context) (*mcp.CallToolResult, error) {
		defer func() { g.finished <- struct{}{} }()
		g.started <- struct{}{}
		select {
		case <-g.gate:
		case <-ctx.Done():
			g.ctxEnded.Add(1)
		}
		if g.rpcError {
			return nil, errors.New("private remote exception")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	return g
}

// ran is what one Run returned and when.
type ran struct {
	res     purramcp.ToolResult
	err     error
	elapsed time.Duration
}

// runAsync starts reg.Run in a goroutine.
func runAsync(ctx context.Context, reg purramcp.ToolDefinition) <-chan ran {
	done := make(chan ran, 1)
	start := time.Now()
	go func() {
		res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
		done <- ran{res, err, time.Since(start)}
	}()
	return done
}

// inFlight runs one reference in-flight mode against a gated go-sdk server at
// version, inside a synctest bubble: start the call, wait until the handler
// runs, apply the mode. Common asserts: one call, the handler finishes, the
// session answers a ping.
func inFlight(t *testing.T, id, mode, version string) {
	f := loadMCPFixture(t)
	synctest.Test(t, func(t *testing.T) {
		g := newGatedServer(t, f.Tool)
		g.rpcError = mode == "rpc"
		h := sdkHarness(t, g.sdkServer, version)
		limits := purramcp.Limits{Timeout: 2 * time.Second}
		if mode == "timeout" {
			limits.Timeout = 100 * time.Millisecond
		}
		reg := discoverWith(t, h, limits, nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, reg)
		<-g.started
		switch mode {
		case "stale":
			g.server.AddTool(sdkTool(t, f.Tool), g.call)
			require.Eventually(t, func() bool { return h.monitor.Revision() > 0 }, waitFor, tick, "%s: list change seen", id)
			close(g.gate)
		case "rpc":
			close(g.gate)
		case "cancel":
			cancel()
		}
		r := <-done
		<-g.finished
		switch mode {
		case "cancel":
			assert.ErrorIs(t, r.err, purramcp.ErrCanceled, id)
			assert.ErrorIs(t, r.err, context.Canceled, id)
			assert.Equal(t, purramcp.ToolResult{}, r.res, "%s: a cancellation is not an error envelope", id)
			assert.EqualValues(t, 1, g.ctxEnded.Load(), "%s: the server saw notifications/cancelled", id)
		case "timeout":
			assert.Equal(t, 100*time.Millisecond, r.elapsed, "%s: Run returns at its timeout", id)
			assert.EqualValues(t, 1, g.ctxEnded.Load(), "%s: go-sdk's cancel notification unblocked the server", id)
		}
		if mode != "cancel" {
			require.NoError(t, r.err, id)
			want := map[string]string{"timeout": "mcp_timeout", "stale": "mcp_catalog_stale", "rpc": "mcp_protocol_error"}[mode]
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: want}, r.res, id)
		}
		lists, calls := h.counts()
		assert.Equal(t, 1, lists, id)
		assert.Equal(t, 1, calls, id)
		assert.NoError(t, h.session.Ping(t.Context(), nil), "%s: session left open", id)
	})
}

// TestBehaviorI1_Timeout: the adapter's own deadline → mcp_timeout, exactly
// at Limits.Timeout.
func TestBehaviorI1_Timeout(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I1", "timeout", version) })
	}
}

// TestBehaviorI2_StaleInFlight: a list change while the call is in flight
// discards the late result → mcp_catalog_stale.
func TestBehaviorI2_StaleInFlight(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I2", "stale", version) })
	}
}

// TestBehaviorI3_RPCError: the handler's private exception arrives as a
// JSON-RPC error → mcp_protocol_error, no remote text.
func TestBehaviorI3_RPCError(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I3", "rpc", version) })
	}
}

// TestBehaviorI5_Cancel: the caller's ctx ends mid-call → ErrCanceled, not an
// envelope; the server handler's ctx is canceled (notifications/cancelled).
func TestBehaviorI5_Cancel(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I5", "cancel", version) })
	}
}

// dropTransport is a server transport whose connection a test can close,
// as the Python reference closes the server's write stream.
type dropTransport struct {
	mcp.Transport

	mu   sync.Mutex // guards conn
	conn mcp.Connection
}

func (d *dropTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	return c, err
}

func (d *dropTransport) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = d.conn.Close()
}

// TestBehaviorI4_Disconnect: the connection goes away mid-call →
// mcp_transport_error; the monitor closes with the session, so the next Run
// fails mcp_connection_closed without a request.
func TestBehaviorI4_Disconnect(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, closeOnCall: true, pages: []string{toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_transport_error", res.ErrorCode, "I4 raw modern=%v", modern)
		assert.Equal(t, emptyEnvelope, res.Content)
		require.Eventually(t, func() bool { return h.monitor.Check(h.monitor.Revision()) != nil }, waitFor, tick)
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_connection_closed", res.ErrorCode, "the monitor closed with the session")
		_, calls := h.counts()
		assert.Equal(t, 1, calls, "I4 raw modern=%v", modern)
	}
	forEachVersion(t, func(t *testing.T, version string) {
		g := newGatedServer(t, f.Tool)
		st, ct := mcp.NewInMemoryTransports()
		drop := &dropTransport{Transport: st}
		ss, err := g.server.Connect(t.Context(), drop, nil)
		require.NoError(t, err)
		monitor := purramcp.NewCatalogMonitor()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).
			Connect(t.Context(), monitor.Transport(ct), &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = cs.Close()
			_ = ss.Wait()
		})
		require.NoError(t, monitor.Attach(cs))
		reg := discoverWith(t, sessionHarness{session: cs, monitor: monitor}, purramcp.Limits{}, nil)
		done := runAsync(t.Context(), reg)
		<-g.started
		drop.drop()
		r := <-done
		close(g.gate)
		<-g.finished
		require.NoError(t, r.err)
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_transport_error"},
			r.res, "I4 go-sdk server at %s", version)
		require.Eventually(t, func() bool { return monitor.Check(monitor.Revision()) != nil }, waitFor, tick)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_connection_closed", res.ErrorCode, "I4 at %s", version)
		_, calls := g.counts()
		assert.Equal(t, 1, calls, "I4 at %s", version)
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

// TestBehaviorJ2_CancelInFlight: canceling while the server holds the call
// rejects with ErrCanceled; on the wire the server receives
// notifications/cancelled for that request, and the session stays usable.
func TestBehaviorJ2_CancelInFlight(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, neverAnswer: true, pages: []string{toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := runAsync(ctx, reg)
		require.Eventually(t, func() bool { _, calls := h.counts(); return calls == 1 }, waitFor, tick)
		cancel()
		r := <-done
		assert.ErrorIs(t, r.err, purramcp.ErrCanceled, "J2 modern=%v", modern)
		assert.ErrorIs(t, r.err, context.Canceled, "J2 modern=%v", modern)
		assert.Equal(t, purramcp.ToolResult{}, r.res, "J2: not an error envelope")
		require.Eventually(t, func() bool { return raw.cancelledCalls() == 1 }, waitFor, tick,
			"J2 modern=%v: notifications/cancelled for the call", modern)
		assert.NoError(t, h.session.Ping(t.Context(), nil), "J2 modern=%v", modern)
		_, calls := h.counts()
		assert.Equal(t, 1, calls)
	}
}

// TestBehaviorJ3_CanceledRun: a done ctx sends nothing.
func TestBehaviorJ3_CanceledRun(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
		assert.ErrorIs(t, err, purramcp.ErrCanceled, "J3 at %s", version)
		assert.ErrorIs(t, err, context.Canceled, "J3 at %s", version)
		assert.Equal(t, purramcp.ToolResult{}, res)
		_, calls := h.counts()
		assert.Zero(t, calls, "J3 at %s", version)
	})
}

// TestRun_NoAnswerTimesOut: a tools/call answer that never comes fails
// mcp_timeout exactly at Limits.Timeout (the 30s default costs no real time in
// the bubble); go-sdk cancels the request on the wire and the session stays
// usable.
func TestRun_NoAnswerTimesOut(t *testing.T) {
	f := loadMCPFixture(t)
	for _, timeout := range []time.Duration{100 * time.Millisecond, 0} {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{neverAnswer: true, pages: []string{toolsPage(t, "", f.Tool)}}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{Timeout: timeout}, nil)
			want := timeout
			if want == 0 {
				want = purramcp.DefaultLimits().Timeout
			}
			start := time.Now()
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_timeout"}, res)
			assert.Equal(t, want, time.Since(start), "timeout %v", want)
			require.Eventually(t, func() bool { return raw.cancelledCalls() == 1 }, waitFor, tick, "timeout %v: request canceled on the wire", want)
			assert.NoError(t, h.session.Ping(t.Context(), nil))
			_, calls := h.counts()
			assert.Equal(t, 1, calls)
		})
	}
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

// TestRun_BlockedWriteTimesOut: a peer that stops reading blocks go-sdk's
// write; Run still returns at its timeout, and the abandoned goroutine ends
// when the session closes (synctest fails on a leftover goroutine).
func TestRun_BlockedWriteTimesOut(t *testing.T) {
	f := loadMCPFixture(t)
	synctest.Test(t, func(t *testing.T) {
		raw := &rawServer{stallCalls: true, pages: []string{toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		reg := discoverWith(t, h, purramcp.Limits{Timeout: 250 * time.Millisecond}, nil)
		start := time.Now()
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_timeout", res.ErrorCode)
		assert.Equal(t, 250*time.Millisecond, time.Since(start))
		_, calls := h.counts()
		assert.Zero(t, calls, "the request never reached the server")
	})
}
