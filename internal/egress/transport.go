package egress

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Transport returns a clone of base (nil: http.DefaultTransport, which
// must then be an *http.Transport) that applies p to every request:
//
//   - Each request's URL passes [Policy.CheckURL] before anything is
//     dialed: the check runs in the transport's Proxy hook, which
//     net/http calls for every request but one sent on a cached HTTP/2
//     connection, whose host and port (its pool's key) were checked
//     when it was opened, with the same answer.
//   - Every connection it dials passes [Policy.Control], through a
//     net.Dialer using p's resolver (30 s to connect, 30 s keep-alive);
//     base's Dial, DialContext and DialTLSContext are replaced.
//   - base's proxy (the environment's, for http.DefaultTransport) is
//     kept: a connection to a proxy it names is the user's choice and is
//     not checked, and a proxied request's host is checked by its text
//     alone (CheckURL), since the proxy resolves it.
func (p *Policy) Transport(base *http.Transport) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	proxy := t.Proxy
	proxies := &proxySet{}
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		if err := p.CheckURL(req.URL); err != nil {
			return nil, err
		}
		if proxy == nil {
			return nil, nil
		}
		u, err := proxy(req)
		if err == nil && u != nil {
			proxies.add(proxyAddr(u))
		}
		return u, err
	}
	checked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: p.resolver, Control: p.Control}
	direct := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: p.resolver}
	t.Dial, t.DialTLS, t.DialTLSContext = nil, nil, nil // every dial goes through DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		proxied := proxies.has(strings.ToLower(addr))
		switch {
		case p.dial != nil:
			return p.dialEach(ctx, network, addr, proxied)
		case proxied:
			return direct.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
	return t
}

// dialEach resolves addr's host with p's resolver and dials each address
// in turn with p.dial, skipping those CheckAddr refuses unless unchecked.
// It returns the first connection, else the first refusal, else the last
// failure.
func (p *Policy) dialEach(ctx context.Context, network, addr string, unchecked bool) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	pn, err := p.resolver.LookupPort(ctx, network, port)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = p.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var refused, failed error
	for _, a := range addrs {
		if !unchecked {
			if err := p.CheckAddr(a); err != nil {
				refused = cmp.Or(refused, err)
				continue
			}
		}
		conn, err := p.dial(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(pn)))
		if err == nil {
			return conn, nil
		}
		failed = err
	}
	return nil, cmp.Or(refused, failed, error(&net.AddrError{Err: "no address", Addr: host}))
}

// Client returns an http.Client over rt (nil: p.Transport(nil)) whose
// redirects pass [Policy.CheckRedirect]: the client for requests the
// server's answers direct, such as OAuth metadata and endpoints.
func (p *Policy) Client(rt http.RoundTripper) *http.Client {
	if rt == nil {
		rt = p.Transport(nil)
	}
	return &http.Client{Transport: rt, CheckRedirect: p.CheckRedirect}
}

// OriginClient returns an http.Client over rt (nil: p.Transport(nil))
// whose redirects pass [Policy.CheckOriginRedirect]: it follows a
// redirect only within the server's origin, and any other is an error
// (an *Error) rather than a hop. It is the client that talks MCP to the
// server.
func (p *Policy) OriginClient(rt http.RoundTripper) *http.Client {
	if rt == nil {
		rt = p.Transport(nil)
	}
	return &http.Client{Transport: rt, CheckRedirect: p.CheckOriginRedirect}
}

// proxySet is the set of proxy addresses (host:port, lower case) a
// Transport's proxy func has named.
type proxySet struct {
	mu    sync.Mutex
	addrs map[string]bool
}

func (s *proxySet) add(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addrs == nil {
		s.addrs = map[string]bool{}
	}
	s.addrs[addr] = true
}

func (s *proxySet) has(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addrs[addr]
}

// proxyAddr is the host:port net/http dials for proxy u, in lower case.
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}
