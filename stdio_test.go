package purramcp_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// A real child process over stdio: testdata/stdioserver is a go-sdk server on
// mcp.StdioTransport, launched with mcp.CommandTransport (reference-behaviors.md
// §L, gosdk-notes §7).

// buildStdioServer returns testdata/stdioserver built with the go command of
// the running toolchain, once per test binary, into the package's temporary
// directory (see TestMain).
func buildStdioServer(t *testing.T) string {
	t.Helper()
	b := stdioServerBinary()
	require.NoError(t, b.err, "go build ./testdata/stdioserver: %s", b.output)
	return b.path
}

// builtBinary is the outcome of one go build.
type builtBinary struct {
	path   string
	output []byte
	err    error
}

// stdioServerBinary builds the child server on first use.
var stdioServerBinary = sync.OnceValue(func() builtBinary {
	bin := filepath.Join(packageTempDir, "stdioserver")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./testdata/stdioserver")
	out, err := cmd.CombinedOutput()
	return builtBinary{bin, out, err}
})

// stdioSession is one connected child process.
type stdioSession struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	monitor *purramcp.CatalogMonitor
}

// connectStdio launches bin and connects a monitored client at version ("" =
// go-sdk's default). The caller closes the session: leak checks run before
// t.Cleanup would.
func connectStdio(t *testing.T, bin, version string) stdioSession {
	t.Helper()
	cmd := exec.Command(bin)
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}),
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	require.NoError(t, monitor.Attach(cs))
	want := version
	if want == "" {
		want = purramcp.ProtocolVersion20260728
	}
	require.Equal(t, want, monitor.ProtocolVersion(), "negotiated over stdio")
	return stdioSession{cmd: cmd, session: cs, monitor: monitor}
}

// closeStdio closes the session and checks that the child exited with
// status exit and was reaped, and that the monitor closed with the session.
func closeStdio(t *testing.T, s stdioSession, exit int) {
	t.Helper()
	err := s.session.Close()
	if exit == 0 {
		assert.NoError(t, err, "clean exit")
	}
	require.NotNil(t, s.cmd.ProcessState, "the child was waited for")
	assert.True(t, s.cmd.ProcessState.Exited(), "the child exited")
	assert.Equal(t, exit, s.cmd.ProcessState.ExitCode())
	require.Eventually(t, func() bool { return s.monitor.Check(s.monitor.Revision()) != nil }, waitFor, tick)
	assert.Equal(t, "mcp_connection_closed", purramcp.CodeOf(s.monitor.Check(s.monitor.Revision())))
}

// TestBehaviorL1_StdioSmoke is the TypeScript installed smoke over a real
// stdio child: discovery of count (serverId "local", the smoke digest at
// 2025-11-25), Run({}) → structured {count:3}, ping, close; nothing leaks.
func TestBehaviorL1_StdioSmoke(t *testing.T) {
	bin := buildStdioServer(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	forEachVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, bin, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "local", countBinding("count"),
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		require.NoError(t, err, "L1 at %s", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, smokeDigest, catalog.Snapshot().RevisionDigest, "L1 at %s", version)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{}`), purramcp.ToolContext{CallID: "call"})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 3.0}},
			EffectState: "not_started"}, res, "L1 at %s", version)
		assert.NoError(t, s.session.Ping(t.Context(), nil), "L1 at %s", version)
		closeStdio(t, s, 0)
	})
}

// TestBehaviorL2_StdioTypedSmoke is the Python installed smoke: the server
// returns a typed value, go-sdk adds the JSON text block, and the envelope
// carries both.
func TestBehaviorL2_StdioTypedSmoke(t *testing.T) {
	bin := buildStdioServer(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	forEachVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, bin, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "local", countBinding("count_typed"),
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		require.NoError(t, err, "L2 at %s", version)
		res, err := catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Empty(t, res.ErrorCode, "L2 at %s", version)
		assert.Equal(t, map[string]any{"count": 3.0}, res.Content.Structured, "L2 at %s", version)
		require.Len(t, res.Content.Text, 1, "L2 at %s", version)
		assert.JSONEq(t, `{"count":3}`, res.Content.Text[0], "L2 at %s", version)
		assert.NoError(t, s.session.Ping(t.Context(), nil))
		closeStdio(t, s, 0)
	})
}

// TestStdio_DiscoverCallClose: the fixture tool over a real child process
// gives the fixture digest at 2025-11-25 and the reference result; a child
// that dies mid-call fails mcp_transport_error, closes the monitor and is
// reaped with its exit status.
func TestStdio_DiscoverCallClose(t *testing.T) {
	f := loadMCPFixture(t)
	bin := buildStdioServer(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, version := range append([]string{""}, testVersions...) {
		s := connectStdio(t, bin, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		require.NoError(t, err, "stdio at %q", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest, "stdio fixture digest")
		}
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"found"}, Structured: map[string]any{"count": 1.0}},
			EffectState: "not_started"}, res, "stdio at %q", version)
		res, err = reg.Run(t.Context(), json.RawMessage(`{"q":"too long"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_invalid_arguments", res.ErrorCode)
		closeStdio(t, s, 0)
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_connection_closed", res.ErrorCode, "after close at %q", version)
	}

	s := connectStdio(t, bin, "")
	bindings := map[string]purramcp.ToolBinding{"remote.exit": {LocalName: "exit",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Exit"}, Scope: purramcp.Unscoped}}
	catalog, err := purramcp.DiscoverTools(t.Context(), s.session, "fixture", bindings, purramcp.DiscoveryOptions{Monitor: s.monitor})
	require.NoError(t, err)
	res, err := catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_transport_error"}, res,
		"the child exits mid-call")
	require.Eventually(t, func() bool { return s.monitor.Check(s.monitor.Revision()) != nil }, waitFor, tick, "the monitor closes with the session")
	res, err = catalog.Registrations()[0].Run(t.Context(), nil, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "mcp_connection_closed", res.ErrorCode)
	closeStdio(t, s, 3)
}
