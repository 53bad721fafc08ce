package egress

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// peer is a loopback HTTP server that records the header of every request
// it receives.
type peer struct {
	*httptest.Server
	mu  sync.Mutex
	got []http.Header
}

func newPeer(t *testing.T, tls bool, h http.HandlerFunc) *peer {
	t.Helper()
	p := &peer{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.got = append(p.got, r.Header.Clone())
		p.mu.Unlock()
		h(w, r)
	})
	if tls {
		p.Server = httptest.NewUnstartedServer(handler)
		p.EnableHTTP2 = true
		p.StartTLS()
	} else {
		p.Server = httptest.NewServer(handler)
	}
	t.Cleanup(p.Close)
	return p
}

func (p *peer) requests() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.got...)
}

func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target)
		w.WriteHeader(http.StatusTemporaryRedirect)
	}
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

var credentials = map[string]string{"Authorization": "Bearer s3cret-token", "X-Api-Key": "s3cret-key"}

// post sends a POST with a body, as the MCP client does, and returns the
// error or the body.
func post(t *testing.T, c *http.Client, target string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestOriginClient_NoRedirectToAnotherOrigin: the MCP server answers 307
// to another loopback port. The origin client refuses the hop: the third
// party receives nothing, let alone a credential.
func TestOriginClient_NoRedirectToAnotherOrigin(t *testing.T) {
	third := newPeer(t, false, ok)
	server := newPeer(t, false, redirectTo(third.URL+"/steal"))
	p := newPolicy(t, server.URL+"/mcp")
	c := p.OriginClient(AddHeaders(p.Origin(), p.Transport(nil), Static(credentials)))
	defer c.CloseIdleConnections()
	_, err := post(t, c, server.URL+"/mcp")
	assertRefused(t, err, RuleOrigin, ZoneRefused)
	if n := len(third.requests()); n != 0 {
		t.Errorf("the third party received %d requests, want 0", n)
	}
	if got := server.requests(); len(got) != 1 || got[0].Get("X-Api-Key") != "s3cret-key" {
		t.Errorf("the server received %v, want one request with its credentials", got)
	}
}

// TestOriginClient_SameOriginRedirect: a redirect within the origin is
// followed, with the credentials.
func TestOriginClient_SameOriginRedirect(t *testing.T) {
	var server *peer
	server = newPeer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			redirectTo(server.URL+"/mcp/")(w, r)
			return
		}
		ok(w, r)
	})
	p := newPolicy(t, server.URL+"/mcp")
	c := p.OriginClient(AddHeaders(p.Origin(), p.Transport(nil), Static(credentials)))
	defer c.CloseIdleConnections()
	body, err := post(t, c, server.URL+"/mcp")
	if err != nil || body != "ok" {
		t.Fatalf("post = %q, %v; want ok", body, err)
	}
	for i, h := range server.requests() {
		if h.Get("Authorization") != "Bearer s3cret-token" {
			t.Errorf("request %d: no credential", i)
		}
	}
}

// TestClient_HeadersOnlyToTheirOrigin: a client that follows redirects
// across origins (as OAuth discovery does) delivers the credentials to
// the configured origin only.
func TestClient_HeadersOnlyToTheirOrigin(t *testing.T) {
	third := newPeer(t, false, ok)
	server := newPeer(t, false, redirectTo(third.URL+"/next"))
	p := newPolicy(t, server.URL+"/mcp")
	c := p.Client(AddHeaders(p.Origin(), p.Transport(nil), Static(credentials)))
	defer c.CloseIdleConnections()
	body, err := post(t, c, server.URL+"/mcp")
	if err != nil || body != "ok" {
		t.Fatalf("post = %q, %v; want ok", body, err)
	}
	got := third.requests()
	if len(got) != 1 {
		t.Fatalf("the third party received %d requests, want 1", len(got))
	}
	if got[0].Get("Authorization") != "" || got[0].Get("X-Api-Key") != "" {
		t.Errorf("the third party received a credential: %v", got[0])
	}
}

// TestClient_NoDowngrade: an https server's redirect to plain http is
// refused, by either client, before anything reaches the http peer.
func TestClient_NoDowngrade(t *testing.T) {
	plain := newPeer(t, false, ok)
	server := newPeer(t, true, redirectTo(plain.URL+"/mcp"))
	p := newPolicy(t, server.URL+"/mcp")
	base := server.Client().Transport.(*http.Transport) // trusts the test certificate
	for _, c := range []*http.Client{p.Client(p.Transport(base)), p.OriginClient(p.Transport(base))} {
		_, err := post(t, c, server.URL+"/mcp")
		assertRefused(t, err, RuleDowngrade, ZoneRefused)
		c.CloseIdleConnections()
	}
	if n := len(plain.requests()); n != 0 {
		t.Errorf("the http peer received %d requests, want 0", n)
	}
	if n := len(server.requests()); n != 2 {
		t.Errorf("the https server received %d requests, want 2", n)
	}
}

// TestTransport_PublicServerCannotReachInternal: for a public server, a
// request to a loopback peer or to a name that resolves to an internal
// address is refused, by its URL or at dial time. The loopback peer
// receives nothing, and nothing is dialed but loopback.
func TestTransport_PublicServerCannotReachInternal(t *testing.T) {
	local := newPeer(t, false, ok)
	p := newPolicy(t, "https://public.test/mcp")
	c := p.Client(nil)
	defer c.CloseIdleConnections()
	lu, _ := url.Parse(local.URL)
	for _, tc := range []struct {
		target string
		rule   Rule
		zone   Zone
	}{
		{local.URL + "/", RuleScheme, ZoneRefused},
		{"https://" + lu.Host + "/", RuleAddress, ZoneLoopback},
		{"https://localhost:" + lu.Port() + "/", RuleAddress, ZoneLoopback},
		{"https://[::ffff:127.0.0.1]:" + lu.Port() + "/", RuleAddress, ZoneLoopback},
		{"https://loop.test:" + lu.Port() + "/", RuleAddress, ZoneLoopback},
		{"https://mapped.test:" + lu.Port() + "/", RuleAddress, ZoneLoopback},
		{"https://10.0.0.5/admin/users", RuleAddress, ZonePrivate},
		{"https://169.254.169.254/latest/meta-data/", RuleAddress, ZoneLinkLocal},
	} {
		_, err := post(t, c, tc.target)
		t.Run("", func(t *testing.T) { assertRefused(t, err, tc.rule, tc.zone) })
	}
	if n := len(local.requests()); n != 0 {
		t.Errorf("the loopback peer received %d requests, want 0", n)
	}
}

// TestTransport_NamesRefusedAtDial: names that resolve to internal
// addresses pass CheckURL (their text tells nothing) and are refused by
// the dialer's Control before connect; a test dial hook proves that the
// refused addresses are the only ones tried.
func TestTransport_NamesRefusedAtDial(t *testing.T) {
	p := newPolicy(t, "https://public.test/mcp")
	for _, tc := range []struct {
		target string
		zone   Zone
	}{
		{"https://internal.test/admin/users", ZonePrivate},
		{"https://cgnat.test/", ZonePrivate},
		{"https://ula.test/", ZonePrivate},
		{"https://metadata.test/latest/meta-data/", ZoneLinkLocal},
	} {
		c := p.Client(nil)
		_, err := post(t, c, tc.target)
		c.CloseIdleConnections()
		t.Run("", func(t *testing.T) { assertRefused(t, err, RuleAddress, tc.zone) })
	}
}

// TestTransport_ProxyIsTheUsersChoice: a proxy the base transport names is
// dialed even when it is more internal than the server (the user chose
// it), and a proxied request's URL is still checked.
func TestTransport_ProxyIsTheUsersChoice(t *testing.T) {
	var mu sync.Mutex
	var connects []string
	proxy := newPeer(t, false, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connects = append(connects, r.Method+" "+r.Host)
		mu.Unlock()
		w.WriteHeader(http.StatusForbidden) // no tunnel: nothing leaves the test
	})
	pu, _ := url.Parse(proxy.URL)
	p := newPolicy(t, "https://public.test/mcp")
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = http.ProxyURL(pu)
	c := p.Client(p.Transport(base))
	defer c.CloseIdleConnections()
	_, err := post(t, c, "https://public.test/mcp")
	if err == nil || errors.As(err, new(*Error)) {
		t.Fatalf("post through the proxy = %v, want the proxy's refusal", err)
	}
	_, err = post(t, c, "https://10.0.0.5/admin/users")
	assertRefused(t, err, RuleAddress, ZonePrivate)
	mu.Lock()
	defer mu.Unlock()
	if len(connects) != 1 || connects[0] != "CONNECT public.test:443" {
		t.Errorf("the proxy saw %v, want one CONNECT public.test:443", connects)
	}
}
