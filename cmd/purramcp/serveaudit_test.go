package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under load over HTTP, with the upstream child killed twice, every answer
// the clients received (results, refusals and the fleet's back-off
// answers alike) is one call line in the audit.
func TestServe_AuditOneLinePerAnswerUnderKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	s := startServe(t, serveCtx, dir, "--http", "127.0.0.1:0")
	base := "http://" + listenAddr(t, s)

	const clients = 8
	var answers, refused atomic.Int64
	codes := sync.Map{} // code -> true, of the failed answers
	load, endLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range clients {
		client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
		require.NoError(t, err)
		wg.Go(func() {
			defer cs.Close()
			for load.Err() == nil {
				// ctx, not load: a call is never abandoned midway, so every
				// request sent gets its answer.
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "units_list", Arguments: json.RawMessage(`{}`)})
				if !assert.NoError(t, err) {
					return
				}
				answers.Add(1)
				if res.IsError {
					refused.Add(1)
					codes.Store(res.Content[0].(*mcp.TextContent).Text, true)
				}
			}
		})
	}
	for range 2 {
		before := answers.Load()
		first := childPid(t, dir)
		require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(filepath.Join(dir, "pid")) // being rewritten: maybe empty
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && perr == nil && pid != first
		}, 20*time.Second, 10*time.Millisecond, "a new child")
		require.Eventually(t, func() bool { return answers.Load() > before+50 }, 20*time.Second, 10*time.Millisecond,
			"calls are answered after the restart")
	}
	endLoad()
	wg.Wait()
	pid := childPid(t, dir)
	stop()
	assert.Equal(t, exitOK, s.wait(t))
	assertGone(t, pid)
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()

	var lines int64
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.HasPrefix(line, `{`) && strings.Contains(line, `"kind":"call"`) {
			lines++
		}
	}
	assert.Positive(t, refused.Load(), "calls were refused while the child was down")
	_, closed := codes.Load("mcp_connection_closed")
	t.Logf("%d answers, %d refused; codes: %v", answers.Load(), refused.Load(), closed)
	assert.Equal(t, answers.Load(), lines, "one audit line per answer")
}
