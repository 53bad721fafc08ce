package egress

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// An Origin is a URL's scheme, host and port (RFC 6454): the unit that
// credentials are scoped to. Scheme and Host are lower case, Host has no
// brackets and an IP literal is in its canonical form, and Port is always
// explicit (443 for https, 80 for http).
type Origin struct {
	Scheme, Host, Port string
}

// OriginOf returns u's origin, and false when u is not an absolute http or
// https URL with a host.
func OriginOf(u *url.URL) (Origin, bool) {
	if u == nil {
		return Origin{}, false
	}
	o := Origin{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Hostname()), Port: u.Port()}
	if o.Host == "" {
		return Origin{}, false
	}
	switch o.Scheme {
	case "https":
		if o.Port == "" {
			o.Port = "443"
		}
	case "http":
		if o.Port == "" {
			o.Port = "80"
		}
	default:
		return Origin{}, false
	}
	if a, err := netip.ParseAddr(o.Host); err == nil {
		o.Host = a.String()
	}
	return o, true
}

// Matches reports whether u's origin is o.
func (o Origin) Matches(u *url.URL) bool {
	uo, ok := OriginOf(u)
	return ok && uo == o
}

// String returns scheme://host:port, the host in brackets when it holds a
// colon.
func (o Origin) String() string {
	return o.Scheme + "://" + net.JoinHostPort(o.Host, o.Port)
}

// AddHeaders returns an http.RoundTripper that sends a request whose
// origin is o through next as a clone whose header set has changed, and
// every other request through next unchanged: credentials (static
// headers, a bearer token) added by set reach their origin and no other,
// whichever redirect the request followed. set nil returns next. The
// caller's request is never modified.
func AddHeaders(o Origin, next http.RoundTripper, set func(http.Header)) http.RoundTripper {
	if set == nil {
		return next
	}
	return &headerTransport{origin: o, next: next, set: set}
}

// Static returns a func for [AddHeaders] that sets each of headers
// (replacing any value of the same name), nil when headers is empty.
func Static(headers map[string]string) func(http.Header) {
	if len(headers) == 0 {
		return nil
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	return func(dst http.Header) {
		for k, v := range h {
			dst[k] = append([]string(nil), v...)
		}
	}
}

// headerTransport is AddHeaders' RoundTripper.
type headerTransport struct {
	origin Origin
	next   http.RoundTripper
	set    func(http.Header)
}

// RoundTrip sends req, a clone with the headers set when req's origin is
// the transport's.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.origin.Matches(req.URL) {
		req = req.Clone(req.Context())
		if req.Header == nil {
			req.Header = http.Header{}
		}
		t.set(req.Header)
	}
	return t.next.RoundTrip(req)
}
