package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// oauthGateway serves the docs upstream behind a JWT-verifying gateway in
// which search needs docs:read; the audit goes to audit.
func oauthGateway(t *testing.T, iss *testIssuer, audit io.Writer, stateless bool) (context.Context, *upstream, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	f := newFakeFleet(t)
	f.observer = gateway.AuditLog(audit)
	u := newUpstream("Search documents")
	f.connect(ctx, "docs", u, "", "")
	g := newGateway(t, f, gateway.Options{ToolScopes: map[string][]string{"search": {"docs:read"}}, Observer: f.observer})
	g.Refresh()
	v, err := gateway.NewJWTVerifier(ctx, gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource})
	require.NoError(t, err)
	srv := serveHTTP(t, g, gateway.HTTPOptions{Stateless: stateless, OAuth: &gateway.OAuthOptions{
		Resource: testResource, Issuer: iss.srv.URL, ScopesSupported: []string{"docs:read"}, Verify: v.Verify}})
	return ctx, u, srv.URL
}

func TestHTTP_OAuthMetadataAndChallenge(t *testing.T) {
	iss := newTestIssuer(t)
	_, _, base := oauthGateway(t, iss, io.Discard, false)
	want := `{"resource":"` + testResource + `","authorization_servers":["` + iss.srv.URL +
		`"],"scopes_supported":["docs:read"],"bearer_methods_supported":["header"]}`
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.JSONEq(t, want, string(body), path)
	}
	for _, path := range []string{"/mcp", "/status"} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
		assert.Equal(t, []string{`Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`},
			resp.Header.Values("WWW-Authenticate"), path)
	}
}

// TestHTTP_OAuthRefusesBadTokens: each token the verifier refuses is 401
// on /mcp, before anything reaches the session.
func TestHTTP_OAuthRefusesBadTokens(t *testing.T) {
	iss := newTestIssuer(t)
	other := newTestIssuer(t)
	_, u, base := oauthGateway(t, iss, io.Discard, true)
	now := time.Now()
	valid := func() claims { return iss.valid(now, "ann", "docs:read") }
	for name, token := range map[string]string{
		"another audience": func() string {
			c := valid()
			c.Audience = jwt.Audience{"https://other.example/mcp"}
			return iss.mint("k1", c)
		}(),
		"expired": func() string {
			c := valid()
			c.Expiry = jwt.NewNumericDate(now.Add(-2 * time.Minute))
			return iss.mint("k1", c)
		}(),
		"an unknown key":  func() string { other.addKey("k7"); return other.mint("k7", valid()) }(),
		"alg none":        "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
		"another issuer":  func() string { c := valid(); c.Issuer = other.srv.URL; return other.mint("k1", c) }(),
		"no bearer token": "",
	} {
		status, _ := post(t, base, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`)
		assert.Equal(t, http.StatusUnauthorized, status, name)
	}
	assert.Equal(t, int32(0), u.calls.Load())
}

// TestHTTP_OAuthPerUserTools: a user with docs:read sees and calls search;
// one without does not see it in tools/list or /status, and a call of it is
// answered exactly as a call of a tool that does not exist (in the session
// and without one), naming no scope; the audit names each subject and no
// token.
func TestHTTP_OAuthPerUserTools(t *testing.T) {
	iss := newTestIssuer(t)
	var audit bytes.Buffer
	ctx, u, base := oauthGateway(t, iss, &audit, false)
	now := time.Now()
	ann := iss.mint("k1", iss.valid(now, "ann", "docs:read"))
	bob := iss.mint("k1", iss.valid(now, "bob", "profile"))

	annCS := connectHTTPAt(t, ctx, base+"/mcp", ann, "2025-11-25", nil) // legacy clients: the test posts on their sessions
	bobCS := connectHTTPAt(t, ctx, base+"/mcp", bob, "2025-11-25", nil)
	assert.Equal(t, []string{"big", "block", "fail", "search"}, toolNames(t, ctx, annCS))
	assert.Equal(t, []string{"big", "block", "fail"}, toolNames(t, ctx, bobCS))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"found x"}],"structuredContent":{"count":1}}`,
		call(t, ctx, annCS, "search", `{"q":"x"}`))
	assert.Equal(t, int32(1), u.calls.Load())

	for who, want := range map[string][]string{ann: {"big", "block", "fail", "search"}, bob: {"big", "block", "fail"}} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/status", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+who)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var st gateway.Status
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		resp.Body.Close()
		assert.Equal(t, want, st.Tools, "/status shows each user the tools tools/list does")
	}

	// "search" and "nosuch" have the same length: the answers must be
	// byte for byte the same but for the name.
	hidden, header := postBody(t, base, bob, annCS.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`)
	missing, header2 := postBody(t, base, bob, annCS.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nosuch","arguments":{"q":"x"}}}`)
	assert.Equal(t, missing, hidden, "no session of bob's: the same answer")
	assert.Equal(t, header2, header)
	hidden, _ = postBody(t, base, bob, bobCS.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`)
	missing, _ = postBody(t, base, bob, bobCS.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nosuch","arguments":{"q":"x"}}}`)
	assert.Equal(t, strings.ReplaceAll(missing, "nosuch", "search"), hidden, "in bob's session: the same answer")
	assert.Contains(t, hidden, `"code":-32602`)
	assert.NotContains(t, hidden, "docs:read")
	_, err := bobCS.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x"}})
	_, err2 := bobCS.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch", Arguments: map[string]any{"q": "x"}})
	require.Error(t, err)
	require.Error(t, err2)
	assert.Equal(t, strings.ReplaceAll(err2.Error(), "nosuch", "search"), err.Error())
	assert.Equal(t, int32(1), u.calls.Load(), "bob's calls reached nothing")

	var calls []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["kind"] == "call" && rec["code"] != "gateway_unknown_tool" {
			calls = append(calls, rec)
		}
	}
	require.Len(t, calls, 3, "ann's call and bob's two of search")
	assert.Equal(t, []any{"ann", "search", "", 1.0}, []any{calls[0]["subject"], calls[0]["tool"], calls[0]["code"], calls[0]["requests"]})
	for _, c := range calls[1:] {
		assert.Equal(t, []any{"bob", "search", "mcp_scope_denied", 0.0}, []any{c["subject"], c["tool"], c["code"], c["requests"]})
	}
	for _, tok := range []string{ann, bob} {
		for _, part := range strings.Split(tok, ".") {
			assert.NotContains(t, audit.String(), part)
		}
	}
}

// TestHTTP_OAuthStatusView: GET /status shows a caller only the tools it
// may see and the upstreams binding one of them: a server whose every
// tool needs hr:read is absent, ID, state and digest, for a caller
// without it.
func TestHTTP_OAuthStatusView(t *testing.T) {
	iss := newTestIssuer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	f.connect(ctx, "hr", newUpstream("Search people"), "hr_", "")
	hr := []string{"hr_big", "hr_block", "hr_fail", "hr_search"}
	f.tools = map[string][]string{"docs": {"big", "block", "fail", "search"}, "hr": hr}
	scopes := map[string][]string{"search": {"docs:read"}}
	for _, name := range hr {
		scopes[name] = []string{"hr:read"}
	}
	g := newGateway(t, f, gateway.Options{ToolScopes: scopes})
	g.Refresh()
	v, err := gateway.NewJWTVerifier(ctx, gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource})
	require.NoError(t, err)
	srv := serveHTTP(t, g, gateway.HTTPOptions{OAuth: &gateway.OAuthOptions{Resource: testResource,
		Issuer: iss.srv.URL, Verify: v.Verify}})
	now := time.Now()
	for _, tc := range []struct {
		scope     string
		upstreams []string
		tools     []string
	}{
		{"profile", []string{"docs"}, []string{"big", "block", "fail"}},
		{"docs:read", []string{"docs"}, []string{"big", "block", "fail", "search"}},
		{"hr:read", []string{"docs", "hr"}, append([]string{"big", "block", "fail"}, hr...)},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/status", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+iss.mint("k1", iss.valid(now, "u", tc.scope)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		var st gateway.Status
		require.NoError(t, json.Unmarshal(body, &st))
		var ids []string
		for _, up := range st.Upstreams {
			ids = append(ids, up.ID)
		}
		assert.Equal(t, tc.upstreams, ids, tc.scope)
		assert.Equal(t, tc.tools, st.Tools, tc.scope)
		if tc.scope != "hr:read" {
			assert.NotContains(t, string(body), "hr", "nothing of the hidden server")
		}
	}
	assert.Len(t, g.Status().Upstreams, 2, "serve --status shows every server")
}

// TestHTTP_OAuthSessionBoundToUser: a stateful session answers only the
// user who opened it: another user's valid token with its Mcp-Session-Id
// is 403, and nothing of it reaches the session or the upstream.
func TestHTTP_OAuthSessionBoundToUser(t *testing.T) {
	iss := newTestIssuer(t)
	ctx, u, base := oauthGateway(t, iss, io.Discard, false)
	now := time.Now()
	ann := iss.mint("k1", iss.valid(now, "ann", "docs:read"))
	eve := iss.mint("k1", iss.valid(now, "eve", "docs:read"))
	annCS := connectHTTPAt(t, ctx, base+"/mcp", ann, "2025-11-25", nil) // a legacy client, with a session
	require.NotEmpty(t, annCS.ID())

	inSession := func(token string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", annCS.ID())
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusForbidden, inSession(eve), "eve's token on ann's session")
	assert.Equal(t, int32(0), u.calls.Load())
	assert.Equal(t, http.StatusOK, inSession(ann), "ann on her own session")
	assert.Equal(t, int32(1), u.calls.Load())
}

// TestGateway_ScopedToolsWithoutToken: over stdio (no verified caller) a
// scoped tool is neither listed nor callable, and nothing is sent.
func TestGateway_ScopedToolsWithoutToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	u := newUpstream("Search documents")
	f.connect(ctx, "docs", u, "", "")
	g := newGateway(t, f, gateway.Options{ToolScopes: map[string][]string{"search": {"docs:read"}}})
	g.Refresh()
	d := connectDownstream(t, ctx, g)
	assert.Equal(t, []string{"big", "block", "fail"}, toolNames(t, ctx, d.session))
	_, err := d.session.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x"}})
	require.ErrorContains(t, err, `unknown tool "search"`, "answered as a tool that does not exist")
	assert.Equal(t, int32(0), u.calls.Load())
	assert.Equal(t, []string{"big", "block", "fail", "search"}, g.Tools(), "the gateway still serves it to those who may")
}

// postBody sends one JSON-RPC message to /mcp with token on the session
// id and returns the status line and body, and the WWW-Authenticate header.
func postBody(t testing.TB, base, token, session, body string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.Status + "\n" + string(b), resp.Header.Get("WWW-Authenticate")
}

// post sends one JSON-RPC message to /mcp with token (none when "") and
// returns the status and the WWW-Authenticate header.
func post(t testing.TB, base, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}
