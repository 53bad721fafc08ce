package fleet

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// newTransport returns a fresh transport for one session with the server
// sc describes: its Dial, a child process over stdio (its standard error
// copied into ring), or streamable HTTP whose every wait for an answer's
// headers is bounded by timeout. The returned func releases what the
// transport holds besides the session (an HTTP client's idle connections);
// the process, when there is one, is returned to be stopped with the
// session. k, when set, keeps the server's OAuth token on its requests.
func newTransport(ctx context.Context, sc ServerConfig, ring *stderrRing, timeout time.Duration, k *keeper) (mcp.Transport, *process, func(), error) {
	switch {
	case sc.Dial != nil:
		t, err := sc.Dial(ctx)
		if err == nil && t == nil {
			err = &purramcp.Error{Code: purramcp.CodeBindingInvalid}
		}
		return t, nil, func() {}, err
	case sc.Command != "":
		p, err := startProcess(sc, ring)
		if err != nil {
			return nil, nil, nil, err
		}
		return &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, p, func() {}, nil
	default:
		base := http.DefaultTransport.(*http.Transport).Clone()
		// Bounds every request's wait for an answer's headers, the
		// DELETE that ends the session included; the notification stream
		// stays open once its headers came.
		base.ResponseHeaderTimeout = timeout
		var inner http.RoundTripper = base
		if k != nil {
			inner = &bearerTransport{inner: base, k: k} // the keeper's token, below the config's headers
		}
		client := &http.Client{Transport: &headerTransport{base: inner, headers: sc.Headers}}
		// MaxRetries -1: a lost stream ends the session at once; the fleet
		// reconnects with a fresh session and rediscovers.
		t := &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: client, MaxRetries: -1}
		return t, nil, base.CloseIdleConnections, nil
	}
}

// headerTransport adds the config's headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip sends a clone of req with the headers set.
func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(req)
}

// Grace periods of stopping a child process group: after closing its
// standard input, after SIGTERM, after SIGKILL, and for the stderr copy to
// reach the end of what the group wrote. Together they stay under a
// second, so that Close keeps its bound.
const (
	closeGrace  = 200 * time.Millisecond
	termGrace   = 200 * time.Millisecond
	killGrace   = 500 * time.Millisecond
	stderrGrace = 50 * time.Millisecond
)

// hasHeader reports whether headers names key, in any case.
func hasHeader(headers map[string]string, key string) bool {
	for k := range headers {
		if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(key) {
			return true
		}
	}
	return false
}
