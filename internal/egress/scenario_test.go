package egress

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// network maps the addresses of the scenario's named hosts to loopback
// listeners: Options.Dial connects to the listener of an address the
// policy allowed, and fails for any other. Nothing is dialed but
// loopback, and a peer that receives a request proves that the policy let
// it through.
type network struct {
	mu     sync.Mutex
	routes map[netip.AddrPort]string // address -> loopback host:port
	dialed []netip.AddrPort
}

func (n *network) route(addr string, to *httptest.Server) {
	u, _ := url.Parse(to.URL)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.routes == nil {
		n.routes = map[netip.AddrPort]string{}
	}
	n.routes[netip.MustParseAddrPort(addr)] = u.Host
}

func (n *network) dial(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, addr)
	to, ok := n.routes[addr]
	n.mu.Unlock()
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.AddrError{Err: "no route in the test network", Addr: addr.String()}}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

// scenarioNames is the fake DNS of the scenario.
var scenarioNames = map[string][]string{
	"mcp.public.test":   {"93.184.216.34"},
	"plain.public.test": {"93.184.216.35"},
	"internal.test":     {"10.0.0.5"},
	"metadata.test":     {"169.254.169.254"},
	"mcp.corp.test":     {"10.1.2.3"},
	"auth.corp.test":    {"10.0.0.5"},
}

// scenarioClient returns the client of serverURL's policy over the test
// network. TLS is not what the scenario checks: the peers' certificate is
// not verified.
func scenarioClient(t *testing.T, n *network, serverURL string) *http.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p, err := New(ctx, serverURL, Options{Resolver: fakeResolver(t, scenarioNames), Dial: n.dial})
	if err != nil {
		t.Fatalf("New(%q): %v", serverURL, err)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = nil
	base.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback test peers
	c := p.Client(p.Transport(base))
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestScenario_PublicServerPointsInside: a hostile public MCP server
// (mcp.public.test) names, in its metadata or its redirects, the user's
// own services: loopback ports (a Docker and an etcd API), 10.0.0.5, the
// cloud metadata address and a plain-http host. Each request is refused
// with mcp_egress_refused, and none of the peers standing in for those
// services receives anything.
func TestScenario_PublicServerPointsInside(t *testing.T) {
	n := &network{}
	victims := map[string]*peer{}
	for _, name := range []string{"docker", "etcd", "internal", "metadata", "plain"} {
		victims[name] = newPeer(t, name != "plain" && name != "docker" && name != "etcd", ok)
	}
	n.route("10.0.0.5:443", victims["internal"].Server)
	n.route("169.254.169.254:443", victims["metadata"].Server)
	n.route("169.254.169.254:80", victims["plain"].Server)
	n.route("93.184.216.35:80", victims["plain"].Server)
	du, _ := url.Parse(victims["docker"].URL)
	eu, _ := url.Parse(victims["etcd"].URL)
	targets := []struct {
		url  string
		rule Rule
		zone Zone
	}{
		{"http://" + du.Host + "/v1.41/containers/json", RuleScheme, ZoneRefused},
		{"http://localhost:" + eu.Port() + "/v3/kv/put", RuleScheme, ZoneRefused},
		{"https://" + du.Host + "/v1.41/containers/json", RuleAddress, ZoneLoopback},
		{"https://10.0.0.5/admin/users", RuleAddress, ZonePrivate},
		{"https://internal.test/admin/users", RuleAddress, ZonePrivate},
		{"https://169.254.169.254/latest/meta-data/", RuleAddress, ZoneLinkLocal},
		{"https://metadata.test/latest/meta-data/", RuleAddress, ZoneLinkLocal},
		{"http://plain.public.test/register", RuleScheme, ZoneRefused},
	}
	var server *peer
	server = newPeer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			redirectTo(to)(w, r)
			return
		}
		ok(w, r)
	})
	n.route("93.184.216.34:443", server.Server)
	c := scenarioClient(t, n, "https://mcp.public.test/mcp")

	if body, err := post(t, c, "https://mcp.public.test/mcp"); err != nil || body != "ok" {
		t.Fatalf("the server itself: %q, %v", body, err)
	}
	for _, tc := range targets {
		// Named in a metadata document: requested directly.
		_, err := post(t, c, tc.url)
		t.Run("direct", func(t *testing.T) { assertRefused(t, err, tc.rule, tc.zone) })
		// A redirect of the server's: from https, plain http is a downgrade.
		rule, zone := tc.rule, tc.zone
		if strings.HasPrefix(tc.url, "http:") {
			rule, zone = RuleDowngrade, ZoneRefused
		}
		_, err = post(t, c, "https://mcp.public.test/mcp?to="+url.QueryEscape(tc.url))
		t.Run("redirect", func(t *testing.T) { assertRefused(t, err, rule, zone) })
	}
	for name, v := range victims {
		if got := len(v.requests()); got != 0 {
			t.Errorf("%s received %d requests, want 0", name, got)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range n.dialed {
		if a != netip.MustParseAddrPort("93.184.216.34:443") {
			t.Errorf("dialed %s, want only the server", a)
		}
	}
}

// TestScenario_PrivateServerUsesPrivateAS: a server on a private network
// (mcp.corp.test, 10.1.2.3) whose authorization server is private too
// (auth.corp.test, 10.0.0.5) is reached, directly and by redirect; the
// same server still cannot send the client to loopback or link-local.
func TestScenario_PrivateServerUsesPrivateAS(t *testing.T) {
	n := &network{}
	as := newPeer(t, true, ok)
	metadata := newPeer(t, true, ok)
	var server *peer
	server = newPeer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			redirectTo(to)(w, r)
			return
		}
		ok(w, r)
	})
	n.route("10.1.2.3:443", server.Server)
	n.route("10.0.0.5:443", as.Server)
	n.route("169.254.169.254:443", metadata.Server)
	c := scenarioClient(t, n, "https://mcp.corp.test/mcp")
	for _, target := range []string{"https://auth.corp.test/token",
		"https://mcp.corp.test/mcp?to=" + url.QueryEscape("https://auth.corp.test/.well-known/oauth-authorization-server")} {
		if body, err := post(t, c, target); err != nil || body != "ok" {
			t.Errorf("%s: %q, %v; want ok", target, body, err)
		}
	}
	if got := len(as.requests()); got != 2 {
		t.Errorf("the private authorization server received %d requests, want 2", got)
	}
	_, err := post(t, c, "https://metadata.test/latest/meta-data/")
	assertRefused(t, err, RuleAddress, ZoneLinkLocal)
	_, err = post(t, c, "https://mcp.corp.test/mcp?to="+url.QueryEscape("https://169.254.169.254/"))
	assertRefused(t, err, RuleAddress, ZoneLinkLocal)
	_, err = post(t, c, "https://mcp.corp.test/mcp?to="+url.QueryEscape("https://127.0.0.1:1/"))
	assertRefused(t, err, RuleAddress, ZoneLoopback)
	if got := len(metadata.requests()); got != 0 {
		t.Errorf("the metadata service received %d requests, want 0", got)
	}
}
