package oauth

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/egress"
	"purra.dev/purramcp/internal/egress/egresstest"
	"purra.dev/purramcp/internal/oauthtest"
)

// namedNetwork maps the addresses of named peers to loopback listeners:
// its dial connects to the listener of an address the egress rule allowed
// and records every address it is asked for. Nothing but loopback is ever
// dialed.
type namedNetwork struct {
	mu     sync.Mutex
	routes map[netip.AddrPort]string
	asked  []netip.AddrPort
}

func (n *namedNetwork) dial(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error) {
	n.mu.Lock()
	n.asked = append(n.asked, addr)
	to, ok := n.routes[addr]
	n.mu.Unlock()
	if !ok {
		return nil, errors.New("no route")
	}
	return (&net.Dialer{}).DialContext(ctx, network, to)
}

func (n *namedNetwork) askedFor(a string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Contains(n.asked, netip.MustParseAddrPort(a))
}

// namedLogin signs in to srv, whose servers are published under names
// that resolve to the given addresses, each routed to its listener.
func namedLogin(t *testing.T, srv *oauthtest.Server, names map[string][]string, mcpAddr, asAddr string) (*Credentials, *namedNetwork, error) {
	t.Helper()
	mcpListener, asListener := srv.Addrs()
	n := &namedNetwork{routes: map[netip.AddrPort]string{netip.MustParseAddrPort(mcpAddr): mcpListener,
		netip.MustParseAddrPort(asAddr): asListener}}
	insecure := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback test peers with httptest's certificate
	base := &http.Transport{TLSClientConfig: insecure, DisableKeepAlives: true}
	asHost := ""
	for name, addrs := range names {
		if addrs[0] == netip.MustParseAddrPort(asAddr).Addr().String() {
			asHost = name
		}
	}
	browser := &http.Transport{TLSClientConfig: insecure, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == asHost+":443" {
				addr = asListener // the user's browser reaches the authorization server
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Login(ctx, LoginOptions{ServerURL: srv.URL, Store: &FileStore{Dir: t.TempDir() + "/tokens"},
		Browse: oauthtest.BrowseWith(browser), HTTPClient: &http.Client{Transport: base},
		egress: egress.Options{Resolver: egresstest.Resolver(names), Dial: n.dial}})
	return c, n, err
}

// TestLogin_NamedPeers: a server on a private network (mcp.corp.test,
// 10.1.2.3) whose authorization server is private too (auth.corp.test,
// 10.0.0.5) signs in; a public server (mcp.public.test, 203.0.113.10)
// whose metadata names that same private authorization server cannot
// send the sign-in there: mcp_auth_discovery_failed, and 10.0.0.5 is never
// asked for. Names resolve in the process and every connection is routed
// to a loopback listener.
func TestLogin_NamedPeers(t *testing.T) {
	private := oauthtest.New(t, oauthtest.Options{TLS: true, MCPOrigin: "https://mcp.corp.test",
		IssuerOrigin: "https://auth.corp.test"})
	c, n, err := namedLogin(t, private, map[string][]string{"mcp.corp.test": {"10.1.2.3"}, "auth.corp.test": {"10.0.0.5"}},
		"10.1.2.3:443", "10.0.0.5:443")
	if err != nil {
		t.Fatalf("private server, private authorization server: %v", err)
	}
	if c.Issuer != "https://auth.corp.test" || c.TokenURL != "https://auth.corp.test/token" || private.TokenRequests() != 1 {
		t.Errorf("credentials %v, token requests %d", c, private.TokenRequests())
	}
	if !n.askedFor("10.0.0.5:443") {
		t.Error("the private authorization server was not reached")
	}

	public := oauthtest.New(t, oauthtest.Options{TLS: true, MCPOrigin: "https://mcp.public.test",
		IssuerOrigin: "https://auth.corp.test"})
	_, n, err = namedLogin(t, public, map[string][]string{"mcp.public.test": {"203.0.113.10"}, "auth.corp.test": {"10.0.0.5"}},
		"203.0.113.10:443", "10.0.0.5:443")
	if got := purramcp.CodeOf(err); got != purramcp.CodeAuthDiscoveryFailed {
		t.Errorf("public server, private authorization server: %v, want %s", err, purramcp.CodeAuthDiscoveryFailed)
	}
	if n.askedFor("10.0.0.5:443") {
		t.Error("the private address was dialed for a public server")
	}
	if !n.askedFor("203.0.113.10:443") {
		t.Error("the public server was not reached")
	}
	if public.TokenRequests()+public.Registrations() != 0 {
		t.Error("the private authorization server got requests")
	}
}
