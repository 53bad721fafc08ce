// Package oauthtest runs a scripted OAuth 2.1 authorization server and a
// protected go-sdk streamable-HTTP MCP server on loopback httptest
// servers, for tests of purramcp's OAuth client code.
//
// The authorization server publishes its metadata (RFC 8414), accepts
// dynamic registration (RFC 7591), approves every authorization at once
// (unless told to deny), and issues opaque access and refresh tokens for
// the authorization_code (PKCE S256, redirect_uri, client and resource
// checked) and refresh_token (rotating) grants. The MCP server publishes
// its protected resource metadata (RFC 9728) and accepts only live access
// tokens the authorization server issued. Every endpoint's handler can be
// replaced to script a hostile peer.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paths of the endpoints. PathResourceMetadata and PathMCP are on the MCP
// server ([Server.URL]'s origin); the others on the authorization server
// ([Server.Issuer]).
const (
	PathMCP              = "/mcp"
	PathResourceMetadata = "/.well-known/oauth-protected-resource/mcp"
	PathAuthMetadata     = "/.well-known/oauth-authorization-server"
	PathRegister         = "/register"
	PathAuthorize        = "/authorize"
	PathToken            = "/token"
)

// Options configure [New]. The zero value is usable.
type Options struct {
	// AccessTokenLifetime is the expires_in of each access token; 0 means
	// one hour.
	AccessTokenLifetime time.Duration
	// ScopesSupported is the scopes_supported of both metadata documents.
	ScopesSupported []string
	// TokenPrefix starts every access token, refresh token, code and
	// client ID issued (default "oauthtest-"), so that a test can grep
	// its outputs for them.
	TokenPrefix string
	// RevokeOnReuse makes the token endpoint detect refresh token reuse
	// (RFC 9700 §4.14.2): a refresh token presented a second time revokes
	// its whole grant, every access and refresh token issued from the
	// same authorization code.
	RevokeOnReuse bool
}

// Server is a running authorization server and MCP server. Its methods
// are safe for concurrent use.
type Server struct {
	// URL is the MCP endpoint (the protected resource).
	URL string
	// Issuer is the authorization server's issuer URL (its origin).
	Issuer string

	as, rs *httptest.Server
	mcp    *mcp.Server
	opts   Options

	mu        sync.Mutex
	overrides map[string]http.Handler
	deny      bool
	clients   map[string]*client
	codes     map[string]*grant
	access    map[string]*token
	refresh   map[string]*grant
	used      map[string]bool
	regs      int
	tokenReqs int
	refreshes int
	families  map[string]string // every refresh token issued, to its grant's family
	presented map[string]int    // refresh tokens presented to the token endpoint, by count
	revoked   int               // grants revoked for a reused refresh token
	calls     map[string]int
	scopes    []string // scopes granted when the request names none
}

type client struct {
	secret   string
	redirect []string // empty: any loopback redirect (pre-registered)
}

type grant struct {
	clientID, redirect, challenge, resource string
	scopes                                  []string
	family                                  string // the authorization code the grant descends from
}

type token struct {
	expiry time.Time
	scopes []string
	family string
}

// New starts a Server; it is closed when tb's test ends.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := Start(opts)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a Server outside a test (an Example); the caller closes it.
func Start(opts Options) *Server {
	if opts.TokenPrefix == "" {
		opts.TokenPrefix = "oauthtest-"
	}
	if opts.AccessTokenLifetime <= 0 {
		opts.AccessTokenLifetime = time.Hour
	}
	s := &Server{opts: opts, overrides: map[string]http.Handler{}, clients: map[string]*client{},
		codes: map[string]*grant{}, access: map[string]*token{}, refresh: map[string]*grant{},
		used: map[string]bool{}, calls: map[string]int{}, presented: map[string]int{},
		families: map[string]string{}}
	asMux := http.NewServeMux()
	asMux.HandleFunc("GET "+PathAuthMetadata, s.authMetadata)
	asMux.HandleFunc("POST "+PathRegister, s.register)
	asMux.HandleFunc("GET "+PathAuthorize, s.authorize)
	asMux.HandleFunc("POST "+PathToken, s.token)
	s.as = httptest.NewServer(s.route(asMux))
	s.Issuer = s.as.URL

	rsMux := http.NewServeMux()
	rsMux.HandleFunc("GET "+PathResourceMetadata, s.resourceMetadata)
	srv := mcp.NewServer(&mcp.Implementation{Name: "oauthtest", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			s.count("echo")
			return nil, echoOut(in), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Answers pong."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, pingOut, error) {
			s.count("ping")
			return nil, pingOut{Reply: "pong"}, nil
		})
	s.mcp = srv
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	s.rs = httptest.NewServer(s.route(rsMux))
	s.URL = s.rs.URL + PathMCP
	rsMux.Handle(PathMCP, auth.RequireBearerToken(s.verify,
		&auth.RequireBearerTokenOptions{ResourceMetadataURL: s.rs.URL + PathResourceMetadata})(h))
	return s
}

type echoIn struct {
	Text string `json:"text"`
}
type echoOut struct {
	Text string `json:"text"`
}
type pingOut struct {
	Reply string `json:"reply"`
}

// Close stops both servers and ends every MCP session the MCP server
// still holds (a client that went away without ending its session leaves
// one). It is safe to call more than once.
func (s *Server) Close() {
	s.rs.Close()
	s.as.Close()
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
}

// route serves a replaced handler for a path before next.
func (s *Server) route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		h := s.overrides[r.URL.Path]
		s.mu.Unlock()
		if h != nil {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Handle replaces the handler of the endpoint at path (one of the Path
// constants, or any other path) on the server that serves it (paths
// starting with PathMCP or PathResourceMetadata on the MCP server, any
// other on both); a nil h restores the scripted one.
func (s *Server) Handle(path string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.overrides, path)
		return
	}
	s.overrides[path] = h
}

// Deny makes /authorize redirect with error=access_denied (true) or
// approve (false, the default).
func (s *Server) Deny(deny bool) {
	s.mu.Lock()
	s.deny = deny
	s.mu.Unlock()
}

// AddClient pre-registers a client; secret "" makes it public. Its
// redirect_uri may be any loopback http URL.
func (s *Server) AddClient(id, secret string) {
	s.mu.Lock()
	s.clients[id] = &client{secret: secret}
	s.mu.Unlock()
}

// RevokeRefreshTokens makes every refresh token issued so far unusable.
func (s *Server) RevokeRefreshTokens() {
	s.mu.Lock()
	clear(s.refresh)
	s.mu.Unlock()
}

// ExpireAccessTokens makes every access token issued so far unusable (the
// MCP server answers 401 to it).
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	clear(s.access)
	s.mu.Unlock()
}

// Registrations is the number of successful dynamic registrations.
func (s *Server) Registrations() int { s.mu.Lock(); defer s.mu.Unlock(); return s.regs }

// TokenRequests is the number of requests to the token endpoint (any
// grant, any outcome, not counting a replaced handler).
func (s *Server) TokenRequests() int { s.mu.Lock(); defer s.mu.Unlock(); return s.tokenReqs }

// Refreshes is the number of successful refresh_token grants.
func (s *Server) Refreshes() int { s.mu.Lock(); defer s.mu.Unlock(); return s.refreshes }

// ToolCalls is the number of tools/call requests tool received.
func (s *Server) ToolCalls(tool string) int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls[tool] }

// Reused is the number of refresh tokens presented to the token endpoint
// more than once (whatever the answer).
func (s *Server) Reused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.presented {
		if c > 1 {
			n++
		}
	}
	return n
}

// Revoked is the number of grants revoked for a reused refresh token
// (see Options.RevokeOnReuse).
func (s *Server) Revoked() int { s.mu.Lock(); defer s.mu.Unlock(); return s.revoked }

// Used reports whether the MCP server has received accessToken (live or
// not) in an Authorization header.
func (s *Server) Used(accessToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used[accessToken]
}

func (s *Server) count(tool string) { s.mu.Lock(); s.calls[tool]++; s.mu.Unlock() }

// verify accepts live access tokens this server issued.
func (s *Server) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used[tok] = true
	t := s.access[tok]
	if t == nil || !time.Now().Before(t.expiry) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: slices.Clone(t.scopes), Expiration: t.expiry}, nil
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL, "authorization_servers": []string{s.Issuer},
		"scopes_supported": s.opts.ScopesSupported, "bearer_methods_supported": []string{"header"}})
}

func (s *Server) authMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": s.Issuer, "authorization_endpoint": s.Issuer + PathAuthorize,
		"token_endpoint": s.Issuer + PathToken, "registration_endpoint": s.Issuer + PathRegister,
		"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_post", "client_secret_basic"},
		"scopes_supported":                               s.opts.ScopesSupported,
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&m) != nil || len(m.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	c := &client{redirect: m.RedirectURIs}
	out := map[string]any{"redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"}
	if m.AuthMethod != "" && m.AuthMethod != "none" {
		c.secret = s.opts.TokenPrefix + "secret-" + random()
		out["client_secret"], out["token_endpoint_auth_method"] = c.secret, m.AuthMethod
	}
	id := s.opts.TokenPrefix + "client-" + random()
	out["client_id"] = id
	s.mu.Lock()
	s.clients[id] = c
	s.regs++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	s.mu.Lock()
	c, deny := s.clients[q.Get("client_id")], s.deny
	s.mu.Unlock()
	ru, err := url.Parse(redirect)
	if c == nil || err != nil || !redirectOK(c, ru) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back := ru.Query()
	back.Set("state", q.Get("state"))
	back.Set("iss", s.Issuer)
	switch {
	case deny:
		back.Set("error", "access_denied")
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		back.Set("error", "invalid_request")
	default:
		code := s.opts.TokenPrefix + "code-" + random()
		var scopes []string
		if sc := q.Get("scope"); sc != "" {
			scopes = strings.Fields(sc)
		}
		s.mu.Lock()
		s.codes[code] = &grant{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), scopes: scopes, family: code}
		s.mu.Unlock()
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

// redirectOK reports whether u is one of c's redirect URIs, or a loopback
// http URL for a pre-registered client.
func redirectOK(c *client, u *url.URL) bool {
	if len(c.redirect) == 0 {
		return u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost" || u.Hostname() == "::1")
	}
	return slices.Contains(c.redirect, u.String())
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.tokenReqs++
	s.mu.Unlock()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if r.ParseForm() != nil {
		tokenError(w, "invalid_request")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[id]
	if c == nil || c.secret != secret {
		tokenError(w, "invalid_client")
		return
	}
	var g *grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		g = s.codes[code]
		delete(s.codes, code) // a code is used once
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if g == nil || g.clientID != id || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostForm.Get("resource") != g.resource ||
			g.resource != s.URL {
			tokenError(w, "invalid_grant")
			return
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		s.presented[rt]++
		if s.presented[rt] > 1 && s.opts.RevokeOnReuse {
			s.revokeFamily(rt)
		}
		g = s.refresh[rt]
		if g == nil || g.clientID != id {
			tokenError(w, "invalid_grant")
			return
		}
		delete(s.refresh, rt) // rotation: the old refresh token stops working
		s.refreshes++
	default:
		tokenError(w, "unsupported_grant_type")
		return
	}
	at := s.opts.TokenPrefix + "at-" + random()
	rt := s.opts.TokenPrefix + "rt-" + random()
	s.access[at] = &token{expiry: time.Now().Add(s.opts.AccessTokenLifetime), scopes: g.scopes, family: g.family}
	s.refresh[rt] = g
	s.families[rt] = g.family
	out := map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(max(1, s.opts.AccessTokenLifetime.Round(time.Second)/time.Second))}
	if len(g.scopes) > 0 {
		out["scope"] = strings.Join(g.scopes, " ")
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// revokeFamily revokes the grant a reused refresh token belongs to: every
// live access and refresh token of its family. s.mu is held.
func (s *Server) revokeFamily(reused string) {
	family := s.families[reused]
	if family == "" {
		return
	}
	for rt, g := range s.refresh {
		if g.family == family {
			delete(s.refresh, rt)
		}
	}
	for at, t := range s.access {
		if t.family == family {
			delete(s.access, at)
		}
	}
	s.revoked++
}

func tokenError(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func random() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Browse follows an authorization URL headlessly, as an oauth.LoginOptions
// Browse: it GETs authURL without following redirects and then GETs the
// Location it answered with once (the login's loopback callback). Each
// request is bounded by 10 s and by ctx; it keeps no connection open.
func Browse(ctx context.Context, authURL string) error {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		return resp, nil
	}
	resp, err := get(authURL)
	if err != nil {
		return err
	}
	loc, err := resp.Location()
	if err != nil {
		return errors.New("oauthtest: the authorization endpoint did not redirect")
	}
	if _, err := get(loc.String()); err != nil {
		return err
	}
	return nil
}
