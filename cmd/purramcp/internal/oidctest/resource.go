package oidctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Paths on the MCP server, and the scope its tools need.
const (
	PathMCP              = "/mcp"
	PathResourceMetadata = "/.well-known/oauth-protected-resource/mcp"
	Scope                = "mcp:tools"
)

// resourceServer is the protected MCP server: one read-only tool, echo,
// behind a bearer check of the provider's JWT access tokens.
type resourceServer struct {
	srv     *http.Server
	mcp     *mcp.Server
	issuer  string
	jwksURI string
	aud     string

	mu     sync.Mutex
	keys   *jose.JSONWebKeySet
	calls  int
	tokens map[string]bool // every access token presented that verified
	failed int             // presented tokens that did not verify
}

type echoIn struct {
	Text string `json:"text"`
}
type echoOut struct {
	Text string `json:"text"`
}

// startResourceServer serves the MCP server on ln until the test ends.
func startResourceServer(t *testing.T, ln net.Listener, issuer, serverURL string) *resourceServer {
	t.Helper()
	rs := &resourceServer{issuer: issuer, aud: serverURL, tokens: map[string]bool{}}
	if err := rs.discover(t.Context()); err != nil {
		_ = ln.Close()
		t.Fatalf("oidctest: the provider's metadata: %v", err)
	}
	rs.mcp = mcp.NewServer(&mcp.Implementation{Name: "oidctest", Version: "1"}, nil)
	mcp.AddTool(rs.mcp, &mcp.Tool{Name: "echo", Description: "Returns its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			rs.mu.Lock()
			rs.calls++
			rs.mu.Unlock()
			return nil, echoOut(in), nil
		})
	origin := strings.TrimSuffix(serverURL, PathMCP)
	mux := http.NewServeMux()
	mux.Handle("GET "+PathResourceMetadata, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: serverURL, AuthorizationServers: []string{issuer}, ScopesSupported: []string{Scope},
		BearerMethodsSupported: []string{"header"}}))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rs.mcp }, nil)
	mux.Handle(PathMCP, auth.RequireBearerToken(rs.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: origin + PathResourceMetadata, Scopes: []string{Scope}})(h))
	rs.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = rs.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = rs.srv.Close()
		<-done
		for ss := range rs.mcp.Sessions() {
			_ = ss.Close()
		}
	})
	return rs
}

// discover reads the provider's jwks_uri and its keys.
func (rs *resourceServer) discover(ctx context.Context) error {
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := getJSON(ctx, rs.issuer+"/.well-known/openid-configuration", &meta); err != nil {
		return err
	}
	if meta.Issuer != rs.issuer || meta.JWKSURI == "" {
		return fmt.Errorf("%w: issuer %q, jwks_uri %q", errBadAnswer, meta.Issuer, meta.JWKSURI)
	}
	rs.jwksURI = meta.JWKSURI
	var keys jose.JSONWebKeySet
	if err := getJSON(ctx, rs.jwksURI, &keys); err != nil {
		return err
	}
	rs.keys = &keys
	return nil
}

// getJSON decodes the JSON at u into v.
func getJSON(ctx context.Context, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := get(ctx, http.DefaultClient, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: status %d", errBadAnswer, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxPageBytes)).Decode(v)
}

// claims are the access token claims the server checks.
type claims struct {
	jwt.Claims
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
}

// verify accepts a JWT signed by the provider's key, issued by it, for
// this server, unexpired, with the scope.
func (rs *resourceServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	c, err := rs.parse(token)
	if err != nil {
		rs.mu.Lock()
		rs.failed++
		rs.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	rs.mu.Lock()
	rs.tokens[token] = true
	rs.mu.Unlock()
	return &auth.TokenInfo{Scopes: strings.Fields(c.Scope), Expiration: c.Expiry.Time(), UserID: c.Subject,
		Extra: map[string]any{"client_id": c.ClientID}}, nil
}

// parse checks token and returns its claims.
func (rs *resourceServer) parse(token string) (*claims, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.PS256})
	if err != nil {
		return nil, err
	}
	if len(tok.Headers) != 1 {
		return nil, errors.New("not one signature")
	}
	rs.mu.Lock()
	keys := rs.keys.Key(tok.Headers[0].KeyID)
	rs.mu.Unlock()
	if len(keys) != 1 {
		return nil, errors.New("unknown key")
	}
	var c claims
	if err := tok.Claims(keys[0].Public().Key, &c); err != nil {
		return nil, err
	}
	if c.Expiry == nil {
		return nil, errors.New("no exp")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: rs.issuer, AnyAudience: jwt.Audience{rs.aud},
		Time: time.Now()}, 0); err != nil {
		return nil, err
	}
	if !slices.Contains(strings.Fields(c.Scope), Scope) {
		return nil, errors.New("no " + Scope + " scope")
	}
	return &c, nil
}

// ToolCalls is how many echo calls the MCP server ran.
func (p *Provider) ToolCalls() int {
	p.rs.mu.Lock()
	defer p.rs.mu.Unlock()
	return p.rs.calls
}

// AccessTokens are the distinct access tokens the MCP server accepted,
// in no order.
func (p *Provider) AccessTokens() []string {
	p.rs.mu.Lock()
	defer p.rs.mu.Unlock()
	out := make([]string, 0, len(p.rs.tokens))
	for tok := range p.rs.tokens {
		out = append(out, tok)
	}
	return out
}

// Rejected is how many presented bearer tokens the MCP server refused.
func (p *Provider) Rejected() int {
	p.rs.mu.Lock()
	defer p.rs.mu.Unlock()
	return p.rs.failed
}
