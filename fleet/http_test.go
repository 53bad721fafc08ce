package fleet_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// restartable serves MCP over streamable HTTP; restart replaces the server
// and forgets every session, as a restarted process does.
type restartable struct {
	handler atomic.Pointer[http.Handler]
	server  atomic.Pointer[mcp.Server]
	calls   atomic.Int32
	headers atomic.Pointer[http.Header]
}

// restart installs a fresh server; the old one's sessions end with it.
func (r *restartable) restart() {
	r.stop()
	srv := mcp.NewServer(&mcp.Implementation{Name: "http", Version: "1"}, nil)
	for _, tool := range unitTools("") {
		srv.AddTool(tool.Tool, tool.Handler)
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				r.calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	r.handler.Store(&h)
	r.server.Store(srv)
}

// stop ends every session of the current server.
func (r *restartable) stop() {
	if old := r.server.Load(); old != nil {
		for ss := range old.Sessions() {
			_ = ss.Close()
		}
	}
}

// ServeHTTP serves with the current server.
func (r *restartable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := req.Header.Clone()
	r.headers.Store(&h)
	(*r.handler.Load()).ServeHTTP(w, req)
}

func TestHTTP_RestartedServerSessionLost(t *testing.T) {
	t.Setenv("FLEET_TEST_KEY", "k-123")
	r := &restartable{}
	r.restart()
	ts := httptest.NewServer(r)
	defer ts.Close()
	defer r.stop()
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"web": {"type": "http", "url": "` + ts.URL + `",
		"headers": {"X-Key": "${env:FLEET_TEST_KEY}"}, "limits": {"timeout": "2s"},
		"tools": {"units.convert": {"as": "convert_units"}, "units.list": {"as": "list_units"}}}}}`))
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff})
	st := statusOf(t, f, "web")
	require.Equal(t, fleet.StateReady, st.State, "code %s", st.Code)
	assert.Equal(t, "k-123", (*r.headers.Load()).Get("X-Key"))
	convert := registration(t, f, "convert_units")
	assert.Equal(t, "", run(t, convert, convertArgs))

	r.restart()
	ts.CloseClientConnections()
	// The first call after the restart may be the one that finds the
	// session gone (the new server answers 404): it fails
	// mcp_transport_error, or mcp_connection_closed once the fleet took
	// the server out, and is not sent again.
	before := r.calls.Load()
	code := run(t, convert, convertArgs)
	assert.Contains(t, []string{"", purramcp.CodeConnectionClosed, purramcp.CodeTransportError}, code)
	if code != "" {
		assert.Equal(t, before, r.calls.Load(), "no server received the failed call")
	}
	waitFor(t, "the new session", func() bool {
		return run(t, convert, convertArgs) == "" && statusOf(t, f, "web").State == fleet.StateReady
	})
	assert.Equal(t, st.Digest, statusOf(t, f, "web").Digest)
	require.NoError(t, f.Close())
}
