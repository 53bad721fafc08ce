package purramcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// Streamable HTTP (gosdk-notes §7): a go-sdk server behind
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
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
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
	require.Eventually(t, catalog.Stale, waitFor, tick, "the list change reaches the client over HTTP")
	res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "mcp_catalog_stale", res.ErrorCode)
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
	require.Eventually(t, func() bool { return monitor.Check(monitor.Revision()) != nil }, waitFor, tick, "the monitor closes with the session")
	res, err = again.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "mcp_connection_closed", res.ErrorCode)
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
// go-sdk does not end the session then (gosdk-notes §7), so the monitor
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
	assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_transport_error"}, res)
	_, err = discoverDefault(t, h, purramcp.Limits{})
	assert.Equal(t, "mcp_transport_error", purramcp.CodeOf(err), "discovery against a dead server")
	assert.NoError(t, monitor.Check(monitor.Revision()), "go-sdk keeps the HTTP session open")
}
