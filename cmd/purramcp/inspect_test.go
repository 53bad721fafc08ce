package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

func TestInspect_StdioServer(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "inspect", "--", stdioServer)
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "inspect-stdio.txt", r.stdout)
	r = runIn(t, dir, "inspect", "--json", "--", stdioServer)
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "inspect-stdio.json", r.stdout)
	var report inspectReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	assert.Equal(t, 2, report.Binds)
	for _, tool := range report.Tools {
		assert.True(t, tool.ReadOnlyHint, tool.Name)
		assert.False(t, tool.DestructiveHint, tool.Name)
	}
}

func TestInspect_ServerFromConfig(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, map[string]server{
		"units": {tools: `{"units.list": {"as": "list_units"}, "units.gone": {"as": "gone"}}`, extra: `"policy": ["annotations"], `},
	})
	r := runIn(t, dir, "inspect", "--server", "units", "--config", "$DIR/purramcp.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "inspect-server.txt", r.stdout)
	r = runIn(t, dir, "inspect", "--server", "units", "--json", "--config", "$DIR/purramcp.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "inspect-server.json", r.stdout)
	var report inspectReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	assert.Equal(t, []string{"annotations"}, report.Policy)
	assert.Equal(t, []string{"units.gone"}, report.Missing)
	r = runIn(t, dir, "inspect", "--server", "nope", "--config", "$DIR/purramcp.json")
	assert.Equal(t, exitUsage, r.code)
	assert.Equal(t, "purramcp inspect: $DIR/purramcp.json: servers: no server \"nope\"; name one of units\n", r.stderr)
}

func TestInspect_Catalog(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		policy []string
	}{
		{"default", nil},
		{"extended", []string{"--policy", "extended"}},
	} {
		args := append([]string{"inspect", "--catalog", "testdata/review-catalog.json"}, tc.policy...)
		r := runIn(t, dir, args...)
		require.Equal(t, exitOK, r.code, r.stderr)
		golden(t, "inspect-catalog-"+tc.name+".txt", r.stdout)
		r = runIn(t, dir, append(args, "--json")...)
		require.Equal(t, exitOK, r.code, r.stderr)
		golden(t, "inspect-catalog-"+tc.name+".json", r.stdout)
		r = runIn(t, dir, append(args, "--suggest")...)
		require.Equal(t, exitOK, r.code, r.stderr)
		golden(t, "suggest-catalog-"+tc.name+".json", r.stdout)
		golden(t, "suggest-catalog-"+tc.name+".stderr", r.stderr)
	}
}

// TestInspect_ScreenControlInNames: a remote name with an escape sequence
// is printed quoted, never raw.
func TestInspect_ScreenControlInNames(t *testing.T) {
	r := runIn(t, t.TempDir(), "inspect", "--catalog", "testdata/review-catalog.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "\x1b")
	assert.Contains(t, r.stdout, `"notes\x1b[2J.evil"  no  `)
}

// TestInspect_ReferenceSchemaCases inspects the reference's fixture tool
// and its six schema cases (mcp_tools.json), saved as a capture.
func TestInspect_ReferenceSchemaCases(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/mcp_tools.json")
	require.NoError(t, err)
	var f struct {
		Tool        map[string]any `json:"tool"`
		SchemaCases []struct {
			ID   string         `json:"id"`
			Tool map[string]any `json:"tool"`
		} `json:"schemaCases"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	require.Len(t, f.SchemaCases, 6)
	tools := []map[string]any{f.Tool}
	for _, sc := range f.SchemaCases {
		tool := maps.Clone(sc.Tool)
		tool["name"] = "case." + sc.ID
		tools = append(tools, tool)
	}
	dir := t.TempDir()
	text, err := json.Marshal(map[string]any{"server": map[string]string{"name": "fixture", "version": "1"}, "tools": tools})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fixture.json"), text, 0o644))
	r := runIn(t, dir, "inspect", "--catalog", "$DIR/fixture.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "inspect-reference-cases.txt", r.stdout)
}

func TestInspect_Suggest(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "inspect", "--suggest", "--", stdioServer)
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "suggest-stdio.json", r.stdout)
	assert.Empty(t, r.stderr)

	// Pasted into a server entry as it is, it binds under lock.
	var sug map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sug))
	writeConfig(t, dir, map[string]server{"units": {tools: string(sug["tools"]), extra: `"requireReadOnlyHint": true, `}})
	r = runIn(t, dir, "lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "units: added f858f391af5e (not in the lock)\n  + units_convert (units.convert)\n  + units_list (units.list)\n", r.stdout)

	// With --server, configured tools keep their names and the other
	// servers' names are avoided.
	writeConfig(t, dir, map[string]server{
		"units": {tools: `{"units.list": {"as": "list", "title": "List"}}`},
		"other": {tools: `{"units.convert": {"as": "units_convert"}}`},
	})
	r = runIn(t, dir, "inspect", "--suggest", "--server", "units", "--config", "$DIR/purramcp.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"tools": {"units.convert": {"as": "units_convert_2"}, "units.list": {"as": "list", "title": "List"}}}`, r.stdout)
}

// TestInspect_SuggestOnlyReadOnly: no suggestion ever holds a tool the
// inspection does not report as readOnlyHint true and not destructive.
func TestInspect_SuggestOnlyReadOnly(t *testing.T) {
	dir := t.TempDir()
	for _, policy := range []string{"dialect", "annotations", "extended", "dialect,annotations,extended"} {
		args := []string{"inspect", "--catalog", "testdata/review-catalog.json", "--policy", policy}
		var report inspectReport
		r := runIn(t, dir, append(args, "--json")...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
		readOnly := map[string]bool{}
		for _, tool := range report.Tools {
			readOnly[tool.Name] = tool.Binds && tool.ReadOnlyHint && !tool.DestructiveHint
		}
		r = runIn(t, dir, append(args, "--suggest")...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var sug suggestion
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &sug))
		for name := range sug.Tools {
			assert.True(t, readOnly[name], "policy %s suggests %s", policy, name)
		}
		for name, ok := range readOnly {
			_, in := sug.Tools[name]
			assert.Equal(t, ok, in, "policy %s, tool %s", policy, name)
		}
		assert.Equal(t, strings.Split(policy, ","), sug.Policy)
	}
}

func TestInspect_Usage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"inspect"}, "purramcp inspect: name exactly one server: --server ID, --url URL, --catalog FILE or -- COMMAND [ARG...]\n"},
		{[]string{"inspect", "--url", "http://127.0.0.1:1", "--", "x"}, "purramcp inspect: name exactly one server: --server ID, --url URL, --catalog FILE or -- COMMAND [ARG...]\n"},
		{[]string{"inspect", "--policy", "strict", "--", "x"}, "purramcp inspect: --policy: policy \"strict\": want each of dialect, annotations, extended, headers at most once\n"},
		{[]string{"inspect", "--policy", "dialect,dialect", "--", "x"}, "purramcp inspect: --policy: policy \"dialect\": want each of dialect, annotations, extended, headers at most once\n"},
		{[]string{"inspect", "--connect-timeout", "-1s", "--", "x"}, "purramcp inspect: --connect-timeout -1s: must be positive, like 60s or 2m\n"},
		{[]string{"inspect", "--server", "units", "--config", "$DIR/none.json"}, "purramcp inspect: $DIR/none.json: no such file; create it (`purramcp inspect --suggest` prints the tools of a server entry) or name another with --config\n"},
	} {
		r := runIn(t, dir, tc.args...)
		assert.Equal(t, exitUsage, r.code, "%v", tc.args)
		assert.Equal(t, tc.stderr, r.stderr, "%v", tc.args)
	}
}

func TestInspect_Failures(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "inspect", "--", "sh", "-c", exitingServer)
	assert.Equal(t, exitFail, r.code)
	assert.Equal(t, "purramcp inspect: server: the server exited with status 3 before it answered the handshake\n"+
		"  | starting units\n  | fatal: UNITS_TOKEN is not set\n", r.stderr)
	r = runIn(t, dir, "inspect", "--", filepath.Join(dir, "no-such-server"))
	assert.Equal(t, exitFail, r.code)
	assert.Equal(t, "purramcp inspect: server: cannot connect: fork/exec $DIR/no-such-server: no such file or directory\n", r.stderr)
	r = runIn(t, dir, "inspect", "--connect-timeout", "100ms", "--", "sh", "-c", "sleep 30")
	assert.Equal(t, exitFail, r.code)
	assert.Equal(t, "purramcp inspect: server: no answer to the handshake within 100ms: raise --connect-timeout "+
		"(a first `npx -y` start installs the server and may take a minute)\n", r.stderr)
}

// httpServer starts examples/stdio-server over streamable HTTP and returns
// its URL; the process is ended when the test ends.
func httpServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(stdioServer, "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, line)
	return url
}

func TestInspect_URL(t *testing.T) {
	dir := t.TempDir()
	url := httpServer(t)
	r := runIn(t, dir, "inspect", "--url", url)
	require.Equal(t, exitOK, r.code, r.stderr)
	// Stateful streamable HTTP negotiates 2025-11-25; the tools are the same.
	assert.Equal(t, strings.Replace(readGolden(t, "inspect-stdio.txt"), "2026-07-28", "2025-11-25", 1), r.stdout)

	cfg := `{"servers": {"web": {"url": "` + url + `", "headers": {"X-Token": "t0ken-value"}, "tools": ` + unitsTools + `}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "purramcp.json"), []byte(cfg), 0o644))
	r = runIn(t, dir, "lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runIn(t, dir, "lock", "--check", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "web: unchanged ")
}

// readGolden returns the golden file testdata/name.
func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// TestInspect_Limits: a listing over the server's limits is refused with
// the limit named, before anything is reported.
func TestInspect_Limits(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		limits, want string
	}{
		{`{"maxTools": 1}`, "listing tools: more than 1 tools (limits.maxTools)"},
		{`{"maxCatalogBytes": 100}`, "listing tools: more than 100 bytes of tools/list results (limits.maxCatalogBytes)"},
	} {
		writeConfig(t, dir, map[string]server{"units": {tools: unitsTools, extra: `"limits": ` + tc.limits + `, `}})
		r := runIn(t, dir, "inspect", "--server", "units", "--config", "$DIR/purramcp.json")
		assert.Equal(t, exitFail, r.code, tc.limits)
		assert.Equal(t, "purramcp inspect: server units: "+tc.want+"\n", r.stderr)
	}
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
		{"closed", rawPeer{list: func(string) string { return tools(1) }, closeOnList: true}, purramcp.Limits{},
			"the connection failed while tools were listed (mcp_transport_error)"},
		{"not a result", rawPeer{list: func(string) string { return `{"tools":[{"name":1}]}` }}, purramcp.Limits{},
			"the tools/list result could not be decoded (mcp_result_invalid)"},
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
		{purramcp.ErrTransportError, "the connection failed while tools were listed (mcp_transport_error)"},
		{purramcp.ErrConnectionClosed, "the connection is closed (mcp_connection_closed)"},
		{purramcp.ErrUnauthorized, "mcp_unauthorized"},
		{&purramcp.DiscoveryError{Code: purramcp.CodeCatalogLimitExceeded, Path: "$", Keyword: "MaxPages"}, "more than 32 pages (limits.maxPages)"},
		{purramcp.ErrCatalogLimitExceeded, "mcp_catalog_limit_exceeded"},
	} {
		assert.EqualError(t, listFailure(tc.err, lim), tc.want, "%v", tc.err)
	}
}

// TestInspect_OverTheDigestBound: 256 tools whose listing fits the limits
// but which together pass the digest's bound are each reported (the digest
// is not printed).
func TestInspect_OverTheDigestBound(t *testing.T) {
	tools := make([]string, 256)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name":"t%03d","description":"%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("x", 3900))
	}
	page := `{"tools":[` + strings.Join(tools, ",") + `]}`
	peer := rawPeer{version: "2025-06-18", list: func(string) string { return page }}
	report, err := inspect(t.Context(), &inspectTarget{ep: peer.endpoint(), limits: resolveLimits(purramcp.Limits{})}, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 256, report.Binds)
	assert.Len(t, report.Tools, 256)
}
