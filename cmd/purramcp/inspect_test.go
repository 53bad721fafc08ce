package main

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
