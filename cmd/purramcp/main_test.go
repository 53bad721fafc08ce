package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp/oauth"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Binaries built once in TestMain: examples/stdio-server, which every
// test connects to, and this command, for the tests of the real exit path.
var (
	stdioServer string
	purramcpBin string
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "purramcp-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// No test reads or writes the user's token store.
	if err := os.Setenv(oauth.DirEnv, filepath.Join(dir, "tokens")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stdioServer = filepath.Join(dir, "stdio-server")
	purramcpBin = filepath.Join(dir, "purramcp")
	builds := []struct{ out, pkg string }{{stdioServer, "purra.dev/purramcp/examples/stdio-server"}, {purramcpBin, "."}}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Go(func() {
			if out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// result is what one run of the command gave.
type result struct {
	stdout, stderr string
	code           int
}

// runIn runs the command in-process with args, in dir: every "$DIR" in
// args is replaced by dir and every dir in the output by "$DIR", so that
// outputs compare with golden files. It is bounded by 30 s.
func runIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$DIR", dir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, &streams{out: &out, err: &errOut})
	norm := func(s string) string { return strings.ReplaceAll(s, dir, "$DIR") }
	return result{stdout: norm(out.String()), stderr: norm(errOut.String()), code: code}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file %s (run go test -update to create it)", path)
	assert.Equal(t, string(want), got, "output differs from %s (-want +got); run go test -update after checking it", path)
}

// A server is one entry of a test config: the stdio server with args.
type server struct {
	command string // "" is the stdio server
	args    []string
	tools   string // the "tools" object
	extra   string // more members, each followed by a comma
}

// unitsTools binds both tools of examples/stdio-server.
const unitsTools = `{"units.convert": {"as": "units_convert"}, "units.list": {"as": "units_list"}}`

// writeConfig writes purramcp.json in dir with the servers given by id.
func writeConfig(t *testing.T, dir string, servers map[string]server) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"servers": {`)
	first := true
	for _, id := range sortedKeys(servers) {
		s := servers[id]
		if !first {
			b.WriteString(", ")
		}
		first = false
		args := "[]"
		if len(s.args) > 0 {
			args = `["` + strings.Join(s.args, `", "`) + `"]`
		}
		command := s.command
		if command == "" {
			command = stdioServer
		}
		fmt.Fprintf(&b, "\n  %q: {%s\"command\": %q, \"args\": %s, \"tools\": %s}", id, s.extra, command, args, s.tools)
	}
	b.WriteString("\n}}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "purramcp.json"), []byte(b.String()), 0o644))
}

// TestMain_Dispatch: the command names, help and unknown commands.
func TestMain_Dispatch(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "usage: purramcp COMMAND")
	r = runIn(t, dir, "-h")
	assert.Equal(t, exitOK, r.code)
	golden(t, "help.txt", r.stdout)
	r = runIn(t, dir, "frobnicate")
	assert.Equal(t, exitUsage, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "purramcp: unknown command \"frobnicate\"\n"), r.stderr)
	for _, c := range commands() {
		r := runIn(t, dir, c.name, "-h")
		assert.Equal(t, exitOK, r.code, "%s -h", c.name)
		assert.True(t, strings.HasPrefix(r.stderr, "usage: purramcp "+c.name+" "), "%s -h: %s", c.name, r.stderr)
		r = runIn(t, dir, c.name, "--no-such-flag")
		assert.Equal(t, exitUsage, r.code, "%s --no-such-flag", c.name)
		assert.True(t, strings.HasPrefix(r.stderr, "flag provided but not defined: -no-such-flag\n"), "%s: %s", c.name, r.stderr)
	}
}

// TestMain_Binary runs the built command, so that exit statuses are the
// process's own.
func TestMain_Binary(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"version"}, exitOK},
		{[]string{"lock", "-h"}, exitOK},
		{[]string{"lock", "--unknown-flag"}, exitUsage},
		{[]string{"lock", "--check"}, exitUsage}, // no purramcp.json in dir
		{[]string{"diff", "a.json"}, exitUsage},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, purramcpBin, tc.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err, "%v", tc.args)
		}
		assert.Equal(t, tc.code, code, "purramcp %v: %s", tc.args, out)
	}
}

// runBinary runs the built command in dir and returns its combined
// output and exit status.
func runBinary(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, purramcpBin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err, "%v", args)
	return string(out), 0
}

// TestMain_BinaryDefaultFiles: the built command, run where purramcp.json
// is, writes and checks purramcp-lock.json beside it.
func TestMain_BinaryDefaultFiles(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, map[string]server{"units": {tools: unitsTools}})
	out, code := runBinary(t, dir, "lock")
	require.Equal(t, exitOK, code, out)
	for range 3 {
		out, code = runBinary(t, dir, "lock", "--check")
		require.Equal(t, exitOK, code, out)
	}
	writeConfig(t, dir, map[string]server{"units": {args: []string{"-list-description", "changed"}, tools: unitsTools}})
	out, code = runBinary(t, dir, "lock", "--check")
	assert.Equal(t, exitFail, code, out)
	assert.Contains(t, out, "  ~ units_list (units.list): description\n")
	assert.NotContains(t, out, "\x1b", "no colour off a terminal")
}
