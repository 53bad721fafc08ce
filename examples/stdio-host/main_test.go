package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// buildServer builds examples/stdio-server into a temporary directory. go
// test puts $GOROOT/bin first on the PATH, so "go" is the toolchain running
// this test.
func buildServer(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go on PATH")
	bin := filepath.Join(t.TempDir(), "stdio-server")
	out, err := exec.Command(goTool, "build", "-o", bin, "../stdio-server").CombinedOutput()
	require.NoError(t, err, "go build ../stdio-server: %s", out)
	return bin
}

func TestStdioHost_StdioServer(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := exec.Command(buildServer(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var out bytes.Buffer
	err := run(t.Context(), &out, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second})
	require.NoError(t, err, "run; server stderr: %s", stderr.String())
	assert.Equal(t, `catalog b3f07f2b9103750434625eaf7d57e9c8b7bdb278e21e51680ad3a7f914f249b5 (2026-07-28)
list_units {} -> ok {"text":["ft, km, m, mi"],"structured":null}
convert_units {"value":10,"from":"km","to":"mi"} -> ok {"text":["10 km = 6.213712 mi"],"structured":{"unit":"mi","value":6.213712}}
`, out.String())
	// run closed the session, which closed the server's input and waited for
	// it: the process has exited, cleanly, and nothing is left behind.
	require.NotNil(t, cmd.ProcessState, "the server process was not waited for")
	assert.True(t, cmd.ProcessState.Success(), "server exit %v; stderr: %s", cmd.ProcessState, stderr.String())
}
