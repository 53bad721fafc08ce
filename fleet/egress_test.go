package fleet_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// headerLog records the header of every request a handler receives.
type headerLog struct {
	mu  sync.Mutex
	got []http.Header
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.got = append(l.got, r.Header.Clone())
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) requests() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.got...)
}

// redirectingUpstream answers every request with a 307 to the same path
// on target.
func redirectingUpstream(target string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target+r.URL.Path)
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
}

// TestHTTP_RedirectToAnotherOriginGetsNoCredential: an upstream answers
// 307 to another origin (another loopback port, a working MCP server).
// The config's headers (an Authorization and an API key from ${env:…})
// never reach it: the MCP client follows no redirect off the configured
// origin, and the connection fails mcp_egress_refused, through Connect
// and in the fleet's status.
func TestHTTP_RedirectToAnotherOriginGetsNoCredential(t *testing.T) {
	t.Setenv("FLEET_TEST_KEY", "s3cret-key")
	r := &restartable{}
	r.restart()
	t.Cleanup(r.stop)
	var third headerLog
	thirdParty := httptest.NewServer(third.wrap(r))
	t.Cleanup(thirdParty.Close)
	upstream := httptest.NewServer(redirectingUpstream(thirdParty.URL))
	t.Cleanup(upstream.Close) // after the fleet's cleanup, which closes its streams
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"web": {"type": "http", "url": "` + upstream.URL + `/mcp",
		"headers": {"Authorization": "Bearer ${env:FLEET_TEST_KEY}", "X-Api-Key": "${env:FLEET_TEST_KEY}"},
		"limits": {"timeout": "2s"},
		"tools": {"units.convert": {"as": "convert_units"}, "units.list": {"as": "list_units"}}}}}`))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := fleet.Connect(ctx, cfg.Servers["web"], fleet.ConnectOptions{})
	if s != nil {
		s.Close()
	}
	assert.Equal(t, purramcp.CodeEgressRefused, purramcp.CodeOf(err), "Connect: %v", err)

	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff})
	st := statusOf(t, f, "web")
	assert.NotEqual(t, fleet.StateReady, st.State)
	assert.Equal(t, purramcp.CodeEgressRefused, st.Code)
	require.NoError(t, f.Close())

	for i, h := range third.requests() {
		assert.Empty(t, h.Get("Authorization"), "request %d to the third party carried the Authorization header", i)
		assert.Empty(t, h.Get("X-Api-Key"), "request %d to the third party carried the API key", i)
	}
	assert.Empty(t, third.requests(), "the third party received no request")
}

// TestHTTP_RedirectMidSessionIsRefused: a server that starts answering 307
// to another origin after the session is up gets no hop: the call fails
// (mcp_transport_error, not sent elsewhere), the fleet's reconnection is
// refused with mcp_egress_refused, and the third party receives nothing.
func TestHTTP_RedirectMidSessionIsRefused(t *testing.T) {
	t.Setenv("FLEET_TEST_KEY", "s3cret-key")
	r := &restartable{}
	r.restart()
	t.Cleanup(r.stop)
	var third headerLog
	thirdParty := httptest.NewServer(third.wrap(r))
	t.Cleanup(thirdParty.Close)
	var redirect atomic.Bool
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if redirect.Load() {
			redirectingUpstream(thirdParty.URL).ServeHTTP(w, req)
			return
		}
		r.ServeHTTP(w, req)
	}))
	t.Cleanup(upstream.Close) // after the fleet's cleanup, which closes its streams
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"web": {"type": "http", "url": "` + upstream.URL + `/mcp",
		"headers": {"X-Api-Key": "${env:FLEET_TEST_KEY}"}, "limits": {"timeout": "2s"},
		"tools": {"units.convert": {"as": "convert_units"}, "units.list": {"as": "list_units"}}}}}`))
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff})
	require.Equal(t, fleet.StateReady, statusOf(t, f, "web").State)
	convert := registration(t, f, "convert_units")
	require.Equal(t, "", run(t, convert, convertArgs))

	redirect.Store(true)
	calls := r.calls.Load()
	assert.Contains(t, []string{purramcp.CodeTransportError, purramcp.CodeConnectionClosed}, run(t, convert, convertArgs))
	st := waitRefused(t, f)
	assert.Equal(t, purramcp.CodeEgressRefused, st.Code)
	require.NoError(t, f.Close())
	assert.Equal(t, calls, r.calls.Load(), "no call reached a server after the redirect")
	assert.Empty(t, third.requests(), "the third party received no request")
}

// waitRefused waits until server web's status carries a code and is not
// ready, and returns it.
func waitRefused(t *testing.T, f *fleet.Fleet) fleet.ServerStatus {
	t.Helper()
	var st fleet.ServerStatus
	waitFor(t, "web refused", func() bool {
		st = statusOf(t, f, "web")
		return st.State != fleet.StateReady && st.Code == purramcp.CodeEgressRefused
	})
	return st
}
