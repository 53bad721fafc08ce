package oauth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/egress"
)

// TestAuthClient_EgressRule: the client of every OAuth request (metadata,
// registration, token, refresh) holds the MCP server's egress rule. For a
// public server, a target on loopback (http or https), in 10.0.0.0/8, in
// CGNAT, at 169.254.169.254, or on plain http is refused
// (mcp_egress_refused); for a server on a private network, loopback and
// link-local are; a redirect from a loopback https server to http, or to
// 169.254.169.254, is refused at that hop. Nothing is sent to any of them:
// the loopback peers count no request, and the base transport's dialer
// (which would record a connection and fail it, never dialing) is never
// asked, because the rule's own dialer refuses each address before it
// connects.
func TestAuthClient_EgressRule(t *testing.T) {
	var hits atomic.Int32
	count := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	plain := httptest.NewServer(count)
	defer plain.Close()
	secure := httptest.NewTLSServer(count)
	defer secure.Close()
	var redirects atomic.Int32
	redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirects.Add(1)
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	var (
		mu     sync.Mutex
		dialed []string
	)
	base := secure.Client().Transport.(*http.Transport).Clone() // trusts the test certificates
	base.DialContext = func(_ context.Context, _, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		return nil, errors.New("recorded, not dialed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		server  string
		targets []string
	}{
		{"https://93.184.216.34/mcp", []string{plain.URL + "/.well-known/oauth-authorization-server", secure.URL + "/token",
			"https://10.0.0.5/register", "https://100.64.0.1/token", "https://169.254.169.254/latest/meta-data/",
			"http://198.51.100.7/.well-known/oauth-protected-resource", "https://[::1]:443/token", "https://[fd00::1]/token"}},
		{"https://10.0.0.5/mcp", []string{plain.URL + "/x", secure.URL + "/token", "https://169.254.169.254/latest/meta-data/",
			"http://10.0.0.6/token"}},
	} {
		policy, err := egress.New(ctx, tc.server, egress.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.server, err)
		}
		hc, release := authClientFor(policy, &http.Client{Transport: base}, 2*time.Second, nil)
		for _, target := range tc.targets {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			if !errors.Is(err, purramcp.ErrEgressRefused) {
				t.Errorf("server %s, target %s: %v, want mcp_egress_refused", tc.server, target, err)
			}
		}
		release()
	}

	// A loopback https server's redirects: to plain http, to cloud metadata.
	policy, err := egress.New(ctx, redirector.URL+"/mcp", egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hc, release := authClientFor(policy, &http.Client{Transport: base}, 2*time.Second, nil)
	defer release()
	for _, to := range []string{plain.URL + "/token", "https://169.254.169.254/latest/meta-data/"} {
		_, err := hc.Get(redirector.URL + "/.well-known/oauth-authorization-server?to=" + to)
		if !errors.Is(err, purramcp.ErrEgressRefused) {
			t.Errorf("redirect to %s: %v, want mcp_egress_refused", to, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback peers got %d requests, want 0", n)
	}
	if n := redirects.Load(); n != 2 {
		t.Errorf("the redirecting server got %d requests, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 0 {
		t.Errorf("connections asked of the base dialer: %q", dialed)
	}
}
