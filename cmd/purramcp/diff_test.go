package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/fleet"
)

// twoLocks returns a directory holding old.json, the lock of the stdio
// server, and new.json, the lock after units.list's description changed
// and a second server was added.
func twoLocks(t *testing.T) string {
	t.Helper()
	dir := lockedDir(t)
	require.NoError(t, os.Rename(filepath.Join(dir, "purramcp-lock.json"), filepath.Join(dir, "old.json")))
	writeConfig(t, dir, map[string]server{
		"units":  {args: []string{"-list-description", "List every length unit"}, tools: unitsTools},
		"units2": {tools: `{"units.list": {"as": "units2_list"}}`},
	})
	r := runIn(t, dir, "lock", "--config", "$DIR/purramcp.json", "--lock", "$DIR/new.json")
	require.Equal(t, exitOK, r.code, r.stderr)
	return dir
}

func TestDiff_Locks(t *testing.T) {
	dir := twoLocks(t)
	r := runIn(t, dir, "diff", "$DIR/old.json", "$DIR/new.json")
	assert.Equal(t, exitFail, r.code, r.stderr)
	golden(t, "diff-locks.txt", r.stdout)
	r = runIn(t, dir, "diff", "--json", "$DIR/old.json", "$DIR/new.json")
	assert.Equal(t, exitFail, r.code, r.stderr)
	golden(t, "diff-locks.json", r.stdout)
	// Flags may follow the files.
	after := runIn(t, dir, "diff", "$DIR/old.json", "$DIR/new.json", "--json")
	assert.Equal(t, r, after)
	r = runIn(t, dir, "diff", "$DIR/new.json", "$DIR/new.json")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "units: unchanged 789629d67267\nunits2: unchanged c720bdcb2f05\n", r.stdout)
}

// writeSnapshot writes server id's snapshot from the lock file lockFile
// to dir/name as a snapshot JSON file.
func writeSnapshot(t *testing.T, dir, lockFile, id, name string) {
	t.Helper()
	lock, err := fleet.LoadLock(filepath.Join(dir, lockFile))
	require.NoError(t, err)
	snap, ok := lock.Snapshot(id)
	require.True(t, ok)
	text, err := json.MarshalIndent(snap, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), text, 0o644))
}

func TestDiff_Snapshots(t *testing.T) {
	dir := twoLocks(t)
	writeSnapshot(t, dir, "old.json", "units", "old-snap.json")
	writeSnapshot(t, dir, "new.json", "units", "new-snap.json")
	r := runIn(t, dir, "diff", "$DIR/old-snap.json", "$DIR/new-snap.json")
	assert.Equal(t, exitFail, r.code, r.stderr)
	golden(t, "diff-snapshots.txt", r.stdout)
	r = runIn(t, dir, "diff", "$DIR/old-snap.json", "$DIR/old-snap.json")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "units: unchanged f858f391af5e\n", r.stdout)
	// A snapshot against a lock: the lock's other servers count as added.
	r = runIn(t, dir, "diff", "$DIR/new-snap.json", "$DIR/new.json")
	assert.Equal(t, exitFail, r.code, r.stderr)
	assert.Equal(t, "units: unchanged 789629d67267\nunits2: added c720bdcb2f05 (not in $DIR/new-snap.json)\n  + units2_list (units.list)\n", r.stdout)
}

func TestDiff_Unreadable(t *testing.T) {
	dir := twoLocks(t)
	writeSnapshot(t, dir, "old.json", "units", "snap.json")
	edit := func(name, from, to string) {
		text, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		edited := strings.Replace(string(text), from, to, 1)
		require.NotEqual(t, string(text), edited, "%s has %q", name, from)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bad-"+name), []byte(edited), 0o644))
	}
	edit("snap.json", "List the length units", "List the length units quietly")
	edit("old.json", `"lockVersion": 1`, `"lockVersion": 2`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "neither.json"), []byte(`{"tools": {}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"lockVersion": 1,`), 0o644))
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"$DIR/old.json"}, "purramcp diff: want two files, OLD and NEW; got 1 arguments\n"},
		{[]string{"$DIR/old.json", "$DIR/missing.json"}, "purramcp diff: $DIR/missing.json: no such file; check the path\n"},
		{[]string{"$DIR/bad-snap.json", "$DIR/old.json"}, "purramcp diff: $DIR/bad-snap.json: revisionDigest: does not match the snapshot; the snapshot was edited or damaged: take it again from the server or from version control\n"},
		{[]string{"$DIR/old.json", "$DIR/bad-old.json"}, "purramcp diff: $DIR/bad-old.json: lockVersion: "},
		{[]string{"$DIR/old.json", "$DIR/neither.json"}, "purramcp diff: $DIR/neither.json: neither a lock file (lockVersion) nor a snapshot (revisionDigest, entries); give a lock file or a snapshot JSON file\n"},
		{[]string{"$DIR/broken.json", "$DIR/old.json"}, "purramcp diff: $DIR/broken.json: not a JSON object; give a lock file or a snapshot JSON file\n"},
	} {
		r := runIn(t, dir, append([]string{"diff"}, tc.args...)...)
		assert.Equal(t, exitUsage, r.code, "%v", tc.args)
		assert.Empty(t, r.stdout, "%v", tc.args)
		assert.True(t, strings.HasPrefix(r.stderr, tc.stderr), "%v: %s", tc.args, r.stderr)
	}
}
