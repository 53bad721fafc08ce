package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// lockedBuffer is a bytes.Buffer safe for the observer's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(b.buf.String(), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %q", line)
		ts, ok := m["time"].(string)
		require.True(t, ok, "line %q has a time", line)
		_, err := time.Parse(time.RFC3339Nano, ts)
		require.NoError(t, err)
		delete(m, "time")
		delete(m, "durationMicros")
		out = append(out, m)
	}
	return out
}

func TestAuditLog_OneLinePerEvent(t *testing.T) {
	var buf lockedBuffer
	log := gateway.AuditLog(&buf)
	log(t.Context(), purramcp.Event{Kind: "call", ServerID: "docs", RevisionDigest: "sha256:ab", LocalName: "search",
		RemoteName: "remote.search", Code: "mcp_tool_error", Requests: 1, ArgumentBytes: 12, ResultBytes: 40,
		Duration: 1500 * time.Microsecond})
	assert.Regexp(t, `^\{"time":"[0-9T:.Z-]+","kind":"call","server":"docs","digest":"sha256:ab","tool":"search",`+
		`"remote":"remote.search","code":"mcp_tool_error","requests":1,"argumentBytes":12,"resultBytes":40,`+
		`"durationMicros":1500\}\n$`, buf.buf.String())
}

// Every discovery and call through the gateway is one line, with no
// argument, result or upstream text in any of them.
func TestAuditLog_ThroughTheGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var buf lockedBuffer
	f := newFakeFleet(t)
	f.observer = gateway.AuditLog(&buf)
	digest := f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	g := newGateway(t, f, gateway.Options{Observer: f.observer})
	g.Refresh()
	d := connectDownstream(t, ctx, g)
	call(t, ctx, d.session, "search", `{"q":"secret-argument"}`)
	call(t, ctx, d.session, "fail", `{}`)
	assert.NotContains(t, buf.buf.String(), "secret-argument")
	assert.NotContains(t, buf.buf.String(), "CANARY")
	assert.NotContains(t, buf.buf.String(), "found")
	assert.Equal(t, []map[string]any{
		{"kind": "discover", "server": "docs", "digest": digest, "code": "", "attempt": 1.0, "pages": 1.0, "requests": 0.0},
		{"kind": "call", "server": "docs", "digest": digest, "tool": "search", "remote": "remote.search", "code": "",
			"requests": 1.0, "argumentBytes": 23.0, "resultBytes": 198.0},
		{"kind": "call", "server": "docs", "digest": digest, "tool": "fail", "remote": "remote.fail",
			"code": "mcp_tool_error", "requests": 1.0, "argumentBytes": 2.0, "resultBytes": 200.0},
	}, buf.lines(t))
}
