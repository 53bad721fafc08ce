package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp/fleet"
)

// server is examples/stdio-server, built once by TestMain.
var server string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporary directory:", err)
		os.Exit(2)
	}
	server = filepath.Join(dir, "stdio-server")
	// go test puts $GOROOT/bin first on the PATH: "go" is this toolchain.
	if out, err := exec.Command("go", "build", "-o", server, "../stdio-server").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ../stdio-server: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// digest is the revision digest of examples/stdio-server's catalog under
// purramcp.json's bindings, negotiated at 2026-07-28.
const digest = "b3f07f2b9103750434625eaf7d57e9c8b7bdb278e21e51680ad3a7f914f249b5"

// testConfig writes purramcp.json with its command replaced by the built
// server, and returns its path.
func testConfig(t *testing.T, dir string) string {
	t.Helper()
	text, err := os.ReadFile("purramcp.json")
	require.NoError(t, err)
	var cfg map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(text, &cfg))
	units := cfg["servers"]["units"]
	units["command"], units["args"] = server, []string{}
	text, err = json.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(dir, "purramcp.json")
	require.NoError(t, os.WriteFile(path, text, 0o600))
	return path
}

func TestHost_ShippedConfig(t *testing.T) {
	cfg, err := fleet.LoadConfig("purramcp.json")
	require.NoError(t, err)
	units := cfg.Servers["units"]
	assert.Equal(t, []string{"run", "./examples/stdio-server"}, units.Args)
	assert.Equal(t, map[string]fleet.ToolConfig{
		"units.list":    {As: "list_units", Title: "List units"},
		"units.convert": {As: "convert_units", Title: "Convert units"},
	}, units.Tools)
}

// TestHost_ReviewApproveLock runs the host three times over a fresh lock
// path: without approval nothing is registered; -approve admits the
// catalog and writes the lock; the next run admits the locked catalog.
func TestHost_ReviewApproveLock(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	config, lock := testConfig(t, dir), filepath.Join(dir, "purramcp-lock.json")
	calls := `list_units {} -> ok {"text":["ft, km, m, mi"],"structured":null}
convert_units {"value":10,"from":"km","to":"mi"} -> ok {"text":["10 km = 6.213712 mi"],"structured":{"unit":"mi","value":6.213712}}
`
	pending := "units pending " + digest + `
  (server) changed [protocolVersion serverId]
  convert_units added []
  list_units added []
`
	var out strings.Builder
	require.NoError(t, run(t.Context(), &out, config, lock, false))
	assert.Equal(t, pending+"units unapproved mcp_catalog_unapproved "+digest+`
list_units: not registered
convert_units: not registered
`, out.String())
	_, err := os.Stat(lock)
	assert.ErrorIs(t, err, os.ErrNotExist, "no lock without approval")

	out.Reset()
	require.NoError(t, run(t.Context(), &out, config, lock, true))
	assert.Equal(t, pending+"units ready - "+digest+"\n"+calls, out.String())
	l, err := fleet.LoadLock(lock)
	require.NoError(t, err)
	got, ok := l.Digest("units")
	require.True(t, ok)
	assert.Equal(t, digest, got)

	out.Reset()
	require.NoError(t, run(t.Context(), &out, config, lock, false))
	assert.Equal(t, "units ready - "+digest+"\n"+calls, out.String())
}

func TestHost_ConfigErrorNamesPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"servers": {"units": {"command": "x",
		"tools": {"units.list": {"as": "list-units"}}}}}`), 0o600))
	err := run(t.Context(), &strings.Builder{}, path, filepath.Join(dir, "lock.json"), false)
	var ce *fleet.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, `servers.units.tools["units.list"].as`, ce.Path)
}
