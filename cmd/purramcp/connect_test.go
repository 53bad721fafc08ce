package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTail_KeepsTheLastLinesWithoutSecrets(t *testing.T) {
	tl := newTail(64, []string{"s3cr3t-token"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = tl.Write([]byte("noise line\n")) })
	}
	wg.Wait()
	_, _ = tl.Write([]byte("auth with s3cr3t-token failed\r\n\x1b[31mred\x1b[0m\n\n"))
	assert.Equal(t, []string{"auth with *** failed", "?[31mred?[0m"}, tl.lines(2))
	assert.LessOrEqual(t, len(tl.buf), 64)
	assert.Empty(t, newTail(10, nil).lines(5))
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
	ep := endpoint{env: map[string]string{"TOKEN": "tok-123", "N": "1"}, headers: map[string]string{"Authorization": "Bearer xyz"},
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
