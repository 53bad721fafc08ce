package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// defaultSessionIdleTimeout ends a stateful session no request has used for
// 30 minutes, so abandoned sessions do not accumulate.
const defaultSessionIdleTimeout = 30 * time.Minute

// defaultMaxBodyBytes caps an HTTP request body (1 MiB): far above any
// tools/call a model sends, far below what would strain the gateway.
const defaultMaxBodyBytes = 1 << 20

// loopbackNames returns the host names allowed by default.
func loopbackNames() []string { return []string{"localhost", "127.0.0.1", "::1"} }

// ErrNoToken is returned by [CheckListen] for a non-loopback address
// without a token.
var ErrNoToken = errors.New("gateway: a bearer token is required to listen on a non-loopback address")

// HTTPOptions configure [Gateway.HTTPHandler].
type HTTPOptions struct {
	// Token, when not empty, is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"), compared in constant time; a request
	// without it or with another is answered 401. Empty means no token,
	// which [CheckListen] allows on loopback addresses only.
	Token string
	// AllowedHosts are the host names (no port) a request's Host may name;
	// any other is answered 403 (DNS rebinding). Empty means the loopback
	// names: localhost, 127.0.0.1 and ::1.
	AllowedHosts []string
	// AllowedOrigins are the origins a request's Origin header may name
	// when it has one (a request without Origin is not from a browser): a
	// full origin ("https://app.example.com") matches exactly, a bare host
	// name matches any scheme and port. Any other is answered 403. Empty
	// means the loopback names.
	AllowedOrigins []string
	// MaxBodyBytes caps a request body (default 1 MiB; zero means default;
	// negative is invalid); a longer one is answered 413.
	MaxBodyBytes int64
	// Stateless serves every request with a temporary session (go-sdk's
	// stateless mode, which accepts every protocol version): replicas then
	// share nothing. Otherwise each request is served as its era asks (see
	// byEra): a client at MCP 2026-07-28 statelessly, a legacy client with
	// a session (Mcp-Session-Id) negotiating 2025-11-25, on the same /mcp.
	Stateless bool
	// SessionIdleTimeout ends a stateful session after this long without a
	// request (default 30 minutes; zero means default; negative is
	// invalid). It does not apply to stateless mode.
	SessionIdleTimeout time.Duration
	// MaxSessions caps the stateful sessions open at once (default 1024),
	// and MaxUserSessions those of one user, the subject of a verified
	// OAuth token (default 16; a caller without one is held to MaxSessions
	// only); zero means default, negative is invalid. A request that would
	// open a session over a cap is answered 429 with Retry-After and
	// nothing of it is kept. They do not apply to stateless mode.
	MaxSessions, MaxUserSessions int
	// OAuth, when set, makes the handler an OAuth 2.1 protected resource
	// instead of checking Token (setting both is invalid); see
	// [OAuthOptions].
	OAuth *OAuthOptions
}

// OAuthOptions make the HTTP side an OAuth 2.1 protected resource. The
// resource metadata (RFC 9728) is served without a token at
// /.well-known/oauth-protected-resource and at that path followed by the
// resource URL's path; /mcp and /status need a token Verify accepts: 401
// with a WWW-Authenticate challenge naming the metadata otherwise, 429
// with Retry-After when Verify fails [ErrIntrospectionLimited]. A tool
// whose [Options].ToolScopes the token lacks is hidden from its caller:
// left out of tools/list and /status, and a tools/call of it is answered
// exactly as one of a tool that does not exist.
type OAuthOptions struct {
	// Resource is the gateway's public resource URL (the one clients
	// connect to, such as https://mcp.example.com/mcp; behind a load
	// balancer, its address). Tokens must be minted for it.
	Resource string
	// Issuer is the authorization server's issuer, the only one the
	// metadata names.
	Issuer string
	// ScopesSupported, when set, are listed in the metadata.
	ScopesSupported []string
	// Verify verifies a bearer token, such as [JWTVerifier.Verify]. Its
	// error's text reaches the client: it must not quote the token.
	Verify auth.TokenVerifier
}

// HTTPHandler returns the gateway's HTTP handler: streamable MCP at /mcp and
// the [Status] as JSON at GET /status (only the tools the caller's token
// lets it see, as in tools/list, and the upstreams binding one of them),
// every path behind the same checks, in
// this order: Host and Origin against the allowlists (403), the token (401),
// the body cap (413); a tools/call POST to /mcp is then admitted (see
// [Options].MaxQueue), a refusal answered 429 with Retry-After. Any other
// path is 404. A negative MaxBodyBytes fails.
func (g *Gateway) HTTPHandler(opts HTTPOptions) (http.Handler, error) {
	if opts.MaxBodyBytes < 0 || opts.SessionIdleTimeout < 0 || opts.MaxSessions < 0 || opts.MaxUserSessions < 0 {
		return nil, fmt.Errorf("gateway: negative MaxBodyBytes, SessionIdleTimeout, MaxSessions or MaxUserSessions: %w", purramcp.ErrBindingInvalid)
	}
	if opts.OAuth != nil && (opts.Token != "" || opts.OAuth.Verify == nil) {
		return nil, fmt.Errorf("gateway: OAuth needs a Verify and excludes Token: %w", purramcp.ErrBindingInvalid)
	}
	if opts.SessionIdleTimeout == 0 {
		opts.SessionIdleTimeout = defaultSessionIdleTimeout
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = defaultMaxBodyBytes
	}
	a := &access{
		hosts:   lowerAll(opts.AllowedHosts),
		origins: lowerAll(opts.AllowedOrigins),
		maxBody: opts.MaxBodyBytes,
	}
	if len(a.hosts) == 0 {
		a.hosts = loopbackNames()
	}
	if len(a.origins) == 0 {
		a.origins = loopbackNames()
	}
	if opts.Token != "" {
		sum := sha256.Sum256([]byte(opts.Token))
		a.token = sum[:]
	}
	mux := http.NewServeMux()
	protect := func(h http.Handler) http.Handler { return h }
	if opts.OAuth != nil {
		var err error
		if protect, err = g.protectedResource(mux, *opts.OAuth); err != nil {
			return nil, err
		}
	}
	streamable := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server },
			&mcp.StreamableHTTPOptions{
				Stateless:           stateless,
				MaxRequestBodyBytes: opts.MaxBodyBytes,
				SessionTimeout:      opts.SessionIdleTimeout,
				// The Host allowlist above replaces go-sdk's own rebinding check,
				// which would refuse an allowed name on a loopback listener (a
				// gateway behind a local reverse proxy); it is never weaker: the
				// default allowlist is exactly the loopback names.
				DisableLocalhostProtection: true,
			})
	}
	endpoint := streamable(true)
	if !opts.Stateless {
		// Legacy (session) requests pass the session caps; a stateless
		// 2026-07-28 request opens no session to count.
		stateful := newSessionLimiter(g.server, orDefault(opts.MaxUserSessions, defaultMaxUserSessions),
			orDefault(opts.MaxSessions, defaultMaxSessions)).wrap(streamable(false))
		endpoint = byEra(stateful, endpoint)
	}
	mux.Handle("/mcp", protect(g.admitHTTP(endpoint)))
	mux.Handle("GET /status", protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := g.statusFor(auth.TokenInfoFromContext(r.Context()))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})))
	return a.wrap(mux), nil
}

// access holds the HTTP checks.
type access struct {
	hosts, origins []string
	token          []byte // SHA-256 of the token; nil for none
	maxBody        int64
}

func (a *access) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.hostAllowed(r.Host) || !a.originAllowed(r.Header.Get("Origin")) {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		if !a.authorized(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="purramcp"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if r.ContentLength > a.maxBody {
			http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, a.maxBody)
		next.ServeHTTP(w, r)
	})
}

// authorized compares the bearer token in constant time: both sides are
// hashed first, so neither the length nor a prefix of the token leaks.
func (a *access) authorized(header string) bool {
	if a.token == nil {
		return true
	}
	const scheme = "Bearer " // the scheme is case-insensitive (RFC 9110 §11.1)
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return false
	}
	sum := sha256.Sum256([]byte(header[len(scheme):]))
	return subtle.ConstantTimeCompare(sum[:], a.token) == 1
}

func (a *access) hostAllowed(host string) bool {
	name := hostName(host)
	return name != "" && contains(a.hosts, name)
}

func (a *access) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" and other opaque origins included
	}
	exact := strings.ToLower(u.Scheme + "://" + u.Host)
	return contains(a.origins, exact) || contains(a.origins, strings.ToLower(u.Hostname()))
}

// hostName is the lower-case host name of a Host value, without port or
// IPv6 brackets; "" when it is malformed.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		if net.ParseIP(host) == nil {
			return ""
		}
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func lowerAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			out = append(out, strings.TrimSuffix(s, "/"))
		}
	}
	return out
}

// CheckListen reports whether the gateway may listen on addr (host:port):
// an address whose host is not a loopback IP or "localhost" (an empty host
// listens on every interface) needs a token, else [ErrNoToken].
func CheckListen(addr string, hasToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("gateway: listen address %q: %w", addr, err)
	}
	if hasToken || isLoopback(host) {
		return nil
	}
	return ErrNoToken
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
