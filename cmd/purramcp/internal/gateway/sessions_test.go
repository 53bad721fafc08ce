package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// TestHTTP_SessionCaps: with 2 sessions a user and 3 in all, ann's third
// session is 429 with Retry-After and leaves no session behind; bob, at
// none, still opens one; then the gateway is full and bob's second is
// 429; once ann closes one, bob opens it.
func TestHTTP_SessionCaps(t *testing.T) {
	iss := newTestIssuer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	v, err := gateway.NewJWTVerifier(ctx, gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource})
	require.NoError(t, err)
	srv := serveHTTP(t, g, gateway.HTTPOptions{MaxUserSessions: 2, MaxSessions: 3,
		OAuth: &gateway.OAuthOptions{Resource: testResource, Issuer: iss.srv.URL, Verify: v.Verify}})
	now := time.Now()
	ann := iss.mint("k1", iss.valid(now, "ann", ""))
	bob := iss.mint("k1", iss.valid(now, "bob", ""))
	sessions := func() int {
		n := 0
		for range g.Server().Sessions() {
			n++
		}
		return n
	}
	initialize := func(token string) (int, string, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id")
	}

	// Sessions are the legacy era's: a 2026-07-28 request opens none.
	legacy := func(token string) *mcp.ClientSession {
		return connectHTTPAt(t, ctx, srv.URL+"/mcp", token, purramcp.ProtocolVersion20251125, nil)
	}
	annFirst := legacy(ann)
	legacy(ann)
	status, retry, id := initialize(ann)
	assert.Equal(t, http.StatusTooManyRequests, status, "ann's third session")
	assert.Equal(t, "60", retry)
	assert.Empty(t, id)
	assert.Equal(t, 2, sessions(), "nothing kept")

	legacy(bob)
	assert.Equal(t, 3, sessions(), "ann at her cap does not stop bob")
	status, _, _ = initialize(bob)
	assert.Equal(t, http.StatusTooManyRequests, status, "the gateway's cap")
	assert.Equal(t, 3, sessions())

	require.NoError(t, annFirst.Close())
	status, _, id = initialize(bob)
	assert.Equal(t, http.StatusOK, status, "a session closed, a place free")
	assert.NotEmpty(t, id)
	assert.Equal(t, 3, sessions())
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, srv.URL+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bob)
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
}
