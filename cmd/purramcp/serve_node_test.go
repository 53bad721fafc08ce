package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/fleet"
)

// serveProcess is `purramcp serve` with args on dir's config and lock, as
// a child process: the test binary itself (see serveMainEnv).
func serveProcess(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), serveMainEnv+"="+serveArgsJSON(dir, args...))
	return cmd
}

// serveArgsJSON is the argument list of serveProcess as JSON.
func serveArgsJSON(dir string, args ...string) string {
	all := append([]string{"--config", filepath.Join(dir, "purramcp.json"),
		"--lock", filepath.Join(dir, "purramcp-lock.json")}, args...)
	b, _ := json.Marshal(all)
	return string(b)
}

// nodeClients returns the directory of the pinned Node clients
// (.ci/ci-node after `npm ci`, or $PURRAMCP_NODE_CLIENTS). When they are
// missing the test fails under CI=true and is skipped, saying how to
// install them, otherwise.
func nodeClients(t *testing.T) (dir, node string) {
	t.Helper()
	dir = os.Getenv("PURRAMCP_NODE_CLIENTS")
	if dir == "" {
		dir = filepath.Join("..", "..", ".ci", "ci-node")
	}
	dir, err := filepath.Abs(dir)
	require.NoError(t, err)
	node, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	_, inspErr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	if nodeErr != nil || sdkErr != nil || inspErr != nil {
		msg := "the Node MCP clients are not installed in " + dir + ": run npm ci --prefix .ci/ci-node"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir, node
}

// runNode runs node with args in dir, bounded by 60 s, and returns its
// standard output; it must exit 0.
func runNode(t *testing.T, ctx context.Context, dir, node string, args ...string) string {
	t.Helper()
	out, code := runNodeStatus(t, ctx, dir, node, args...)
	require.Equal(t, 0, code, "node %s: exit status", strings.Join(args, " "))
	return out
}

// runNodeStatus runs node with args in dir, bounded by 60 s, and returns
// its standard output and exit status.
func runNodeStatus(t *testing.T, ctx context.Context, dir, node string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, "node %s\nstderr: %s", strings.Join(args, " "), &stderr)
	}
	require.NoError(t, ctx.Err(), "node %s did not finish; stderr: %s", strings.Join(args, " "), &stderr)
	return string(out), cmd.ProcessState.ExitCode()
}

// sdkPlanCalls are the calls the TypeScript SDK client makes: a success, a
// refused argument, and an unknown tool.
const sdkPlanCalls = `[{"name":"units_convert","arguments":{"value":1,"from":"km","to":"m"}},` +
	`{"name":"units_convert","arguments":{"value":1,"from":"km","to":"parsec"}},{"name":"units_list"}]`

const sdkWant = `{"tools":["units_convert","units_list"],"results":[` + convertResult + `,` +
	`{"content":[{"type":"text","text":"mcp_invalid_arguments"}],"isError":true},` +
	`{"content":[{"type":"text","text":"ft, km, m, mi"}]}]}`

// The official TypeScript SDK client starts `purramcp serve` over stdio.
func TestServeNode_SDKStdio(t *testing.T) {
	clients, node := nodeClients(t)
	dir := serveSetup(t, true)
	plan := `{"transport":"stdio","command":"` + os.Args[0] + `","env":{"` + serveMainEnv + `":` +
		mustJSON(t, serveArgsJSON(dir)) + `},"calls":` + sdkPlanCalls + `}`
	got := runNode(t, t.Context(), clients, node, "sdk-client.mjs", plan)
	assert.JSONEq(t, sdkWant, got)
	assertGone(t, childPid(t, dir))
}

// The official TypeScript SDK client over streamable HTTP, with a token,
// against both modes.
func TestServeNode_SDKHTTP(t *testing.T) {
	clients, node := nodeClients(t)
	for _, mode := range [][]string{nil, {"--stateless"}} {
		t.Run(strings.Join(append([]string{"http"}, mode...), " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			dir := serveSetup(t, true)
			t.Setenv("PURRAMCP_TEST_TOKEN", "n0de-t0ken")
			serveCtx, stop := context.WithCancel(ctx)
			defer stop()
			s := startServe(t, serveCtx, dir, append([]string{"--http", "127.0.0.1:0", "--token-env", "PURRAMCP_TEST_TOKEN"}, mode...)...)
			url := "http://" + listenAddr(t, s) + "/mcp"
			plan := `{"transport":"http","url":"` + url + `","token":"n0de-t0ken","calls":` + sdkPlanCalls + `}`
			assert.JSONEq(t, sdkWant, runNode(t, ctx, clients, node, "sdk-client.mjs", plan))
			stop()
			assert.Equal(t, exitOK, s.wait(t))
		})
	}
}

// The MCP Inspector CLI lists and calls the tools through `purramcp serve`
// over stdio.
func TestServeNode_InspectorCLI(t *testing.T) {
	clients, node := nodeClients(t)
	dir := serveSetup(t, true)
	inspector := filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	base := []string{inspector, "--cli", os.Args[0], "-e", serveMainEnv + "=" + serveArgsJSON(dir)}

	var listed struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(runNode(t, t.Context(), clients, node,
		append(base, "--method", "tools/list")...)), &listed))
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"units_convert", "units_list"}, names)

	got := runNode(t, t.Context(), clients, node, append(base, "--method", "tools/call", "--tool-name", "units_convert",
		"--tool-arg", "value=1", "from=km", "to=m")...)
	assert.JSONEq(t, convertResult, got)
	// The Inspector prints an isError result and exits 5.
	got, code := runNodeStatus(t, t.Context(), clients, node, append(base, "--method", "tools/call", "--tool-name",
		"units_convert", "--tool-arg", "value=1", "from=km", "to=parsec")...)
	assert.Equal(t, 5, code)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"mcp_invalid_arguments"}],"isError":true}`, got)
	assertGone(t, childPid(t, dir))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// The TypeScript SDK v2 client (@modelcontextprotocol/client) over
// streamable HTTP, with each of its version negotiations, against the
// default endpoint and --stateless: every cell lists and calls, at the
// version the endpoint serves it.
func TestServeNode_SDK2HTTP(t *testing.T) {
	clients, node := nodeClients(t)
	if _, err := os.Stat(filepath.Join(clients, "node_modules", "@modelcontextprotocol", "client", "package.json")); err != nil {
		msg := "the TypeScript SDK v2 client is not installed in " + clients + ": run npm ci --prefix .ci/ci-node"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, mode := range [][]string{nil, {"--stateless"}} {
		ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
		dir := serveSetup(t, true)
		t.Setenv("PURRAMCP_TEST_TOKEN", "n0de-t0ken")
		serveCtx, stop := context.WithCancel(ctx)
		s := startServe(t, serveCtx, dir, append([]string{"--http", "127.0.0.1:0", "--token-env", "PURRAMCP_TEST_TOKEN"}, mode...)...)
		url := "http://" + listenAddr(t, s) + "/mcp"
		for _, tc := range []struct{ negotiation, protocol string }{
			{"default", "2025-11-25"}, {"legacy", "2025-11-25"}, {"auto", "2026-07-28"}, {"2026-07-28", "2026-07-28"},
		} {
			t.Run(strings.Join(append([]string{"http"}, mode...), " ")+" "+tc.negotiation, func(t *testing.T) {
				plan := `{"sdk":2,"transport":"http","url":"` + url + `","token":"n0de-t0ken","negotiation":"` + tc.negotiation +
					`","calls":` + sdkPlanCalls + `}`
				var got map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(runNode(t, ctx, clients, node, "sdk-client.mjs", plan)), &got))
				assert.JSONEq(t, `"`+tc.protocol+`"`, string(got["protocolVersion"]))
				delete(got, "protocolVersion")
				// At 2026-07-28 go-sdk stamps _meta.serverInfo on every result.
				var results []map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(got["results"], &results))
				for _, r := range results {
					if tc.protocol == "2026-07-28" {
						assert.Contains(t, string(r["_meta"]), `"io.modelcontextprotocol/serverInfo":{"name":"purramcp"`)
					}
					delete(r, "_meta")
				}
				var err error
				got["results"], err = json.Marshal(results)
				require.NoError(t, err)
				rest, err := json.Marshal(got)
				require.NoError(t, err)
				assert.JSONEq(t, sdkWant, string(rest))
			})
		}
		stop()
		assert.Equal(t, exitOK, s.wait(t))
		cancel()
	}
}

// A stdio upstream on the TypeScript SDK v2 (@modelcontextprotocol/server
// serveStdio): locked while it spoke only 2025-11-25, it still matches its
// lock once it speaks both eras; once it rejects 2025-era openings
// (legacy: 'reject') it is drift naming both versions, and lock records
// 2026-07-28.
func TestLockNode_SDK2ServerEraPin(t *testing.T) {
	clients, node := nodeClients(t)
	if _, err := os.Stat(filepath.Join(clients, "node_modules", "@modelcontextprotocol", "server", "package.json")); err != nil {
		msg := "the TypeScript SDK v2 server is not installed in " + clients + ": run npm ci --prefix .ci/ci-node"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	mode := func(m string) {
		writeConfig(t, dir, map[string]server{"notes": {command: node, args: []string{filepath.Join(clients, "sdk2-server.mjs"), m},
			tools: `{"notes.search": {"as": "notes_search"}}`}})
	}
	lockArgs := []string{"lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json"}
	checkArgs := append([]string{"lock", "--check"}, lockArgs[1:]...)
	version := func() string {
		lock, err := fleet.LoadLock(filepath.Join(dir, "purramcp-lock.json"))
		require.NoError(t, err)
		return lock.ProtocolVersion("notes")
	}

	mode("legacy")
	r := runIn(t, dir, lockArgs...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "2025-11-25", version())

	mode("both")
	r = runIn(t, dir, checkArgs...)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "connected, protocol 2025-11-25")

	mode("modern")
	r = runIn(t, dir, checkArgs...)
	assert.Equal(t, exitFail, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  ~ (server): protocolVersion 2025-11-25 -> 2026-07-28\n")
	r = runIn(t, dir, lockArgs...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "2026-07-28", version())
	r = runIn(t, dir, checkArgs...)
	assert.Equal(t, exitOK, r.code, r.stderr)
}

// startSDK2HTTP starts sdk2-server.mjs over HTTP in mode and returns its URL;
// the process ends with the test.
func startSDK2HTTP(t *testing.T, clients, node, mode string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, filepath.Join(clients, "sdk2-server.mjs"), mode, "http")
	cmd.Dir = clients
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	urls := make(chan string, 1)
	go func() { // ends when the process does
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("sdk2-server.mjs did not start")
		return ""
	}
}

// Streamable HTTP upstreams on the TypeScript SDK v2 (createMcpHandler),
// default and legacy: 'reject': inspect negotiates 2026-07-28 and binds;
// a lock taken at 2025-11-25 (the stdio server before its upgrade) still
// matches the default one, which serves 2025-era requests too, and is
// drift naming both versions on the modern-only one.
func TestLockNode_SDK2HTTPServers(t *testing.T) {
	clients, node := nodeClients(t)
	if _, err := os.Stat(filepath.Join(clients, "node_modules", "@modelcontextprotocol", "server", "package.json")); err != nil {
		msg := "the TypeScript SDK v2 server is not installed in " + clients + ": run npm ci --prefix .ci/ci-node"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	tools := `{"notes.search": {"as": "notes_search"}}`
	writeConfig(t, dir, map[string]server{"notes": {command: node, args: []string{filepath.Join(clients, "sdk2-server.mjs"), "legacy"}, tools: tools}})
	lockArgs := []string{"lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json"}
	r := runIn(t, dir, lockArgs...)
	require.Equal(t, exitOK, r.code, r.stderr)
	checkArgs := append([]string{"lock", "--check"}, lockArgs[1:]...)
	for _, tc := range []struct {
		mode  string
		check int
	}{{"both", exitOK}, {"modern", exitFail}} {
		t.Run(tc.mode, func(t *testing.T) {
			url := startSDK2HTTP(t, clients, node, tc.mode)
			in := runIn(t, dir, "inspect", "--json", "--url", url)
			require.Equal(t, exitOK, in.code, in.stderr)
			var report inspectReport
			require.NoError(t, json.Unmarshal([]byte(in.stdout), &report))
			assert.Equal(t, "2026-07-28", report.ProtocolVersion)
			assert.Equal(t, 1, report.Binds)

			require.NoError(t, os.WriteFile(filepath.Join(dir, "purramcp.json"), []byte(`{"servers": {"notes": {"type": "http", "url": "`+
				url+`", "tools": `+tools+`}}}`), 0o644))
			r := runIn(t, dir, checkArgs...)
			assert.Equal(t, tc.check, r.code, r.stderr)
			if tc.check == exitFail {
				assert.Contains(t, r.stdout, "  ~ (server): protocolVersion 2025-11-25 -> 2026-07-28\n")
			} else {
				assert.Contains(t, r.stderr, "connected, protocol 2025-11-25")
			}
		})
	}
}
