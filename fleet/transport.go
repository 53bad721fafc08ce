package fleet

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/egress"
	"purra.dev/purramcp/oauth"
)

// newTransport returns a fresh transport for one session with the server
// sc describes: its Dial, a child process over stdio (its standard error
// copied into ring), or streamable HTTP ([httpTransport]) whose every
// wait for an answer's headers is bounded by timeout. The returned func releases what the
// transport holds besides the session (an HTTP client's idle connections);
// the process, when there is one, is returned to be stopped with the
// session. k, when set, keeps the server's OAuth token on its requests.
func newTransport(ctx context.Context, sc ServerConfig, ring *stderrRing, timeout time.Duration, k *oauth.Keeper) (mcp.Transport, *process, func(), error) {
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
		t, release, err := httpTransport(ctx, sc, base, k)
		return t, nil, release, err
	}
}

// httpTransport returns streamable HTTP to sc.URL over a clone of base,
// under the egress rule of sc.URL (internal/egress): no connection to an
// address more internal than the server's, no redirect off its origin or
// from https to http (each an error with mcp_egress_refused, never a
// hop), and the config's headers (over k's bearer token, when k is set)
// only on requests to its origin. The func releases the client's idle
// connections.
func httpTransport(ctx context.Context, sc ServerConfig, base *http.Transport, k *oauth.Keeper) (mcp.Transport, func(), error) {
	policy, err := egress.New(ctx, sc.URL, egress.Options{})
	if err != nil {
		return nil, nil, err
	}
	tr := policy.Transport(base)
	var inner http.RoundTripper = tr
	if k != nil {
		inner = &oauth.Transport{Base: tr, Keeper: k} // the keeper's token, below the config's headers
	}
	client := policy.OriginClient(egress.AddHeaders(policy.Origin(), inner, egress.Static(sc.Headers)))
	// MaxRetries -1: a lost stream ends the session at once; the fleet
	// reconnects with a fresh session and rediscovers.
	t := &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: client, MaxRetries: -1}
	return t, tr.CloseIdleConnections, nil
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
