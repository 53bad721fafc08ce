package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func TestTailLines_LastNonEmptyLinesCleaned(t *testing.T) {
	text := "noise\nauth with *** failed\r\n\x1b[31mred\x1b[0m\n\n"
	assert.Equal(t, []string{"auth with *** failed", "?[31mred?[0m"}, tailLines(text, 2))
	assert.Equal(t, []string{"noise", "auth with *** failed", "?[31mred?[0m"}, tailLines(text, 10))
	assert.Empty(t, tailLines("", 5))
}

// TestDial_ChildExitsWithStatus: a child that fails before the handshake
// is reported by its exit status, its stderr lines kept with the config's
// values hidden, and its process group is gone once dial returns.
func TestDial_ChildExitsWithStatus(t *testing.T) {
	ep := endpoint{sc: fleet.ServerConfig{Command: "sh", Args: []string{"-c", `echo "bad token $TOKEN" >&2; exit 3`},
		Env: map[string]string{"TOKEN": "tok-1234"}}}
	_, err := dial(t.Context(), ep, 5*time.Second)
	require.Error(t, err)
	assert.EqualError(t, err, "the server exited with status 3 before it answered the handshake")
	assert.Equal(t, []string{"bad token ***"}, stderrOf(err))
}

func TestClean(t *testing.T) {
	assert.Equal(t, "a?b\tc?d", clean("a\x07b\tc\u009bd"))
	assert.Equal(t, "x?", clean("x\xff"))
	assert.Equal(t, strings.Repeat("a", maxErrorText)+"...", clean(strings.Repeat("a", 5000)))
}

func TestConnectError_Messages(t *testing.T) {
	assert.Equal(t, "the server exited with status 3 before it answered the handshake", (&connectError{exit: 3}).Error())
	assert.Equal(t, `the server negotiated MCP 2024-11-05, which purramcp accepts only with "legacyProtocols": true in its config entry (or inspect --legacy-protocols)`,
		(&connectError{offered: "2024-11-05"}).Error())
	e := &connectError{err: errString("Post http://h/mcp?key=abcd1234: refused"), secrets: []string{"key=abcd1234"}}
	assert.Equal(t, "cannot connect: Post http://h/mcp?***: refused", e.Error())
}

func TestEndpoint_Secrets(t *testing.T) {
	ep := endpoint{sc: fleet.ServerConfig{Env: map[string]string{"TOKEN": "tok-123", "N": "1"}, Headers: map[string]string{"Authorization": "Bearer xyz"}},
		hidden: []string{"key=v"}}
	got := ep.secrets()
	assert.ElementsMatch(t, []string{"key=v", "tok-123", "Bearer xyz"}, got)
	assert.False(t, strings.Contains(strings.Join(got, ","), ",1,"))
}

type errString string

func (e errString) Error() string { return string(e) }

// processesWith returns the pids whose command line is exactly args.
func processesWith(t *testing.T, args ...string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	want := strings.Join(args, "\x00") + "\x00"
	var pids []string
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == want {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestDial_EndsTheProcessGroup: a server that leaves a child of its own
// running (as npx leaves node) has the whole group ended when the command
// is done with it.
func TestDial_EndsTheProcessGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("skipped: needs /proc to find the processes left behind")
	}
	dir := t.TempDir()
	script := "sleep 317 & exec " + stdioServer
	writeConfig(t, dir, map[string]server{"units": {command: "sh", args: []string{"-c", script}, tools: unitsTools}})
	r := runIn(t, dir, "lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "units: added f858f391af5e")
	require.Eventually(t, func() bool { return len(processesWith(t, "sleep", "317")) == 0 }, 5*time.Second, 20*time.Millisecond,
		"the server's child is still running")
}

// rawEndpoint returns an endpoint whose dial serves a raw JSON-RPC server
// that refuses server/discover and answers initialize with version, as
// servers built before 2025-06-18 do, and tools/list with list (called
// with the request's cursor; an empty result leaves the request
// unanswered).
func rawEndpoint(version string, list func(cursor string) string) endpoint {
	return rawPeer{version: version, list: list}.endpoint()
}

// A rawPeer is the server of rawEndpoint, with the faults a go-sdk server
// never has.
type rawPeer struct {
	version string
	list    func(cursor string) string
	// noTools leaves the tools capability out of the handshake.
	noTools bool
	// listError answers every tools/list with a JSON-RPC error.
	listError bool
	// closeOnList closes the connection instead of answering tools/list.
	closeOnList bool
}

// endpoint returns an endpoint whose dial serves p.
func (p rawPeer) endpoint() endpoint {
	version, list := p.version, p.list
	capabilities := `{"tools":{}}`
	if p.noTools {
		capabilities = `{}`
	}
	return endpoint{dial: func(ctx context.Context) (mcp.Transport, func(), error) {
		clientEnd, serverEnd := mcp.NewInMemoryTransports()
		conn, err := serverEnd.Connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				msg, err := conn.Read(context.Background())
				if err != nil {
					return
				}
				req, ok := msg.(*jsonrpc.Request)
				if !ok || !req.ID.IsValid() {
					continue
				}
				resp := &jsonrpc.Response{ID: req.ID}
				switch req.Method {
				case "initialize":
					resp.Result = json.RawMessage(`{"protocolVersion":"` + version + `","capabilities":` + capabilities + `,"serverInfo":{"name":"old","version":"1"}}`)
				case "tools/list":
					if p.closeOnList {
						_ = conn.Close()
						return
					}
					if p.listError {
						resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "remote text: boom"}
						break
					}
					var p struct {
						Cursor string `json:"cursor"`
					}
					_ = json.Unmarshal(req.Params, &p)
					if resp.Result = json.RawMessage(list(p.Cursor)); len(resp.Result) == 0 {
						continue
					}
				default:
					resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
				}
				if conn.Write(context.Background(), resp) != nil {
					return
				}
			}
		}()
		return clientEnd, func() { _ = conn.Close(); <-done }, nil
	}}
}

// oneTool is a tools/list result with one tool.
func oneTool(string) string { return `{"tools":[{"name":"old.tool","inputSchema":{"type":"object"}}]}` }

// TestDial_LegacyProtocols: a server that negotiates 2025-03-26 is refused
// with the version named, unless legacy protocols are accepted.
func TestDial_LegacyProtocols(t *testing.T) {
	ep := rawEndpoint("2025-03-26", oneTool)
	_, err := dial(t.Context(), ep, 5*time.Second)
	require.Error(t, err)
	assert.EqualError(t, err, `the server negotiated MCP 2025-03-26, which purramcp accepts only with "legacyProtocols": true in its config entry (or inspect --legacy-protocols)`)
	ep.sc.LegacyProtocols = true
	c, err := dial(t.Context(), ep, 5*time.Second)
	require.NoError(t, err)
	defer c.close()
	assert.Equal(t, "2025-03-26", c.monitor.ProtocolVersion())
	report, err := inspect(t.Context(), &inspectTarget{ep: ep, limits: purramcp.DefaultLimits()}, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "2025-03-26", report.ProtocolVersion)
	require.Len(t, report.Tools, 1)
	assert.Equal(t, "old.tool", report.Tools[0].Name)
}
