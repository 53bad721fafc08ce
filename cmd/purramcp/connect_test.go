package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// TestInspect_HostileLister: a listing purramcp.InspectCatalog refuses is
// reported with the limit named in the config's words, or what its code
// means; never the server's text.
func TestInspect_HostileLister(t *testing.T) {
	tools := func(n int) string {
		names := make([]string, n)
		for i := range names {
			names[i] = `{"name":"t` + strconv.Itoa(i) + `","inputSchema":{"type":"object"}}`
		}
		return `{"tools":[` + strings.Join(names, ",") + `]}`
	}
	described := func(n int) func(string) string {
		return func(string) string {
			return `{"tools":[{"name":"t","description":"` + strings.Repeat("x", n) + `","inputSchema":{"type":"object"}}]}`
		}
	}
	for _, tc := range []struct {
		name   string
		peer   rawPeer
		limits purramcp.Limits
		want   string
	}{
		{"repeated cursor", rawPeer{list: func(string) string { return `{"tools":[],"nextCursor":"again"}` }}, purramcp.Limits{},
			"the server repeated a cursor or sent one over 512 bytes"},
		{"long cursor", rawPeer{list: func(string) string { return `{"tools":[],"nextCursor":"` + strings.Repeat("c", 513) + `"}` }},
			purramcp.Limits{}, "the server repeated a cursor or sent one over 512 bytes"},
		{"endless pages", rawPeer{list: func(c string) string { return `{"tools":[],"nextCursor":"` + c + `x"}` }}, purramcp.Limits{},
			"more than 32 pages (limits.maxPages)"},
		{"pages", rawPeer{list: func(c string) string { return `{"tools":[],"nextCursor":"` + c + `x"}` }}, purramcp.Limits{MaxPages: 3},
			"more than 3 pages (limits.maxPages)"},
		{"tools", rawPeer{list: func(string) string { return tools(3) }}, purramcp.Limits{MaxTools: 2},
			"more than 2 tools (limits.maxTools)"},
		{"tools over the layer's cap", rawPeer{list: func(string) string { return tools(70) }}, purramcp.Limits{MaxTools: 2},
			"more than 2 tools (limits.maxTools)"},
		{"bytes", rawPeer{list: described(1000)}, purramcp.Limits{MaxCatalogBytes: 500},
			"more than 500 bytes of tools/list results (limits.maxCatalogBytes)"},
		{"bytes over the layer's cap", rawPeer{list: described(6000)}, purramcp.Limits{MaxCatalogBytes: 500},
			"more than 500 bytes of tools/list results (limits.maxCatalogBytes)"},
		{"no answer", rawPeer{list: func(string) string { return "" }}, purramcp.Limits{Timeout: 200 * time.Millisecond},
			"no answer to tools/list within 200ms (limits.timeout)"},
		{"name twice", rawPeer{list: func(string) string {
			return `{"tools":[{"name":"t","inputSchema":{"type":"object"}},{"name":"t","inputSchema":{"type":"object"}}]}`
		}}, purramcp.Limits{}, "the server listed a tool name twice (mcp_name_conflict)"},
		{"no tools", rawPeer{list: func(string) string { return tools(1) }, noTools: true}, purramcp.Limits{},
			"the server does not offer tools (mcp_tools_unavailable)"},
		{"error", rawPeer{list: func(string) string { return tools(1) }, listError: true}, purramcp.Limits{},
			"the server answered tools/list with an error (mcp_protocol_error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.peer.version = "2025-06-18"
			target := &inspectTarget{ep: tc.peer.endpoint(), limits: resolveLimits(tc.limits)}
			report, err := inspect(t.Context(), target, 5*time.Second)
			assert.Nil(t, report)
			assert.EqualError(t, err, "listing tools: "+tc.want)
		})
	}
}

// TestListFailure_Codes: the failures no raw server provokes on demand
// (go-sdk does not order a list_changed against the answer it precedes)
// are named by what their code means.
func TestListFailure_Codes(t *testing.T) {
	lim := purramcp.DefaultLimits()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{purramcp.ErrCatalogStale, "the tool list kept changing while it was listed"},
		{purramcp.ErrCanceled, "canceled"},
		{purramcp.ErrTransportError, "mcp_transport_error"},
		{&purramcp.DiscoveryError{Code: purramcp.CodeCatalogLimitExceeded, Path: "$", Keyword: "MaxPages"}, "more than 32 pages (limits.maxPages)"},
		{purramcp.ErrCatalogLimitExceeded, "mcp_catalog_limit_exceeded"},
	} {
		assert.EqualError(t, listFailure(tc.err, lim), tc.want, "%v", tc.err)
	}
}
