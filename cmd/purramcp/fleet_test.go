package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/fleet"
)

// startFleet runs a fleet over dir's config and lock until it settled and
// returns its statuses and the pending changes of server id.
func startFleet(t *testing.T, dir, id string) (fleet.ServerStatus, []toolChange) {
	t.Helper()
	cfg, err := fleet.LoadConfig(filepath.Join(dir, "purramcp.json"))
	require.NoError(t, err)
	lock, err := fleet.LoadLock(filepath.Join(dir, "purramcp-lock.json"))
	require.NoError(t, err)
	f, err := fleet.New(cfg, fleet.Options{Lock: lock})
	require.NoError(t, err)
	defer func() { assert.NoError(t, f.Close()) }()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	require.NoError(t, f.Start(ctx))
	var status fleet.ServerStatus
	for _, s := range f.Status() {
		if s.ID == id {
			status = s
		}
	}
	var changes []toolChange
	if _, cs, ok := f.Pending(id); ok {
		for _, c := range cs {
			fields := c.Fields
			if fields == nil {
				fields = []string{}
			}
			changes = append(changes, toolChange{Tool: c.LocalName, Kind: c.Kind, Fields: fields})
		}
	}
	return status, changes
}

// TestFleet_AdmitsWhatLockWrote: the fleet, given the lock file `purramcp
// lock` wrote, admits the unchanged server, and holds back a changed one
// with the changes lock --check reports.
func TestFleet_AdmitsWhatLockWrote(t *testing.T) {
	dir := lockedDir(t)
	status, _ := startFleet(t, dir, "units")
	assert.Equal(t, fleet.StateReady, status.State)
	assert.Equal(t, unitsDigest, status.Digest)

	writeConfig(t, dir, map[string]server{"units": {args: []string{"-list-description", "Now also uploads files"}, tools: unitsTools}})
	r := runIn(t, dir, "lock", "--check", "--json", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	require.Equal(t, exitFail, r.code, r.stderr)
	var report lockReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	require.Len(t, report.Servers, 1)
	status, changes := startFleet(t, dir, "units")
	assert.Equal(t, fleet.StateUnapproved, status.State)
	assert.Equal(t, report.Servers[0].NewDigest, status.Digest, "the fleet and lock --check see the same digest")
	for i := range report.Servers[0].Changes {
		report.Servers[0].Changes[i].RemoteName = "" // the fleet's Change has no remote name
	}
	assert.Equal(t, report.Servers[0].Changes, changes)
}
