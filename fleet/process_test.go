//go:build linux

package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// childConfig is a config running examples/stdio-server under sh -c (so
// the server is sh's child, the fleet's grandchild), recording its calls
// in calls and printing the expanded secret to its stderr first.
func childConfig(t *testing.T, calls string) *fleet.Config {
	t.Helper()
	t.Setenv("FLEET_TEST_SECRET", "hunter2-very-secret")
	text, err := json.Marshal(map[string]any{"servers": map[string]any{"units": map[string]any{
		"command": "sh",
		"args":    []string{"-c", `echo "token=$TOKEN" >&2; "$0" -calls "$1"; exit $?`, stdioServer, calls},
		"env":     map[string]string{"TOKEN": "${env:FLEET_TEST_SECRET}"},
		"tools": map[string]any{
			"units.convert": map[string]any{"as": "convert_units"},
			"units.list":    map[string]any{"as": "list_units"},
		},
		"limits": map[string]any{"timeout": "1s"},
	}}})
	require.NoError(t, err)
	cfg, err := fleet.ParseConfig(text)
	require.NoError(t, err)
	return cfg
}

// callLog reads the calls file: the server pids in start order and the
// arguments of every call received.
func callLog(t testing.TB, path string) (pids []int, calls []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if pid, ok := strings.CutPrefix(line, "start "); ok {
			n, err := strconv.Atoi(pid)
			require.NoError(t, err)
			pids = append(pids, n)
		} else if args, ok := strings.CutPrefix(line, "call "); ok {
			calls = append(calls, args)
		}
	}
	return pids, calls
}

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// stopped reports whether every thread of pid is in the stopped state.
// kill(SIGSTOP) returns once the signal is pending: the group stop begins
// only when the thread it was given to next runs, and until then another
// thread woken in read() takes a request written meanwhile and answers it
// (under CPU load, often), so a test that writes to a stopped server
// waits for this.
func stopped(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		if err != nil {
			return false
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) == 0 || fields[0] != "T" {
			return false
		}
	}
	return true
}

// currentServer returns the pid of the server that started last, and its
// process group.
func currentServer(t *testing.T, calls string) (int, int) {
	t.Helper()
	pids, _ := callLog(t, calls)
	require.NotEmpty(t, pids)
	server := pids[len(pids)-1]
	group, err := syscall.Getpgid(server)
	require.NoError(t, err)
	return server, group
}

// nextServer waits until a server other than previous started and the
// fleet is ready with digest, and returns the pid of the server that
// started last.
func nextServer(t *testing.T, f *fleet.Fleet, calls string, previous int, digest string) int {
	t.Helper()
	var server int
	waitFor(t, "a new server, ready", func() bool {
		pids, _ := callLog(t, calls)
		st := statusOf(t, f, "units")
		server = pids[len(pids)-1]
		return server != previous && st.State == fleet.StateReady && st.Digest == digest
	})
	return server
}

// convertWith returns units.convert arguments carrying n.
func convertWith(n int) string {
	return `{"from":"km","to":"m","value":` + strconv.Itoa(n) + `}`
}

func TestProcess_KilledThenStoppedNeverReplays(t *testing.T) {
	calls := filepath.Join(t.TempDir(), "calls")
	f := startFleet(t, childConfig(t, calls), fleet.Options{Backoff: fastBackoff, MaxConsecutiveTimeouts: 2})
	st := statusOf(t, f, "units")
	require.Equal(t, fleet.StateReady, st.State, "code %s", st.Code)
	digest := st.Digest
	assert.Contains(t, st.Stderr, "token=***")
	assert.NotContains(t, st.Stderr, "hunter2")
	convert := registration(t, f, "convert_units")
	assert.Equal(t, "", run(t, convert, convertWith(1)))

	server, group := currentServer(t, calls)
	assert.NotEqual(t, server, group, "the server is a grandchild: sh leads the group")
	groups := []int{group}

	// Killed mid-call: the call in flight fails with a code, never again.
	require.NoError(t, syscall.Kill(server, syscall.SIGSTOP))
	waitFor(t, "the server stopped", func() bool { return stopped(server) })
	inFlight := make(chan string, 1)
	go func() {
		res, err := convert.Run(context.Background(), json.RawMessage(convertWith(2)), purramcp.ToolContext{})
		if err != nil {
			inFlight <- err.Error()
			return
		}
		inFlight <- res.ErrorCode
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, syscall.Kill(server, syscall.SIGKILL))
	code := <-inFlight
	assert.Contains(t, []string{purramcp.CodeConnectionClosed, purramcp.CodeTransportError}, code)

	second := nextServer(t, f, calls, server, digest)
	assert.Equal(t, "", run(t, convert, convertWith(3)), "same digest: the registration works again")

	// Stopped: two timeouts in a row sever the session; the group is ended
	// although stopped, and a third server comes up.
	g, err := syscall.Getpgid(second)
	require.NoError(t, err)
	groups = append(groups, g)
	require.NoError(t, syscall.Kill(second, syscall.SIGSTOP))
	waitFor(t, "the second server stopped", func() bool { return stopped(second) })
	assert.Equal(t, purramcp.CodeTimeout, run(t, convert, convertWith(4)))
	assert.Equal(t, purramcp.CodeTimeout, run(t, convert, convertWith(5)))
	third := nextServer(t, f, calls, second, digest)
	if g, err := syscall.Getpgid(third); err == nil {
		groups = append(groups, g)
	}
	assert.Equal(t, "", run(t, convert, convertWith(6)))
	assert.False(t, alive(second), "the stopped server was ended")

	start := time.Now()
	require.NoError(t, f.Close())
	assert.Less(t, time.Since(start), 2*time.Second, "Close within Timeout + 1s")
	pids, got := callLog(t, calls)
	for _, pid := range pids {
		assert.False(t, alive(pid), "server %d left running", pid)
	}
	for _, g := range groups {
		assert.False(t, alive(g), "sh %d left running", g)
	}

	seen := map[string]int{}
	for _, c := range got {
		seen[c]++
	}
	for c, n := range seen {
		assert.Equal(t, 1, n, "call %s received %d times", c, n)
	}
	for _, n := range []int{1, 3, 6} {
		assert.Equal(t, 1, seen[convertWith(n)], "call %d", n)
	}
	assert.Zero(t, seen[convertWith(2)], "the call in flight at the kill never reached the stopped server")
	assert.LessOrEqual(t, len(got), 5, "at most the calls 1, 3, 4, 5 and 6")
	for _, s := range f.Status() {
		assert.Equal(t, fleet.StateClosed, s.State)
	}
}

// BenchmarkRecovery measures a recovery: from a stdio child's death
// (SIGKILL) to its server being ready again with the same digest, under
// the default backoff (250ms first wait, up to 20% jitter).
func BenchmarkRecovery(b *testing.B) {
	calls := filepath.Join(b.TempDir(), "calls")
	cfg := &fleet.Config{Servers: map[string]fleet.ServerConfig{"units": {
		Command: stdioServer, Args: []string{"-calls", calls},
		Tools: map[string]fleet.ToolConfig{"units.list": {As: "list_units"}},
	}}}
	f := startFleet(b, cfg, fleet.Options{})
	digest := statusOf(b, f, "units").Digest
	list := registration(b, f, "list_units")
	b.ResetTimer()
	for i := range b.N {
		pids, _ := callLog(b, calls)
		if len(pids) != i+1 {
			b.Fatalf("%d servers started, want %d", len(pids), i+1)
		}
		if err := syscall.Kill(pids[i], syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		waitFor(b, "the server out", func() bool { return statusOf(b, f, "units").State != fleet.StateReady })
		waitState(b, f, "units", fleet.StateReady, digest)
		if code := run(b, list, `{}`); code != "" {
			b.Fatalf("after recovery: %s", code)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/recovery")
}

func TestProcess_StderrOfAFailingChild(t *testing.T) {
	t.Setenv("FLEET_TEST_SECRET", "hunter2-very-secret")
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"bad": {"command": "sh",
		"args": ["-c", "echo \"cannot start with ${env:FLEET_TEST_SECRET}\" >&2; exit 3"],
		"tools": {"units.list": {"as": "list_units"}}}}}`))
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fleet.Backoff{Initial: time.Minute, Max: time.Minute}})
	st := statusOf(t, f, "bad")
	assert.Equal(t, fleet.StateBackoff, st.State)
	assert.Equal(t, purramcp.CodeTransportError, st.Code)
	assert.Equal(t, "cannot start with ***\n", st.Stderr)
	require.NoError(t, f.Close())
	assert.Equal(t, "cannot start with ***\n", statusOf(t, f, "bad").Stderr, "kept after Close")
}
