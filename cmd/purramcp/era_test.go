package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// unitsDigest20251125 is unitsDigest under protocol 2025-11-25.
const unitsDigest20251125 = "85f5e3f778a51a2b529190311d514acfbc11eb4e8a223293dfec1c95a2068bf8"

// TestLockCheck_EraPin: a server locked at 2025-11-25 whose SDK learns
// 2026-07-28 still matches the lock; one that drops 2025-11-25 is drift
// naming both versions; lock then records 2026-07-28 and its digest.
func TestLockCheck_EraPin(t *testing.T) {
	dir := t.TempDir()
	era := func(flag string) {
		args := []string{}
		if flag != "" {
			args = []string{"-era", flag}
		}
		writeConfig(t, dir, map[string]server{"units": {args: args, tools: unitsTools}})
	}
	lockArgs := []string{"lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json"}
	checkArgs := append([]string{"lock", "--check"}, lockArgs[1:]...)
	locked := func() (string, string) {
		lock, err := fleet.LoadLock(dir + "/purramcp-lock.json")
		require.NoError(t, err)
		digest, _ := lock.Digest("units")
		return lock.ProtocolVersion("units"), digest
	}

	era("legacy") // an SDK before 2026-07-28
	r := runIn(t, dir, lockArgs...)
	require.Equal(t, exitOK, r.code, r.stderr)
	version, legacyDigest := locked()
	require.Equal(t, purramcp.ProtocolVersion20251125, version)
	require.Equal(t, unitsDigest20251125, legacyDigest)

	era("") // the same server, its SDK upgraded: both versions
	r = runIn(t, dir, checkArgs...)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "units: unchanged "+legacyDigest[:12]+"\n", r.stdout)
	assert.Contains(t, r.stderr, "connected, protocol 2025-11-25")
	in := runIn(t, dir, "inspect", "--server", "units", "--json", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	require.Equal(t, exitOK, in.code, in.stderr)
	var report inspectReport
	require.NoError(t, json.Unmarshal([]byte(in.stdout), &report))
	assert.Equal(t, purramcp.ProtocolVersion20251125, report.ProtocolVersion, "inspect --server connects at the locked version")

	era("modern") // 2025-11-25 dropped
	r = runIn(t, dir, checkArgs...)
	assert.Equal(t, exitFail, r.code, r.stderr)
	assert.Equal(t, "units: changed "+legacyDigest[:12]+" -> "+unitsDigest[:12]+"\n"+
		"  ~ (server): protocolVersion 2025-11-25 -> 2026-07-28\n", r.stdout)
	r = runIn(t, dir, append(checkArgs, "--json")...)
	var check lockReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &check))
	require.Len(t, check.Servers, 1)
	assert.Equal(t, []toolChange{{Kind: "changed", Fields: []string{"protocolVersion"},
		OldProtocolVersion: "2025-11-25", NewProtocolVersion: "2026-07-28"}}, check.Servers[0].Changes)

	r = runIn(t, dir, lockArgs...) // lock negotiates the newest and shows the change
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  ~ (server): protocolVersion 2025-11-25 -> 2026-07-28\n")
	version, digest := locked()
	assert.Equal(t, purramcp.ProtocolVersion20260728, version)
	assert.Equal(t, unitsDigest, digest)
	r = runIn(t, dir, checkArgs...)
	assert.Equal(t, exitOK, r.code, r.stderr)

	// Writing the lock on a server that speaks both records the newest.
	era("")
	r = runIn(t, dir, lockArgs...)
	require.Equal(t, exitOK, r.code, r.stderr)
	version, _ = locked()
	assert.Equal(t, purramcp.ProtocolVersion20260728, version)
}

// TestInspect_SuggestNamesHeadersPolicy: a tool with x-mcp-header does not
// bind by default, and --suggest names the policy that binds it; under
// --policy headers it is suggested with that policy.
func TestInspect_SuggestNamesHeadersPolicy(t *testing.T) {
	dir := t.TempDir()
	catalog := `{"server": {"name": "db", "version": "1"}, "tools": [
	  {"name": "db.query", "description": "Query",
	   "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}}},
	   "annotations": {"readOnlyHint": true, "destructiveHint": false}}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalog), 0o644))
	r := runIn(t, dir, "inspect", "--suggest", "--catalog", "$DIR/catalog.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"tools": {}}`, r.stdout)
	assert.Contains(t, r.stderr, `#   db.query: does not bind: mcp_schema_unsupported inputSchema $.properties.region x-mcp-header; binds with "policy": ["headers"]`)
	r = runIn(t, dir, "inspect", "--suggest", "--policy", "headers", "--catalog", "$DIR/catalog.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"tools": {"db.query": {"as": "db_query"}}, "policy": ["headers"]}`, r.stdout)
}
