package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/oidctest"
)

// haproxyBinary returns Debian's haproxy, or skips (fails under CI=true)
// when it is not installed.
func haproxyBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		msg := "haproxy is not installed (apt-get install haproxy)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startHAProxy runs haproxy in the foreground on 127.0.0.1:port, round
// robin over backends, until the test ends; it returns once the front
// answers the OAuth resource metadata.
func startHAProxy(t *testing.T, ctx context.Context, port int, backends []string) {
	t.Helper()
	startHAProxyProbe(t, ctx, port, backends, "/.well-known/oauth-protected-resource/mcp",
		func(status int) bool { return status == http.StatusOK })
}

// startHAProxyProbe is startHAProxy returning once GET probe on the front
// answers a status ready accepts.
func startHAProxyProbe(t *testing.T, ctx context.Context, port int, backends []string, probe string, ready func(int) bool) {
	t.Helper()
	bin := haproxyBinary(t)
	cfg := fmt.Sprintf(`global
  maxconn 256
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend mcp
  bind 127.0.0.1:%d
  default_backend replicas
backend replicas
  balance roundrobin
`, port)
	for i, b := range backends {
		cfg += fmt.Sprintf("  server r%d %s\n", i, b)
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	var stderr syncBuffer
	cmd := exec.Command(bin, "-f", path, "-db")
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	front := fmt.Sprintf("http://127.0.0.1:%d%s", port, probe)
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, front, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if ready(resp.StatusCode) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not answer on %d; its output: %s", port, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServe_OAuthReplicasBehindHAProxy: two `serve --stateless
// --oauth-issuer` replicas behind HAProxy (round robin), oidc-provider as
// the authorization server, and the official TypeScript SDK client with
// its own OAuth provider. The client discovers the gateway's metadata
// through the load balancer, registers, signs its user in once with PKCE
// (the consent played over HTTP), and both replicas answer it: identical
// tool lists, every call answered, one audit line per call in all, each
// naming the user, none holding a token. The MCP Inspector CLI then lists
// and calls with the same token as a bearer header.
func TestServe_OAuthReplicasBehindHAProxy(t *testing.T) {
	haproxyBinary(t)
	nodeDir, node := nodeClients(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	port := freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	p := oidctest.Start(t, oidctest.Options{Resource: resource, AccessTokenTTL: time.Minute})

	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	var replicas [2]*serving
	var backends []string
	for i := range replicas {
		replicas[i] = startServe(t, serveCtx, dir, "--http", "127.0.0.1:0", "--stateless",
			"--oauth-issuer", p.Issuer, "--resource", resource)
		backends = append(backends, listenAddr(t, replicas[i]))
	}
	startHAProxy(t, ctx, port, backends)

	convert := map[string]any{"name": "units_convert", "arguments": map[string]any{"value": 1, "from": "km", "to": "m"}}
	plan, err := json.Marshal(map[string]any{"url": resource, "redirectUrl": "http://127.0.0.1:8976/callback", "scope": "mcp:tools",
		"lists": 2, "printToken": true, "calls": []any{convert, convert, convert, convert}})
	require.NoError(t, err)
	out := sdkSignIn(t, ctx, p, nodeDir, node, plan)

	assert.Equal(t, [][]string{{"units_convert", "units_list"}, {"units_convert", "units_list"}}, out.Tools)
	require.Len(t, out.Results, 4)
	for i, res := range out.Results {
		assert.JSONEq(t, convertResult, string(res), "call %d", i)
	}
	assert.Equal(t, 1, out.Registrations)
	assert.Equal(t, 1, out.Authorizations, "one sign-in")
	assert.Equal(t, 1, p.Count("interaction:consent"), "one consent")

	// The MCP Inspector CLI with the same token as a bearer header: the
	// list and a call, through the balancer; without it, 401.
	require.NotEmpty(t, out.AccessToken)
	inspector := filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	base := []string{inspector, "--cli", resource, "--transport", "http"}
	bearer := []string{"--header", "Authorization: Bearer " + out.AccessToken}
	var listed struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(runNode(t, ctx, nodeDir, node, append(append(base, bearer...), "--method", "tools/list")...)), &listed))
	require.Len(t, listed.Tools, 2)
	assert.Equal(t, "units_convert", listed.Tools[0].Name)
	assert.JSONEq(t, convertResult, runNode(t, ctx, nodeDir, node, append(append(base, bearer...), "--method", "tools/call",
		"--tool-name", "units_convert", "--tool-arg", "value=1", "from=km", "to=m")...))
	_, code := runNodeStatus(t, ctx, nodeDir, node, append(base, "--method", "tools/list")...)
	assert.NotEqual(t, 0, code, "no token: refused")

	var calls [2]int
	for i, r := range replicas {
		audit := r.stderr.String()
		calls[i] = strings.Count(audit, `"kind":"call"`)
		assert.Equal(t, calls[i], strings.Count(audit, `"subject":"`+oidctest.Login+`"`), "replica %d: every call names the user", i)
		assert.NotContains(t, audit, "eyJ", "replica %d: no JWT in the audit", i)
	}
	t.Logf("calls per replica: %v", calls)
	assert.Equal(t, 5, calls[0]+calls[1], "one audit line per call in all (4 by the SDK client, 1 by the Inspector): %v", calls)
	assert.Positive(t, calls[0], "replica 0 answered calls: %v", calls)
	assert.Positive(t, calls[1], "replica 1 answered calls: %v", calls)
	stop()
	for _, r := range replicas {
		assert.Equal(t, exitOK, r.wait(t))
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

// sdkRun is what sdk-oauth-client.mjs reports: the tool lists, the call
// results, its registrations and sign-ins, and the access token it used.
type sdkRun struct {
	Tools                         [][]string
	Results                       []json.RawMessage
	Registrations, Authorizations int
	AccessToken                   string
}

// sdkSignIn runs the official TypeScript SDK client with its own OAuth
// provider on plan, playing its user's consent at p, and returns its
// report.
func sdkSignIn(t *testing.T, ctx context.Context, p *oidctest.Provider, nodeDir, node string, plan []byte) sdkRun {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, filepath.Join(nodeDir, "sdk-oauth-client.mjs"), string(plan))
	cmd.Dir = nodeDir
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)

	require.True(t, lines.Scan(), "the client asked for no sign-in; stderr: %s", stderr.String())
	var ask struct{ Authorize string }
	require.NoError(t, json.Unmarshal(lines.Bytes(), &ask), "line %s", lines.Text())
	redirect, err := p.Consent(ctx, ask.Authorize)
	require.NoError(t, err)
	_, err = fmt.Fprintln(stdin, redirect)
	require.NoError(t, err)

	require.True(t, lines.Scan(), "no result; stderr: %s", stderr.String())
	var out sdkRun
	require.NoError(t, json.Unmarshal(lines.Bytes(), &out), "line %s", lines.Text())
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	return out
}

// TestServe_OAuthIntrospection: `serve --oauth-introspection` in front of
// oidc-provider issuing opaque access tokens: the TypeScript SDK client
// signs in and lists and calls through the gateway, which asks the
// provider's introspection endpoint (as its own confidential client)
// whether each token is active and for it; a made-up token is 401; the
// audit names the user and holds no token.
func TestServe_OAuthIntrospection(t *testing.T) {
	nodeDir, node := nodeClients(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	port := freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	p := oidctest.Start(t, oidctest.Options{Resource: resource, AccessTokenTTL: time.Minute, OpaqueTokens: true,
		IntrospectionClient: "purramcp-gateway:gateway-secret-7c1e"})
	t.Setenv("GATEWAY_CLIENT_SECRET", "gateway-secret-7c1e")
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	r := startServe(t, serveCtx, dir, "--http", fmt.Sprintf("127.0.0.1:%d", port),
		"--oauth-issuer", p.Issuer, "--resource", resource, "--oauth-introspection", p.IntrospectionEndpoint(),
		"--oauth-client-id", "purramcp-gateway", "--oauth-client-secret-env", "GATEWAY_CLIENT_SECRET")
	listenAddr(t, r)

	convert := map[string]any{"name": "units_convert", "arguments": map[string]any{"value": 1, "from": "km", "to": "m"}}
	plan, err := json.Marshal(map[string]any{"url": resource, "redirectUrl": "http://127.0.0.1:8977/callback", "scope": "mcp:tools",
		"lists": 1, "printToken": true, "calls": []any{convert, convert}})
	require.NoError(t, err)
	out := sdkSignIn(t, ctx, p, nodeDir, node, plan)
	assert.Equal(t, [][]string{{"units_convert", "units_list"}}, out.Tools)
	require.Len(t, out.Results, 2)
	for i, res := range out.Results {
		assert.JSONEq(t, convertResult, string(res), "call %d", i)
	}
	require.NotEmpty(t, out.AccessToken)
	assert.NotContains(t, out.AccessToken, ".", "an opaque token, not a JWT")

	initialize := func(token string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, resource, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, initialize(out.AccessToken))
	assert.Equal(t, http.StatusUnauthorized, initialize("made-up-opaque-token"))
	assert.Zero(t, p.Count("introspection_error:InvalidClient"), "the gateway authenticated as its client")

	audit := r.stderr.String()
	assert.Equal(t, 2, strings.Count(audit, `"kind":"call"`))
	assert.Equal(t, 2, strings.Count(audit, `"subject":"`+oidctest.Login+`"`), "every call names the user")
	assert.NotContains(t, audit, out.AccessToken)
	assert.NotContains(t, audit, "gateway-secret-7c1e")
	stop()
	assert.Equal(t, exitOK, r.wait(t))
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

// TestServe_OAuthNoTokenPassthrough: a user's access token ends at the
// gateway. In front of an HTTP upstream that takes the config's own
// header, every request the upstream gets carries that header and nothing
// of the user's token, and neither credential reaches the audit.
func TestServe_OAuthNoTokenPassthrough(t *testing.T) {
	nodeDir, node := nodeClients(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	const upstreamSecret = "upstream-static-secret-5d2a"
	var mu sync.Mutex
	var seen []string // every request's Authorization and, joined, its other header values
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, struct {
			Text string `json:"text"`
		}, error) {
			return nil, struct {
				Text string `json:"text"`
			}{in.Text}, nil
		})
	sdkHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var all []string
		for name, values := range r.Header {
			all = append(all, name+": "+strings.Join(values, ", "))
		}
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"\n"+strings.Join(all, "\n"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+upstreamSecret {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		sdkHandler.ServeHTTP(w, r)
	}))
	defer upstream.Close()

	dir := t.TempDir()
	t.Setenv("PURRAMCP_TEST_UPSTREAM_SECRET", upstreamSecret)
	cfg := `{"servers": {"up": {"url": "` + upstream.URL + `", "headers": {"Authorization": "Bearer ${env:PURRAMCP_TEST_UPSTREAM_SECRET}"}, ` +
		`"tools": {"echo": {"as": "echo"}}}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "purramcp.json"), []byte(cfg), 0o644))
	writeServeLock(t, dir)

	port := freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	p := oidctest.Start(t, oidctest.Options{Resource: resource, AccessTokenTTL: time.Minute})
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	r := startServe(t, serveCtx, dir, "--http", fmt.Sprintf("127.0.0.1:%d", port), "--oauth-issuer", p.Issuer, "--resource", resource)
	listenAddr(t, r)

	echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}
	plan, err := json.Marshal(map[string]any{"url": resource, "redirectUrl": "http://127.0.0.1:8977/callback", "scope": "mcp:tools",
		"lists": 1, "printToken": true, "calls": []any{echo, echo}})
	require.NoError(t, err)
	out := sdkSignIn(t, ctx, p, nodeDir, node, plan)
	assert.Equal(t, [][]string{{"echo"}}, out.Tools)
	require.Len(t, out.Results, 2)
	for i, res := range out.Results {
		assert.JSONEq(t, `{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"}}`, string(res), "call %d", i)
	}
	require.NotEmpty(t, out.AccessToken)
	stop()
	assert.Equal(t, exitOK, r.wait(t))

	mu.Lock()
	defer mu.Unlock()
	assert.GreaterOrEqual(t, len(seen), 5, "initialize, initialized, tools/list and both calls reached the upstream")
	for i, req := range seen {
		auth, headers, _ := strings.Cut(req, "\n")
		assert.Equal(t, "Bearer "+upstreamSecret, auth, "request %d", i)
		for _, part := range strings.Split(out.AccessToken, ".") {
			assert.NotContains(t, headers, part, "request %d carries the user's token", i)
		}
	}
	audit := r.stderr.String()
	assert.Equal(t, 2, strings.Count(audit, `"kind":"call"`))
	for _, secret := range append(strings.Split(out.AccessToken, "."), upstreamSecret) {
		assert.NotContains(t, audit, secret)
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}
