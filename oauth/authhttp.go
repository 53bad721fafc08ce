package oauth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"purra.dev/purramcp/internal/egress"
)

// Bounds on every OAuth request purramcp makes (metadata, registration,
// authorization, token, refresh): its answer's body, its redirects, and its
// time unless the caller sets another.
const (
	maxAuthBodyBytes   = 1 << 20
	maxAuthRedirects   = 3
	defaultAuthTimeout = 30 * time.Second
)

var (
	errInsecureURL   = errors.New("oauth: an OAuth endpoint neither https nor loopback")
	errAuthBodyLarge = errors.New("oauth: an OAuth answer over its size bound")
	errAuthRedirects = errors.New("oauth: too many OAuth redirects")
)

// secureURL reports whether u is https, or http to a loopback host
// (127.0.0.0/8, ::1 or localhost): the MCP server URLs Login and the
// keeper sign in to.
func secureURL(u *url.URL) bool {
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

// authClient returns a client for the OAuth requests made on behalf of
// the MCP server at serverURL (metadata, registration, token, refresh),
// under the server's egress rule (internal/egress): https only, except
// loopback http for a loopback server; no connection to an address more
// internal than the server's, checked when it is dialed (a net.Dialer
// Control hook, so host names count by what they resolve to); no redirect
// from https to http nor past maxAuthRedirects, and every hop under the
// same rule. A refusal is an *egress.Error (mcp_egress_refused) and
// nothing is sent. Each answer's body is cut off with an error past
// maxAuthBodyBytes, and timeout (0: defaultAuthTimeout) bounds the whole
// exchange. base's transport (nil: http.DefaultTransport's settings)
// carries the requests: an *http.Transport is cloned with the dial rule;
// any other RoundTripper does its own dialing and gets the URL and
// redirect rules only. seen, when set, is told of each request before it
// is sent. The func releases the client's idle connections.
func authClient(ctx context.Context, serverURL string, base *http.Client, timeout time.Duration,
	seen func(*http.Request)) (*http.Client, func(), error) {
	policy, err := egress.New(ctx, serverURL, egress.Options{})
	if err != nil {
		return nil, nil, err
	}
	hc, release := authClientFor(policy, base, timeout, seen)
	return hc, release, nil
}

// authClientFor is authClient under policy.
func authClientFor(policy *egress.Policy, base *http.Client, timeout time.Duration,
	seen func(*http.Request)) (*http.Client, func()) {
	var inner http.RoundTripper
	release := func() {}
	var bt http.RoundTripper
	if base != nil {
		bt = base.Transport
	}
	switch t := bt.(type) {
	case nil:
		tr := policy.Transport(nil)
		inner, release = tr, tr.CloseIdleConnections
	case *http.Transport:
		tr := policy.Transport(t)
		inner, release = tr, tr.CloseIdleConnections
	default:
		inner = t
	}
	if timeout <= 0 {
		timeout = defaultAuthTimeout
	}
	return &http.Client{
		Transport: &authTransport{inner: inner, seen: seen, policy: policy},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxAuthRedirects {
				return errAuthRedirects
			}
			return policy.CheckRedirect(req, via)
		},
	}, release
}

// authTransport enforces authClient's per-request rules.
type authTransport struct {
	inner  http.RoundTripper
	seen   func(*http.Request)
	policy *egress.Policy
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.policy.CheckURL(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	if t.seen != nil {
		t.seen(req)
	}
	resp, err := t.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{src: resp.Body, left: maxAuthBodyBytes}
	return resp, nil
}

// cappedBody is a body that fails, rather than ends, once more than its
// bound has been read: a decoder then sees an error, never a truncated
// document that might parse.
type cappedBody struct {
	src  io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errAuthBodyLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.src.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errAuthBodyLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.src.Close() }

// withResource returns a client like hc whose refresh_token grants carry
// resource as their RFC 8707 resource indicator, so that an authorization
// server that binds tokens to a resource mints the refreshed access token
// for the same server again. x/oauth2 builds the refresh request itself
// and takes no extra parameters; the form it sends is purramcp's own, so
// adding one parameter to it is safe. resource "" returns hc.
func withResource(hc *http.Client, resource string) *http.Client {
	if resource == "" {
		return hc
	}
	c := *hc
	c.Transport = &resourceTransport{inner: hc.Transport, resource: resource}
	return &c
}

// resourceTransport adds the resource parameter to a refresh_token grant
// that lacks one.
type resourceTransport struct {
	inner    http.RoundTripper
	resource string
}

func (t *resourceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil ||
		req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return t.inner.RoundTrip(req)
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, maxAuthBodyBytes+1))
	_ = req.Body.Close()
	if err != nil || len(raw) > maxAuthBodyBytes {
		return nil, errAuthBodyLarge
	}
	form, err := url.ParseQuery(string(raw))
	if err == nil && form.Get("grant_type") == "refresh_token" && !form.Has("resource") {
		form.Set("resource", t.resource)
		raw = []byte(form.Encode())
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(raw))
	req.ContentLength = int64(len(raw))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	return t.inner.RoundTrip(req)
}
