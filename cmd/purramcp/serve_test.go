package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
	"purra.dev/purramcp/fleet"
)

// serveMainEnv, when set in the environment, makes the test binary run
// `purramcp serve` with the JSON argument list it holds instead of the
// tests, with the signal handling main gives every subcommand: the Node
// clients and the signal test start it as a real child process.
const serveMainEnv = "PURRAMCP_TEST_SERVE_ARGS"

func init() {
	argsJSON, ok := os.LookupEnv(serveMainEnv)
	if !ok {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad", serveMainEnv, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runServe(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// syncBuffer collects a command's standard error while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveSetup writes a config with one server, "units", the stdio server
// started through sh so that its pid lands in DIR/pid and its flags come
// from DIR/flags (empty at first), and a lock of its catalog. It returns
// the directory.
func serveSetup(t *testing.T, lock bool) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flags"), nil, 0o644))
	script := fmt.Sprintf(`echo $$ > %s/pid; exec %s $(cat %s/flags)`, dir, stdioServer, dir)
	writeConfig(t, dir, map[string]server{"units": {command: "sh", args: []string{"-c", script}, tools: unitsTools}})
	if lock {
		writeServeLock(t, dir)
	}
	return dir
}

// writeServeLock approves the servers' current catalogs, as `purramcp lock`
// does.
func writeServeLock(t *testing.T, dir string) {
	t.Helper()
	cfg, err := fleet.LoadConfig(filepath.Join(dir, "purramcp.json"))
	require.NoError(t, err)
	f, err := fleet.New(cfg, fleet.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	require.NoError(t, f.Start(ctx))
	require.NoError(t, f.Lock().WriteFile(filepath.Join(dir, "purramcp-lock.json")))
	require.NoError(t, f.Close())
}

// childPid is the pid the upstream child wrote last.
func childPid(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// assertGone waits up to 5 s for process pid to be gone.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A serving is one in-process run of `purramcp serve`.
type serving struct {
	code    chan int
	stderr  *syncBuffer
	session *mcp.ClientSession // stdio only
	changes atomic.Int32       // list changes the stdio client was told of
}

// startServe runs serve in dir with args over in-process pipes (stdio) and
// connects a go-sdk client; for --http it only starts it.
func startServe(t *testing.T, ctx context.Context, dir string, args ...string) *serving {
	t.Helper()
	args = append([]string{"--config", filepath.Join(dir, "purramcp.json"),
		"--lock", filepath.Join(dir, "purramcp-lock.json")}, args...)
	s := &serving{code: make(chan int, 1), stderr: &syncBuffer{}}
	downR, downW := io.Pipe()
	upR, upW := io.Pipe()
	go func() {
		s.code <- runServe(ctx, args, downR, upW, s.stderr)
		_ = upW.Close()
		_ = downR.Close()
	}()
	t.Cleanup(func() { _ = downW.Close(); _ = upR.Close() })
	if strings.Contains(strings.Join(args, " "), "--http") {
		return s
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.changes.Add(1) },
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: upR, Writer: downW}, nil)
	require.NoError(t, err, "stderr: %s", s.stderr)
	s.session = cs
	return s
}

// wait returns serve's exit status, failing after 10 s.
func (s *serving) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-s.code:
		return code
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not return; stderr: %s", s.stderr)
		return -1
	}
}

// serveCall calls a tool and returns the result's JSON without the fields
// go-sdk adds under 2026-07-28.
func serveCall(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name, args string) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	require.NoError(t, err, "call %s", name)
	res.Meta = nil
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	delete(m, "resultType")
	b, err = json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func serveToolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

const convertResult = `{"content":[{"type":"text","text":"1 km = 1000 m"}],"structuredContent":{"unit":"m","value":1000}}`

func failed(code string) string {
	return `{"content":[{"type":"text","text":"` + code + `"}],"isError":true}`
}

func TestServe_RefusesWithoutLock(t *testing.T) {
	dir := serveSetup(t, false)
	var out, errOut bytes.Buffer
	code := runServe(t.Context(), []string{"--config", dir + "/purramcp.json", "--lock", dir + "/purramcp-lock.json"},
		strings.NewReader(""), &out, &errOut)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "purramcp serve: no lock file "+dir+"/purramcp-lock.json: run `purramcp lock` first to review "+
		"and approve the servers' catalogs (or --lock FILE)\n", errOut.String())
	assert.Empty(t, out.String())
}

func TestServe_UsageErrors(t *testing.T) {
	dir := serveSetup(t, true)
	t.Setenv("PURRAMCP_TEST_EMPTY_TOKEN", "")
	cfg := []string{"--config", dir + "/purramcp.json", "--lock", dir + "/purramcp-lock.json"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:8080"}, "--http 0.0.0.0:8080 is not a loopback address: set --oauth-issuer and --resource, or --token-env NAME, to require a bearer token"},
		{[]string{"--http", ":8080"}, "--http :8080 is not a loopback address: set --oauth-issuer and --resource, or --token-env NAME, to require a bearer token"},
		{[]string{"--http", "127.0.0.1"}, "--http 127.0.0.1: want host:port, like 127.0.0.1:8080"},
		{[]string{"--stateless"}, "--stateless, --token-env, --oauth-issuer, --resource, --allow-host and --allow-origin need --http"},
		{[]string{"--token-env", "X"}, "--stateless, --token-env, --oauth-issuer, --resource, --allow-host and --allow-origin need --http"},
		{[]string{"--oauth-issuer", "https://auth.example"}, "--stateless, --token-env, --oauth-issuer, --resource, --allow-host and --allow-origin need --http"},
		{[]string{"--http", "127.0.0.1:0", "--token-env", "X", "--oauth-issuer", "https://auth.example", "--resource", "https://mcp.example/mcp"},
			"--token-env and --oauth-issuer are exclusive"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-issuer", "https://auth.example"}, "--oauth-issuer and --resource go together"},
		{[]string{"--http", "127.0.0.1:0", "--resource", "https://mcp.example/mcp"}, "--oauth-issuer and --resource go together"},
		{[]string{"--http", "127.0.0.1:0", "--token-env", "PURRAMCP_TEST_EMPTY_TOKEN"},
			"--token-env PURRAMCP_TEST_EMPTY_TOKEN: the variable is unset or empty"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-introspection", "https://auth.example/introspect"},
			"--oauth-introspection needs --oauth-issuer and --resource"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-issuer", "https://auth.example", "--resource", "https://mcp.example/mcp",
			"--oauth-introspection", "https://auth.example/introspect", "--oauth-client-id", "gw"},
			"--oauth-introspection, --oauth-client-id and --oauth-client-secret-env go together"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-issuer", "https://auth.example", "--resource", "https://mcp.example/mcp",
			"--oauth-client-id", "gw", "--oauth-client-secret-env", "X"},
			"--oauth-introspection, --oauth-client-id and --oauth-client-secret-env go together"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-issuer", "https://auth.example", "--resource", "https://mcp.example/mcp",
			"--oauth-introspection", "https://auth.example/introspect", "--oauth-client-id", "gw", "--oauth-client-secret-env", "PURRAMCP_TEST_EMPTY_TOKEN"},
			"--oauth-client-secret-env PURRAMCP_TEST_EMPTY_TOKEN: the variable is unset or empty"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-jwt-typ", "JWT"}, "--oauth-jwt-typ needs --oauth-issuer, without --oauth-introspection"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-issuer", "https://auth.example", "--resource", "https://mcp.example/mcp",
			"--oauth-jwt-typ", "JWT", "--oauth-introspection", "https://auth.example/introspect", "--oauth-client-id", "gw", "--oauth-client-secret-env", "X"},
			"--oauth-jwt-typ needs --oauth-issuer, without --oauth-introspection"},
		{[]string{"--max-calls", "0"}, "--max-body-bytes, --max-session-calls and --max-calls must be positive"},
		{[]string{"--max-queue", "-1"}, "--max-user-calls and --max-queue must not be negative"},
		{[]string{"--max-wait", "6m"}, "--max-wait 6m0s: must be positive and at most 5m"},
		{[]string{"--max-user-sessions", "0"}, "--max-sessions and --max-user-sessions must be positive"},
		{[]string{"--oauth-introspection-rate", "0"}, "--oauth-introspection-rate and --oauth-introspection-rate-per-address must be positive"},
		{[]string{"--connect-timeout", "0s"}, "--connect-timeout 0s: must be positive, like 60s or 2m"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		code := runServe(t.Context(), append(append([]string{}, cfg...), tc.args...), strings.NewReader(""), &out, &errOut)
		assert.Equal(t, exitUsage, code, "args %v", tc.args)
		assert.Equal(t, "purramcp serve: "+tc.want+"\n", errOut.String(), "args %v", tc.args)
	}
}

// Over stdio: the approved tools, a success, a refused argument, audit
// lines on stderr, and when the client leaves, exit 0 with no child left.
func TestServe_Stdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	s := startServe(t, ctx, dir)
	assert.Equal(t, []string{"units_convert", "units_list"}, serveToolNames(t, ctx, s.session))
	assert.JSONEq(t, convertResult, serveCall(t, ctx, s.session, "units_convert", `{"value":1,"from":"km","to":"m"}`))
	assert.JSONEq(t, failed("mcp_invalid_arguments"),
		serveCall(t, ctx, s.session, "units_convert", `{"value":1,"from":"km","to":"parsec"}`))
	pid := childPid(t, dir)
	require.NoError(t, s.session.Close())
	assert.Equal(t, exitOK, s.wait(t), "stderr: %s", s.stderr)
	assertGone(t, pid)

	var kinds []string
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.HasPrefix(line, "{") {
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &e), line)
			kinds = append(kinds, fmt.Sprintf("%s %v %v", e["kind"], e["tool"], e["code"]))
		}
	}
	assert.Equal(t, []string{"discover <nil> ", "call units_convert ", "call units_convert mcp_invalid_arguments"}, kinds)
	assert.Contains(t, s.stderr.String(), "purramcp serve: server units: ready\npurramcp serve: serving 2 tools: units_convert, units_list\n")
	assert.NotContains(t, s.stderr.String(), "parsec", "no payload in the audit")
}

func TestServe_UnlockedWarns(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dir := serveSetup(t, false)
	s := startServe(t, ctx, dir, "--unlocked")
	assert.Equal(t, []string{"units_convert", "units_list"}, serveToolNames(t, ctx, s.session))
	require.NoError(t, s.session.Close())
	assert.Equal(t, exitOK, s.wait(t))
	assert.True(t, strings.HasPrefix(s.stderr.String(), "purramcp serve: WARNING: --unlocked admits every catalog "+
		"the servers list, unreviewed; use it for development only\n"), s.stderr.String())
}

// untilCode calls units_list until it succeeds, checking that every failed
// call answers one code among want, within its own deadline.
func untilSuccess(t *testing.T, ctx context.Context, cs *mcp.ClientSession, want ...string) (codes []string) {
	t.Helper()
	for {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got := serveCall(t, callCtx, cs, "units_list", `{}`)
		cancel()
		if got == `{"content":[{"text":"ft, km, m, mi","type":"text"}]}` {
			return codes
		}
		var res struct {
			Content []struct{ Text string }
			IsError bool
		}
		require.NoError(t, json.Unmarshal([]byte(got), &res))
		require.True(t, res.IsError, got)
		require.Len(t, res.Content, 1, got)
		require.Contains(t, want, res.Content[0].Text, got)
		if len(codes) == 0 || codes[len(codes)-1] != res.Content[0].Text {
			codes = append(codes, res.Content[0].Text)
		}
		require.NoError(t, ctx.Err(), "the server did not come back")
		time.Sleep(25 * time.Millisecond)
	}
}

// The upstream child killed mid-session: codes, never a hang; back with the
// same digest the tools work again and the list never changed. Then a
// changed catalog removes the server's tools until the approved one is back.
func TestServe_UpstreamKilledThenChanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	s := startServe(t, ctx, dir)
	tools := serveToolNames(t, ctx, s.session)
	require.Equal(t, []string{"units_convert", "units_list"}, tools)
	first := childPid(t, dir)
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	codes := untilSuccess(t, ctx, s.session, "mcp_connection_closed", "mcp_transport_error")
	assert.NotEmpty(t, codes, "the calls made while the child was dead answered codes")
	assert.NotEqual(t, first, childPid(t, dir), "a new child serves")
	assert.Equal(t, tools, serveToolNames(t, ctx, s.session))
	time.Sleep(100 * time.Millisecond) // past go-sdk's notification debounce
	assert.Equal(t, int32(0), s.changes.Load(), "no list change for a recovery with the same digest")

	// A changed catalog: the child comes back describing units.list anew.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flags"), []byte("-list-description Changed"), 0o644))
	require.NoError(t, syscall.Kill(childPid(t, dir), syscall.SIGKILL))
	require.Eventually(t, func() bool { return len(serveToolNames(t, ctx, s.session)) == 0 }, 20*time.Second, 25*time.Millisecond,
		"the unapproved catalog's tools leave the list")
	assert.Eventually(t, func() bool { return s.changes.Load() > 0 }, 5*time.Second, 10*time.Millisecond,
		"the client was told (notifications/tools/list_changed)")
	_, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "units_list", Arguments: json.RawMessage(`{}`)})
	assert.Error(t, err, "a removed tool is unknown")

	// The approved catalog again: the tools come back.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flags"), nil, 0o644))
	require.NoError(t, syscall.Kill(childPid(t, dir), syscall.SIGKILL))
	require.Eventually(t, func() bool { return len(serveToolNames(t, ctx, s.session)) == 2 }, 20*time.Second, 25*time.Millisecond)
	untilSuccess(t, ctx, s.session, "mcp_catalog_stale")
	last := childPid(t, dir)
	require.NoError(t, s.session.Close())
	assert.Equal(t, exitOK, s.wait(t))
	assertGone(t, last)
}

// listenAddr waits for serve to print its HTTP address.
func listenAddr(t *testing.T, s *serving) string {
	t.Helper()
	re := regexp.MustCompile(`listening on http://(\S+)/mcp`)
	var addr string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(s.stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 20*time.Second, 10*time.Millisecond, "serve did not listen; stderr: %s", s.stderr)
	return addr
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestServe_HTTP(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		ask      string // the version the client asks for; "": go-sdk's default
		protocol string
	}{
		{"default endpoint, modern client", nil, "", "2026-07-28"},
		{"default endpoint, legacy client", nil, "2025-11-25", "2025-11-25"},
		{"stateless", []string{"--stateless"}, "", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			dir := serveSetup(t, true)
			t.Setenv("PURRAMCP_TEST_TOKEN", "t0ken")
			serveCtx, stop := context.WithCancel(ctx)
			defer stop()
			s := startServe(t, serveCtx, dir, append([]string{"--http", "127.0.0.1:0", "--token-env", "PURRAMCP_TEST_TOKEN"}, tc.args...)...)
			base := "http://" + listenAddr(t, s)

			client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
				HTTPClient: &http.Client{Transport: bearerTransport{"t0ken"}}}, &mcp.ClientSessionOptions{ProtocolVersion: tc.ask})
			require.NoError(t, err)
			assert.Equal(t, tc.protocol, cs.InitializeResult().ProtocolVersion)
			assert.Equal(t, []string{"units_convert", "units_list"}, serveToolNames(t, ctx, cs))
			assert.JSONEq(t, convertResult, serveCall(t, ctx, cs, "units_convert", `{"value":1,"from":"km","to":"m"}`))

			for _, hc := range []struct {
				token, origin string
				status        int
			}{{"", "", 401}, {"wrong", "", 401}, {"t0ken", "https://evil.example", 403}, {"", "https://evil.example", 403}} {
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(`{}`))
				if hc.origin != "" {
					req.Header.Set("Origin", hc.origin)
				}
				resp, err := (&http.Client{Transport: bearerTransport{hc.token}}).Do(req)
				require.NoError(t, err)
				_ = resp.Body.Close()
				assert.Equal(t, hc.status, resp.StatusCode, "token %q origin %q", hc.token, hc.origin)
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/status", nil)
			resp, err := (&http.Client{Transport: bearerTransport{"t0ken"}}).Do(req)
			require.NoError(t, err)
			var st struct {
				Upstreams []struct{ ID, State string }
				Tools     []string
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
			_ = resp.Body.Close()
			assert.Equal(t, []string{"units_convert", "units_list"}, st.Tools)
			require.Len(t, st.Upstreams, 1)
			assert.Equal(t, "ready", st.Upstreams[0].State)

			pid := childPid(t, dir)
			stop()
			assert.Equal(t, exitOK, s.wait(t))
			assertGone(t, pid)
			_ = cs.Close()
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		})
	}
}

func TestServe_StatusFlag(t *testing.T) {
	dir := serveSetup(t, true)
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	code := runServe(ctx, []string{"--config", dir + "/purramcp.json", "--lock", dir + "/purramcp-lock.json", "--status"},
		strings.NewReader(""), &out, &errOut)
	assert.Equal(t, exitOK, code, errOut.String())
	lock, err := fleet.LoadLock(dir + "/purramcp-lock.json")
	require.NoError(t, err)
	digest, _ := lock.Digest("units")
	var st map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &st))
	ups := st["upstreams"].([]any)
	require.Len(t, ups, 1)
	up := ups[0].(map[string]any)
	delete(up, "since")
	assert.Equal(t, map[string]any{"id": "units", "state": "ready", "digest": digest, "attempts": 1.0}, up)
	assert.Equal(t, []any{"units_convert", "units_list"}, st["tools"])
	assertGone(t, childPid(t, dir))
}

// SIGTERM to a serving process: it closes its upstream and exits 0.
func TestServe_SignalShutdown(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			dir := serveSetup(t, true)
			cmd := serveProcess(ctx, dir, "--http", "127.0.0.1:0")
			var stderr syncBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") },
				20*time.Second, 10*time.Millisecond, "stderr: %s", &stderr)
			pid := childPid(t, dir)
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			assert.NoError(t, err, "exit status 0; stderr: %s", &stderr)
			assertGone(t, pid)
		})
	}
}

// Two `serve --stateless` replicas on one config and lock, each with its
// own child server, behind a round-robin proxy: one client's requests go
// to each in turn and see the same tools. They share no store: the
// approved digest is in the lock file.
func TestServe_StatelessReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	t.Setenv("PURRAMCP_TEST_TOKEN", "r3plica")
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	var replicas [2]*serving
	var targets [2]*url.URL
	for i := range replicas {
		replicas[i] = startServe(t, serveCtx, dir, "--http", "127.0.0.1:0", "--stateless", "--token-env", "PURRAMCP_TEST_TOKEN")
		u, err := url.Parse("http://" + listenAddr(t, replicas[i]))
		require.NoError(t, err)
		targets[i] = u
	}
	var next atomic.Int32
	var served [2]atomic.Int32
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := int(next.Add(1)-1) % 2
		served[i].Add(1)
		r.SetURL(targets[i])
	}})
	defer front.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{"r3plica"}}}, nil)
	require.NoError(t, err)
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	for i := range 2 { // one list from each replica
		assert.Equal(t, []string{"units_convert", "units_list"}, serveToolNames(t, ctx, cs), "list %d", i)
	}
	for i := range 4 { // then calls, alternately
		assert.JSONEq(t, convertResult, serveCall(t, ctx, cs, "units_convert", `{"value":1,"from":"km","to":"m"}`), "call %d", i)
	}
	assert.InDelta(t, served[0].Load(), served[1].Load(), 1, "the requests alternate")
	calls := [2]int{}
	for i, r := range replicas {
		calls[i] = strings.Count(r.stderr.String(), `"kind":"call"`)
	}
	assert.Equal(t, [2]int{2, 2}, calls, "each replica served half of the calls")
	_ = cs.Close()
	stop()
	for _, r := range replicas {
		assert.Equal(t, exitOK, r.wait(t))
	}
	front.CloseClientConnections()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

func TestUpstreamCalls(t *testing.T) {
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {
	  "a": {"command": "x", "maxCalls": 4, "tools": {"t": {"as": "a_t"}}},
	  "b": {"command": "x", "tools": {"t": {"as": "b_t"}}}}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a": 4}, upstreamCalls(cfg))
}

// TestGatewayStatesAreTheFleets: the gateway names every state a fleet
// server can be in, with the fleet's own word, so /status and serve's
// report never drift from the fleet.
func TestGatewayStatesAreTheFleets(t *testing.T) {
	for fleetState, gatewayState := range map[fleet.State]string{
		fleet.StateConnecting:   gateway.StateConnecting,
		fleet.StateReady:        gateway.StateReady,
		fleet.StateUnapproved:   gateway.StateUnapproved,
		fleet.StateBackoff:      gateway.StateBackoff,
		fleet.StateUnauthorized: gateway.StateUnauthorized,
		fleet.StateClosed:       gateway.StateClosed,
	} {
		assert.Equal(t, string(fleetState), gatewayState)
	}
}
