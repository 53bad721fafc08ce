package fleet_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/purramcptest"
)

// unitsSnapshot discovers a two-tool catalog in memory as server id and
// returns its snapshot.
func unitsSnapshot(t *testing.T, id string) purramcp.Snapshot { return prefixedSnapshot(t, id, "") }

// prefixedSnapshot is unitsSnapshot with the local names prefixed.
func prefixedSnapshot(t *testing.T, id, prefix string) purramcp.Snapshot {
	t.Helper()
	s := purramcptest.Start(t, purramcptest.Options{}, unitTools("")...)
	catalog, err := purramcp.DiscoverTools(t.Context(), s.Session, id, unitBindings(prefix), purramcp.DiscoveryOptions{Monitor: s.Monitor})
	require.NoError(t, err)
	return catalog.Snapshot()
}

// unitTools are two tools; suffix changes the description, so the digest.
func unitTools(suffix string) []purramcptest.Tool {
	return []purramcptest.Tool{
		{Tool: &mcp.Tool{Name: "units.list", Description: "List units" + suffix,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
			Handler: purramcptest.Text(nil, "ft, km")},
		{Tool: &mcp.Tool{Name: "units.convert", Description: "Convert <units> & more",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"value":{"type":"number","maximum":1e9,"minimum":0.5}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"number"}},"required":["value"]}`)},
			Handler: purramcptest.Text(map[string]any{"value": 1.0}, "1")},
	}
}

// unitBindings binds both unit tools, their local names prefixed.
func unitBindings(prefix string) map[string]purramcp.ToolBinding {
	return map[string]purramcp.ToolBinding{
		"units.list":    purramcptest.Binding(prefix + "list_units"),
		"units.convert": purramcptest.Binding(prefix + "convert_units"),
	}
}

func TestLock_RoundTrip(t *testing.T) {
	snap := unitsSnapshot(t, "units")
	dir := t.TempDir()
	path := filepath.Join(dir, "purramcp-lock.json")

	lock, err := fleet.LoadLock(path)
	require.NoError(t, err, "a missing lock file is an empty lock")
	_, ok := lock.Digest("units")
	assert.False(t, ok)

	lock.Set("units", snap)
	snap.Entries[0].InputSchema["type"] = "changed" // Set copied it
	require.NoError(t, lock.WriteFile(path))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")

	again, err := fleet.LoadLock(path)
	require.NoError(t, err)
	digest, ok := again.Digest("units")
	require.True(t, ok)
	fresh := unitsSnapshot(t, "units")
	assert.Equal(t, fresh.RevisionDigest, digest)
	got, ok := again.Snapshot("units")
	require.True(t, ok)
	assert.Equal(t, fresh, got, "the snapshot reads back as the catalog gave it")
	assert.Empty(t, purramcp.DiffSnapshots(fresh, got))

	text, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata", "lock.golden.json"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(text), "keys sorted, two-space indent, trailing newline")
}

func TestLock_LoadErrorsNamePaths(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "lock.golden.json"))
	require.NoError(t, err)
	digest := unitsSnapshot(t, "units").RevisionDigest
	replace := func(old, new string) string {
		require.Contains(t, string(golden), old)
		return strings.Replace(string(golden), old, new, 1)
	}
	cases := []struct{ name, text, path string }{
		{"malformed", `{"lockVersion": 1,`, ""},
		{"version", replace(`"lockVersion": 1`, `"lockVersion": 2`), "lockVersion"},
		{"missing version", `{"servers": {}}`, "lockVersion"},
		{"unknown top", `{"lockVersion": 1, "servers": {}, "x": 1}`, "x"},
		{"servers not object", `{"lockVersion": 1, "servers": []}`, "servers"},
		{"tampered description", replace(`"List units"`, `"List all units"`), "servers.units.snapshot.revisionDigest"},
		{"tampered digest", replace(`"revisionDigest": "`+digest, `"revisionDigest": "0`+digest[1:]), "servers.units.revisionDigest"},
		{"unknown entry field", replace(`"localName": "list_units"`, `"localName": "list_units", "x": 1`), "servers.units.snapshot.entries[1].x"},
		{"duplicate key", replace(`"localName": "list_units"`, `"localName": "list_units", "localName": "y"`), "servers.units.snapshot.entries[1].localName"},
		{"schema not object", replace(`"outputSchema": null`, `"outputSchema": 1`), "servers.units.snapshot.entries[1].outputSchema"},
		{"server id", replace(`"serverId": "units"`, `"serverId": "other"`), "servers.units.snapshot.serverId"},
		{"unsafe integer", replace(`"maximum": 1000000000`, `"maximum": 90071992547409930`), `servers.units.snapshot.entries[0].inputSchema.properties.value.maximum`},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "lock.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.text), 0o600))
			lock, err := fleet.LoadLock(path)
			assert.Nil(t, lock, "case %s", tc.name)
			var ce *fleet.ConfigError
			require.ErrorAs(t, err, &ce, "case %s", tc.name)
			assert.Equal(t, tc.path, ce.Path, "case %s", tc.name)
			assert.ErrorIs(t, err, purramcp.ErrBindingInvalid, "case %s", tc.name)
			parsed, perr := fleet.ParseLock([]byte(tc.text))
			assert.Nil(t, parsed, "case %s", tc.name)
			assert.Equal(t, err, perr, "case %s: ParseLock fails as LoadLock does", tc.name)
		})
	}
	parsed, err := fleet.ParseLock(golden)
	require.NoError(t, err)
	got, ok := parsed.Snapshot("units")
	require.True(t, ok)
	assert.Equal(t, digest, got.RevisionDigest, "ParseLock reads the golden lock")
}

func TestLock_WriteRefusesMismatchedDigest(t *testing.T) {
	snap := unitsSnapshot(t, "units")
	snap.Entries[0].Description = "edited"
	var lock fleet.Lock
	lock.Set("units", snap)
	path := filepath.Join(t.TempDir(), "lock.json")
	var ce *fleet.ConfigError
	require.ErrorAs(t, lock.WriteFile(path), &ce)
	assert.Equal(t, "servers.units.snapshot.revisionDigest", ce.Path)
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written")

	var empty fleet.Lock
	require.NoError(t, empty.WriteFile(path))
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"lockVersion\": 1,\n  \"servers\": {}\n}\n", string(text))
}

func TestParseSnapshot_ChecksTheDigest(t *testing.T) {
	snap := unitsSnapshot(t, "units")
	text, err := json.Marshal(snap)
	require.NoError(t, err)
	got, err := fleet.ParseSnapshot(text)
	require.NoError(t, err)
	assert.Equal(t, snap, got)

	replace := func(old, new string) string {
		require.Contains(t, string(text), old)
		return strings.Replace(string(text), old, new, 1)
	}
	cases := []struct{ name, text, path string }{
		{"malformed", `{"schemaVersion": 1,`, ""},
		{"tampered description", replace(`"List units"`, `"List all units"`), "revisionDigest"},
		{"unknown field", replace(`"schemaVersion":1`, `"schemaVersion":1,"x":1`), "x"},
		{"duplicate key", replace(`"localName":"list_units"`, `"localName":"list_units","localName":"y"`), "entries[1].localName"},
		{"schema not object", replace(`"outputSchema":null`, `"outputSchema":1`), "entries[1].outputSchema"},
		{"unsafe integer", replace(`"maximum":1000000000`, `"maximum":90071992547409930`), "entries[0].inputSchema.properties.value.maximum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := fleet.ParseSnapshot([]byte(tc.text))
			assert.Equal(t, purramcp.Snapshot{}, s)
			var ce *fleet.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.path, ce.Path)
			assert.ErrorIs(t, err, purramcp.ErrBindingInvalid)
		})
	}
}

func TestLock_IDs(t *testing.T) {
	var none *fleet.Lock
	assert.Empty(t, none.IDs())
	lock := &fleet.Lock{}
	assert.Empty(t, lock.IDs())
	lock.Set("b", unitsSnapshot(t, "b"))
	lock.Set("a", unitsSnapshot(t, "a"))
	assert.Equal(t, []string{"a", "b"}, lock.IDs())
}
