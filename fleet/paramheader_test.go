package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// headerSchema is a tool input schema mirroring two parameters into
// headers (SEP-2243).
const headerSchema = `{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"limit":{"type":"integer","x-mcp-header":"Limit"},
	"q":{"type":"string"}},"additionalProperties":false}`

// headerServer serves db.query over streamable HTTP (stateless: MCP
// 2026-07-28; stateful: 2025-11-25) and records the Mcp-Param-* headers of
// every tools/call request.
type headerServer struct {
	mu    sync.Mutex
	calls []http.Header // the Mcp-Param-* headers of each tools/call POST
}

func (h *headerServer) handler(stateless bool) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "db", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "db.query", Description: "Query", InputSchema: json.RawMessage(headerSchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/call" ||
			r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") < purramcp.ProtocolVersion20260728 && bodyIsCall(r) {
			got := http.Header{}
			for k, v := range r.Header {
				if len(k) > len("Mcp-Param-") && http.CanonicalHeaderKey(k[:len("Mcp-Param-")]) == "Mcp-Param-" {
					got[k] = v
				}
			}
			h.mu.Lock()
			h.calls = append(h.calls, got)
			h.mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	})
}

// bodyIsCall peeks at a legacy request's method, leaving the body intact.
func bodyIsCall(r *http.Request) bool {
	var buf []byte
	buf, _ = readAllRestore(r)
	var m struct{ Method string }
	_ = json.Unmarshal(buf, &m)
	return m.Method == "tools/call"
}

func (h *headerServer) last(t *testing.T) http.Header {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.NotEmpty(t, h.calls)
	return h.calls[len(h.calls)-1]
}

// headerFleet starts a fleet with db.query bound from url under policy.
func headerFleet(t *testing.T, url, policy string) *fleet.Fleet {
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"db": {"type": "http", "url": "` + url + `",
		"policy": ` + policy + `, "limits": {"timeout": "5s"}, "tools": {"db.query": {"as": "query"}}}}}`))
	require.NoError(t, err)
	return startFleet(t, cfg, fleet.Options{Backoff: fastBackoff})
}

// TestHTTP_ParamHeadersOnTheWire: under the headers policy a tool with
// x-mcp-header binds, keeps the annotation in its snapshot, and each call
// at 2026-07-28 carries Mcp-Param-{name} for every annotated argument it
// has (base64 for a value that is not plain ASCII); at 2025-11-25 none.
func TestHTTP_ParamHeadersOnTheWire(t *testing.T) {
	h := &headerServer{}
	ts := httptest.NewServer(h.handler(true))
	t.Cleanup(ts.Close) // after the fleet's own cleanup closes its sessions
	f := headerFleet(t, ts.URL, `["headers"]`)
	st := waitState(t, f, "db", fleet.StateReady, "")
	assert.Equal(t, purramcp.ProtocolVersion20260728, st.Protocol)
	snap, ok := f.Snapshot("db")
	require.True(t, ok)
	schema, err := json.Marshal(snap.Entries[0].InputSchema)
	require.NoError(t, err)
	assert.JSONEq(t, headerSchema, string(schema), "kept in the snapshot, so in the digest")
	query := registration(t, f, "query")

	for _, tc := range []struct {
		args string
		want http.Header
	}{
		{`{"region":"us-west1","limit":5,"q":"select"}`, http.Header{"Mcp-Param-Region": {"us-west1"}, "Mcp-Param-Limit": {"5"}}},
		{`{"region":"Zürich"}`, http.Header{"Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}},
		{`{"region":" eu "}`, http.Header{"Mcp-Param-Region": {"=?base64?IGV1IA==?="}}},
		{`{"q":"select"}`, http.Header{}},
	} {
		assert.Equal(t, "", run(t, query, tc.args), tc.args)
		assert.Equal(t, tc.want, h.last(t), tc.args)
	}

	// The same tool at 2025-11-25 (a stateful go-sdk server): no header.
	legacy := &headerServer{}
	ls := httptest.NewServer(legacy.handler(false))
	t.Cleanup(ls.Close)
	lf := headerFleet(t, ls.URL, `["headers"]`)
	st = waitState(t, lf, "db", fleet.StateReady, "")
	assert.Equal(t, purramcp.ProtocolVersion20251125, st.Protocol)
	assert.Equal(t, "", run(t, registration(t, lf, "query"), `{"region":"us-west1"}`))
	assert.Equal(t, http.Header{}, legacy.last(t))
}

// TestHTTP_ParamHeadersDefaultFailsClosed: without the policy the tool
// does not bind: mcp_schema_unsupported at the annotated property.
func TestHTTP_ParamHeadersDefaultFailsClosed(t *testing.T) {
	h := &headerServer{}
	ts := httptest.NewServer(h.handler(true))
	t.Cleanup(ts.Close) // after the fleet's own cleanup closes its sessions
	f := headerFleet(t, ts.URL, `["dialect", "annotations", "extended"]`)
	var st fleet.ServerStatus
	waitFor(t, "the discovery failure", func() bool {
		st = statusOf(t, f, "db")
		return st.Failure != nil
	})
	assert.Equal(t, purramcp.CodeSchemaUnsupported, st.Code)
	assert.Equal(t, "inputSchema", st.Failure.Schema)
	assert.Equal(t, "$.properties.limit", st.Failure.Path)
	assert.Equal(t, "x-mcp-header", st.Failure.Keyword)
	assert.Empty(t, f.Registrations())
}

// readAllRestore reads r's body and puts an equal one back.
func readAllRestore(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}
