package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestHost_StdioServerOverHTTP runs the host against examples/stdio-server
// serving streamable HTTP on a free port.
func TestHost_StdioServerOverHTTP(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := exec.Command(buildServer(t), "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { // the server runs until killed; leave no process behind
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err, "server's first line")
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "server said %q", line)

	var out syncBuffer
	require.NoError(t, run(t.Context(), &out, &mcp.StreamableClientTransport{Endpoint: url}))
	assert.Equal(t, `catalog 8862471503c649d54c058e51278104a771e4fc8dc732b1dc57045f79580725b7 (2025-11-25)
list_units {} -> ok {"text":["ft, km, m, mi"],"structured":null}
convert_units {"value":10,"from":"km","to":"mi"} -> ok {"text":["10 km = 6.213712 mi"],"structured":{"unit":"mi","value":6.213712}}
`, out.String())
}

// TestHost_RediscoversAfterListChange serves units.list and
// units.convert from a test server whose first units.list call replaces
// units.list and answers only once the host has seen the list change. The
// host must return mcp_catalog_stale for that call and rediscover before the
// next one.
func TestHost_RediscoversAfterListChange(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out syncBuffer
	server := mcp.NewServer(&mcp.Implementation{Name: "units", Version: "1"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	var once sync.Once
	var list mcp.ToolHandler
	list = func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		changed := false
		once.Do(func() {
			server.AddTool(&mcp.Tool{Name: "units.list", Description: "changed", InputSchema: object}, list)
			changed = true
		})
		for changed && !strings.Contains(out.String(), "tool list changed") {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
		return text("km"), nil
	}
	server.AddTool(&mcp.Tool{Name: "units.list", InputSchema: object}, list)
	server.AddTool(&mcp.Tool{Name: "units.convert", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("6.2 mi"), nil })
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close() // after run has closed its session

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, run(ctx, &out, &mcp.StreamableClientTransport{Endpoint: ts.URL}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 5, "output:\n%s", out.String())
	first, second := strings.Fields(lines[0]), strings.Fields(lines[3])
	assert.Equal(t, "catalog", first[0], "line 1")
	assert.Equal(t, "tool list changed: rediscovering before the next call", lines[1])
	assert.Equal(t, `list_units {} -> mcp_catalog_stale {"text":[],"structured":null}`, lines[2])
	assert.Equal(t, "catalog", second[0], "line 4")
	assert.NotEqual(t, first[1], second[1], "the rediscovered catalog has a new digest")
	assert.Equal(t, `convert_units {"value":10,"from":"km","to":"mi"} -> ok {"text":["6.2 mi"],"structured":null}`, lines[4])
}

// syncBuffer is a strings.Builder safe for the concurrent writes of run's
// list-change handler.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// buildServer returns examples/stdio-server, built once per test binary
// into the directory TestMain removes. go test puts $GOROOT/bin first on the
// PATH, so "go" is the toolchain running this test.
func buildServer(t *testing.T) string {
	t.Helper()
	b := serverBinary()
	require.NoError(t, b.err, "go build ../stdio-server: %s", b.output)
	return b.path
}

// builtServer is the outcome of the one go build.
type builtServer struct {
	path   string
	output []byte
	err    error
}

var (
	buildDir     string
	serverBinary = sync.OnceValue(func() builtServer {
		goTool, err := exec.LookPath("go")
		if err != nil {
			return builtServer{err: err}
		}
		bin := filepath.Join(buildDir, "stdio-server")
		out, err := exec.Command(goTool, "build", "-o", bin, "../stdio-server").CombinedOutput()
		return builtServer{bin, out, err}
	})
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporary directory:", err)
		os.Exit(2)
	}
	buildDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// TestHost_StdioServer runs the host against examples/stdio-server as a
// child process.
func TestHost_StdioServer(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := exec.Command(buildServer(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var out syncBuffer
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
