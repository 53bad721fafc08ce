package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

const testToken = "s3cret-token"

// serveHTTP starts an httptest server for g's handler; closed at cleanup.
func serveHTTP(t testing.TB, g *gateway.Gateway, opts gateway.HTTPOptions) *httptest.Server {
	t.Helper()
	h, err := g.HTTPHandler(opts)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connectHTTP connects a go-sdk client to endpoint with the token, at
// go-sdk's default protocol version.
func connectHTTP(t testing.TB, ctx context.Context, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	return connectHTTPAt(t, ctx, endpoint, token, "", nil)
}

// connectHTTPAt is connectHTTP asking for protocol version ("" go-sdk's
// default), with the client options opts (nil: none).
func connectHTTPAt(t testing.TB, ctx context.Context, endpoint, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestHTTP_Protocols(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		ask       string // the version the client asks for; "": go-sdk's default
		protocol  string
		session   bool // the client holds a session (Mcp-Session-Id)
	}{
		{"default endpoint, default client", false, "", "2026-07-28", false},
		{"default endpoint, client at 2025-11-25", false, "2025-11-25", "2025-11-25", true},
		{"default endpoint, client at 2025-06-18", false, "2025-06-18", "2025-06-18", true},
		{"stateless, default client", true, "", "2026-07-28", false},
		{"stateless, client at 2025-11-25", true, "2025-11-25", "2025-11-25", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			f := newFakeFleet(t)
			u := newUpstream("Search documents")
			f.connect(ctx, "docs", u, "", "")
			g := newGateway(t, f, gateway.Options{})
			g.Refresh()
			srv := serveHTTP(t, g, gateway.HTTPOptions{Token: testToken, Stateless: tc.stateless})
			cs := connectHTTPAt(t, ctx, srv.URL+"/mcp", testToken, tc.ask, nil)
			assert.Equal(t, tc.protocol, cs.InitializeResult().ProtocolVersion)
			assert.Equal(t, tc.session, cs.ID() != "")
			assert.Equal(t, []string{"big", "block", "fail", "search"}, toolNames(t, ctx, cs))
			assert.JSONEq(t, `{"content":[{"type":"text","text":"found cats"}],"structuredContent":{"count":4}}`,
				call(t, ctx, cs, "search", `{"q":"cats"}`))
			assert.JSONEq(t, codeResult(purramcp.CodeToolError), call(t, ctx, cs, "fail", `{}`))
			assert.JSONEq(t, codeResult(purramcp.CodeInvalidArguments), call(t, ctx, cs, "search", `{"q":1}`))
			assert.Equal(t, int32(2), u.calls.Load())
		})
	}
}

func TestHTTP_Access(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	// Stateless, so the sessions the accepted requests open leave nothing
	// behind; the checks run before go-sdk sees the request either way.
	srv := serveHTTP(t, g, gateway.HTTPOptions{Token: testToken, MaxBodyBytes: 4096, Stateless: true,
		AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"127.0.0.1", "mcp.internal"}})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
	}{
		{"no token", "POST", "/mcp", initialize, nil, http.StatusUnauthorized},
		{"wrong token", "POST", "/mcp", initialize, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"token without Bearer", "POST", "/mcp", initialize, map[string]string{"Authorization": testToken}, http.StatusUnauthorized},
		{"empty bearer", "POST", "/mcp", initialize, map[string]string{"Authorization": "Bearer "}, http.StatusUnauthorized},
		{"token with a suffix", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken + "x"}, http.StatusUnauthorized},
		{"lower-case scheme", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "bearer " + testToken}, http.StatusOK},
		{"foreign origin", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign origin without token", "POST", "/mcp", initialize,
			map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"null origin", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken, "Origin": "null"}, http.StatusForbidden},
		{"allowed origin, other scheme", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://app.example.com"}, http.StatusForbidden},
		{"foreign host (DNS rebinding)", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken, "Host": "evil.example"}, http.StatusForbidden},
		{"body over the cap", "POST", "/mcp", `{"pad":"` + strings.Repeat("x", 5000) + `"}`,
			map[string]string{"Authorization": "Bearer " + testToken}, http.StatusRequestEntityTooLarge},
		{"unknown path", "GET", "/other", "", map[string]string{"Authorization": "Bearer " + testToken}, http.StatusNotFound},
		{"status without token", "GET", "/status", "", nil, http.StatusUnauthorized},
		{"allowed origin", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://app.example.com"}, http.StatusOK},
		{"allowed host", "POST", "/mcp", initialize,
			map[string]string{"Authorization": "Bearer " + testToken, "Host": "MCP.internal:8443"}, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode, "case %s", tc.name)
			if tc.status == http.StatusUnauthorized {
				assert.Equal(t, `Bearer realm="purramcp"`, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	srv.Client().CloseIdleConnections()
}

func TestHTTP_Status(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	digest := f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	f.connect(ctx, "mail", newUpstream("Search mail"), "mail_", "sha256:locked")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	srv := serveHTTP(t, g, gateway.HTTPOptions{})
	resp, err := http.Get(srv.URL + "/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "loopback without a token")
	var st map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	b, err := json.Marshal(st)
	require.NoError(t, err)
	zero := time.Time{}.Format(time.RFC3339)
	assert.JSONEq(t, `{"tools":["big","block","fail","search"],"upstreams":[`+
		`{"id":"docs","state":"ready","digest":"`+digest+`","attempts":0,"since":"`+zero+`"},`+
		`{"id":"mail","state":"unapproved","digest":"`+f.servers["mail"].digest+`","attempts":0,"since":"`+zero+`"}]}`,
		string(b))
}

func TestHTTP_InvalidOptions(t *testing.T) {
	g := newGateway(t, newFakeFleet(t), gateway.Options{})
	for _, opts := range []gateway.HTTPOptions{{MaxBodyBytes: -1}, {SessionIdleTimeout: -time.Second}} {
		h, err := g.HTTPHandler(opts)
		assert.Nil(t, h)
		assert.ErrorIs(t, err, purramcp.ErrBindingInvalid, "options %+v", opts)
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		token bool
		want  error
	}{
		{"127.0.0.1:8080", false, nil},
		{"[::1]:8080", false, nil},
		{"localhost:8080", false, nil},
		{"0.0.0.0:8080", false, gateway.ErrNoToken},
		{":8080", false, gateway.ErrNoToken},
		{"10.1.2.3:8080", false, gateway.ErrNoToken},
		{"example.com:443", false, gateway.ErrNoToken},
		{"0.0.0.0:8080", true, nil},
	} {
		err := gateway.CheckListen(tc.addr, tc.token)
		if tc.want == nil {
			assert.NoError(t, err, "addr %s", tc.addr)
		} else {
			assert.ErrorIs(t, err, tc.want, "addr %s", tc.addr)
		}
	}
	assert.Error(t, gateway.CheckListen("no-port", true))
}

// Two stateless replicas, each with its own fleet connection, behind a
// round-robin proxy: one client's requests alternate between them and see
// the same tools, because what decides admission (the approved digest)
// travels with each replica's lock, not in a shared store.
func TestHTTP_StatelessReplicasBehindRoundRobin(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var replicas [2]*httptest.Server
	var upstreams [2]*upstream
	var digests [2]string
	for i := range replicas {
		f := newFakeFleet(t)
		upstreams[i] = newUpstream("Search documents")
		digests[i] = f.connect(ctx, "docs", upstreams[i], "", "")
		g := newGateway(t, f, gateway.Options{})
		g.Refresh()
		replicas[i] = serveHTTP(t, g, gateway.HTTPOptions{Token: testToken, Stateless: true})
	}
	require.Equal(t, digests[0], digests[1], "both replicas admit the same locked digest")
	var next atomic.Int32
	var served [2]atomic.Int32
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := int(next.Add(1)-1) % 2
		served[i].Add(1)
		target, _ := url.Parse(replicas[i].URL)
		r.SetURL(target)
	}}
	front := httptest.NewServer(proxy)
	defer front.Close()

	cs := connectHTTP(t, ctx, front.URL+"/mcp", testToken)
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	first := toolNames(t, ctx, cs)
	second := toolNames(t, ctx, cs)
	assert.Equal(t, []string{"big", "block", "fail", "search"}, first)
	assert.Equal(t, first, second)
	for i := range 6 {
		assert.JSONEq(t, `{"content":[{"type":"text","text":"found r"}],"structuredContent":{"count":1}}`,
			call(t, ctx, cs, "search", `{"q":"r"}`), "call %d", i)
	}
	assert.Equal(t, int32(3), upstreams[0].calls.Load(), "calls alternate: replica 0")
	assert.Equal(t, int32(3), upstreams[1].calls.Load(), "calls alternate: replica 1")
	assert.InDelta(t, served[0].Load(), served[1].Load(), 1, "every request alternates")
	_ = cs.Close()
	front.CloseClientConnections()
}
