package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// MaxRedirects is the most redirects one request follows.
const MaxRedirects = 10

// Options configures [New].
type Options struct {
	// Resolver resolves the server's host name in New and every host name
	// a [Policy.Transport] dials. nil is net.DefaultResolver.
	Resolver *net.Resolver
	// Dial, when set, makes each connection of a [Policy.Transport] in
	// place of a net.Dialer with [Policy.Control]: the transport resolves
	// a name with Resolver, checks each address with [Policy.CheckAddr]
	// and calls Dial with the first it allows, then the next on failure.
	// A connection to a proxy the base transport names is dialed
	// unchecked. Tests use it to serve named peers from loopback
	// listeners.
	Dial func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
}

// A Policy is the rule "no request to where the user did not point" for
// one MCP server URL the user configured:
//
//   - A request goes to the server's own origin, with the scheme the user
//     gave it, or to another https URL; plain http to another origin only
//     when both it and the server are loopback (127/8, ::1, localhost).
//   - No connection goes to an address more internal than the server's
//     own ([Allows]): a public server cannot send the client to loopback,
//     private, CGNAT or link-local addresses; a private one may use
//     private addresses but not loopback or link-local; link-local
//     (169.254.169.254, cloud metadata) only for a link-local server,
//     loopback only for a loopback server. Unspecified, multicast and
//     broadcast addresses are always refused.
//   - A redirect from https to anything else is refused, and so is a
//     redirect past MaxRedirects.
//
// The address rule holds at dial time ([Policy.Control]), so host names
// count by the addresses they resolve to when dialed. A Policy is
// immutable and safe for concurrent use.
type Policy struct {
	origin   Origin
	zone     Zone
	resolver *net.Resolver
	dial     func(context.Context, string, netip.AddrPort) (net.Conn, error)
}

// New returns the policy of the MCP server at serverURL, an absolute http
// or https URL. The server's zone is its host's: an IP literal's, loopback
// for localhost and *.localhost, else the most internal zone that every
// address the name resolves to now allows (resolved with opts.Resolver
// within ctx). A URL that is not http or https with a host is an *Error
// (RuleScheme), a server whose addresses are all in ZoneRefused one with
// RuleAddress; a failed resolution is the resolver's error.
func New(ctx context.Context, serverURL string, opts Options) (*Policy, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, refuse(RuleScheme, ZoneRefused)
	}
	o, ok := OriginOf(u)
	if !ok {
		return nil, refuse(RuleScheme, ZoneRefused)
	}
	p := &Policy{origin: o, resolver: opts.Resolver, dial: opts.Dial}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if z, known := literalZone(o.Host); known {
		p.zone = z
	} else {
		addrs, err := p.resolver.LookupNetIP(ctx, "ip", o.Host)
		if err != nil {
			return nil, fmt.Errorf("egress: resolving the server's host: %w", err)
		}
		z := ZoneRefused
		for i, a := range addrs {
			if i == 0 {
				z = Classify(a)
			} else {
				z = meet(z, Classify(a))
			}
		}
		p.zone = z
	}
	if p.zone == ZoneRefused {
		return nil, refuse(RuleAddress, ZoneRefused)
	}
	return p, nil
}

// literalZone returns the zone of host when its text alone tells it (an
// IP literal; localhost and *.localhost, RFC 6761), and false for a name.
func literalZone(host string) (Zone, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return Classify(a), true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return ZoneLoopback, true
	}
	return ZoneRefused, false
}

// Origin returns the server's origin.
func (p *Policy) Origin() Origin { return p.origin }

// Zone returns the server's zone.
func (p *Policy) Zone() Zone { return p.zone }

// Secure reports whether the server's URL is https, or http to a host
// that is loopback by its text (127/8, ::1, localhost, *.localhost; not a
// name that happens to resolve there): the only servers a credential such
// as an OAuth token may be sent to, since plain http elsewhere shows it
// to the network.
func (p *Policy) Secure() bool {
	if p.origin.Scheme == "https" {
		return true
	}
	z, known := literalZone(p.origin.Host)
	return known && z == ZoneLoopback
}

// CheckAddr returns nil when a connection may go to a, else an *Error
// (RuleAddress) with a's zone.
func (p *Policy) CheckAddr(a netip.Addr) error {
	if z := Classify(a); !Allows(p.zone, z) {
		return refuse(RuleAddress, z)
	}
	return nil
}

// CheckURL returns nil when a request may be sent to u as far as its text
// tells: u is the server's own origin, or https, or http to a loopback
// host from a loopback server (RuleScheme otherwise); and a host that is
// an IP literal or localhost is allowed by [Allows] (RuleAddress
// otherwise). A host name's addresses are checked when it is dialed.
func (p *Policy) CheckURL(u *url.URL) error {
	o, ok := OriginOf(u)
	if !ok {
		return refuse(RuleScheme, ZoneRefused)
	}
	if o == p.origin {
		return nil
	}
	z, known := literalZone(o.Host)
	if o.Scheme != "https" && (p.zone != ZoneLoopback || !known || z != ZoneLoopback) {
		return refuse(RuleScheme, ZoneRefused)
	}
	if known && !Allows(p.zone, z) {
		return refuse(RuleAddress, z)
	}
	return nil
}

// Control is a [net.Dialer] Control hook: it runs after a socket is
// created and before it connects, and refuses (an *Error, RuleAddress)
// an address [Policy.CheckAddr] refuses, so nothing is sent to it.
func (p *Policy) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return refuse(RuleAddress, ZoneRefused)
	}
	return p.CheckAddr(a)
}

// CheckRedirect is an [http.Client] CheckRedirect: it refuses (an
// *Error) a redirect past MaxRedirects, one from https to anything else,
// and one to a URL [Policy.CheckURL] refuses.
func (p *Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return refuse(RuleRedirects, ZoneRefused)
	}
	if len(via) > 0 && strings.EqualFold(via[len(via)-1].URL.Scheme, "https") &&
		!strings.EqualFold(req.URL.Scheme, "https") {
		return refuse(RuleDowngrade, ZoneRefused)
	}
	return p.CheckURL(req.URL)
}

// CheckOriginRedirect is [Policy.CheckRedirect] that also refuses (an
// *Error, RuleOrigin) a redirect to any origin but the server's: the
// redirect policy of the client that talks MCP to the server.
func (p *Policy) CheckOriginRedirect(req *http.Request, via []*http.Request) error {
	if err := p.CheckRedirect(req, via); err != nil {
		return err
	}
	if !p.origin.Matches(req.URL) {
		return refuse(RuleOrigin, ZoneRefused)
	}
	return nil
}
