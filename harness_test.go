package purramcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// mcpFixture is testdata/mcp_tools.json, loaded strictly (style.md T2).
type mcpFixture struct {
	SchemaVersion         int             `json:"schemaVersion"`
	Tool                  json.RawMessage `json:"tool"`
	Cases                 []mcpCallCase   `json:"cases"`
	RevisionDigest        string          `json:"revisionDigest"`
	TestModelCapabilities json.RawMessage `json:"testModelCapabilities"`
	SchemaCases           []mcpSchemaCase `json:"schemaCases"`
	DeclaredDialectTool   json.RawMessage `json:"declaredDialectTool"`
}

// mcpCallCase is one shared-boundary row (reference-behaviors.md §H).
type mcpCallCase struct {
	ID        string          `json:"id"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	ErrorCode *string         `json:"errorCode"`
	Limits    *struct {
		MaxResultBytes   int `json:"maxResultBytes"`
		MaxContentBlocks int `json:"maxContentBlocks"`
	} `json:"limits"`
	Malformed bool `json:"malformed"`
}

// mcpSchemaCase is one rejected tool (reference-behaviors.md §F).
type mcpSchemaCase struct {
	ID        string          `json:"id"`
	Tool      json.RawMessage `json:"tool"`
	ErrorCode string          `json:"errorCode"`
}

func loadMCPFixture(t testing.TB) mcpFixture {
	t.Helper()
	var f mcpFixture
	decodeStrict(t, readVector(t, "mcp_tools.json"), &f)
	require.Len(t, f.Cases, 14, "mcp_tools.json cases")
	require.Len(t, f.SchemaCases, 6, "mcp_tools.json schemaCases")
	return f
}

// Negotiated versions every connected test runs under.
var testVersions = []string{purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728}

// rawTool is the wire shape of a fixture tool.
type rawTool struct {
	Name         string               `json:"name"`
	Description  string               `json:"description"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
}

// sdkTool turns fixture tool JSON into a go-sdk tool whose schemas are sent
// verbatim.
func sdkTool(t testing.TB, raw json.RawMessage) *mcp.Tool {
	t.Helper()
	var rt rawTool
	require.NoError(t, json.Unmarshal(raw, &rt))
	tool := &mcp.Tool{Name: rt.Name, Description: rt.Description, InputSchema: rt.InputSchema,
		Annotations: rt.Annotations}
	if len(rt.OutputSchema) > 0 {
		tool.OutputSchema = rt.OutputSchema
	}
	return tool
}

// withField returns tool JSON with one top-level field replaced (nil removes it).
func withField(t testing.TB, tool json.RawMessage, key string, value any) json.RawMessage {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(tool, &m))
	if value == nil {
		delete(m, key)
	} else {
		m[key] = value
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// sdkServer is a real go-sdk server that counts requests server-side.
type sdkServer struct {
	server *mcp.Server

	mu      sync.Mutex // guards the fields below
	lists   int
	calls   []json.RawMessage // arguments of every tools/call
	result  json.RawMessage   // tools/call result, fixture JSON
	handler func(ctx context.Context) (*mcp.CallToolResult, error)
}

// newSDKServer serves tools (fixture JSON); every tools/call answers result.
func newSDKServer(t testing.TB, result json.RawMessage, tools ...json.RawMessage) *sdkServer {
	t.Helper()
	return newSDKServerVersions(t, nil, result, tools...)
}

// newSDKServerVersions is newSDKServer negotiating only versions (nil: all
// of go-sdk's).
func newSDKServerVersions(t testing.TB, versions []string, result json.RawMessage, tools ...json.RawMessage) *sdkServer {
	t.Helper()
	s := &sdkServer{result: result}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
			SupportedProtocolVersions: versions})
	s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				s.mu.Lock()
				s.lists++
				s.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	for _, raw := range tools {
		s.server.AddTool(sdkTool(t, raw), s.call)
	}
	return s
}

func (s *sdkServer) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, append(json.RawMessage(nil), req.Params.Arguments...))
	result, handler := s.result, s.handler
	s.mu.Unlock()
	if handler != nil {
		return handler(ctx)
	}
	if result == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(result, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *sdkServer) counts() (lists, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, len(s.calls)
}

func (s *sdkServer) lastArguments() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return nil
	}
	return s.calls[len(s.calls)-1]
}

// connectSDK connects a client wired to a fresh, attached monitor; version ""
// negotiates go-sdk's default (2026-07-28). The session closes at cleanup.
func connectSDK(t testing.TB, server *mcp.Server, version string) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(context.Background(), monitor.Transport(ct), &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	require.NoError(t, monitor.Attach(cs))
	return cs, monitor
}

// searchBinding is the reference's default binding (reference-behaviors.md §2).
func searchBinding() map[string]purramcp.ToolBinding {
	return map[string]purramcp.ToolBinding{"remote.search": {LocalName: "search",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search"}, Scope: purramcp.Unscoped, ConcurrencySafe: true}}
}

// emptyEnvelope is the content of every failed result.
var emptyEnvelope = purramcp.Envelope{Text: []string{}}

// decodeObject decodes JSON into a map for value comparison.
func decodeObject(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// sessionHarness is a connected, monitored session and its server's counts.
type sessionHarness struct {
	session       *mcp.ClientSession
	monitor       *purramcp.CatalogMonitor
	counts        func() (lists, calls int)
	lastArguments func() json.RawMessage
}

// sdkHarness connects to a go-sdk server at version ("" = default).
func sdkHarness(t testing.TB, s *sdkServer, version string) sessionHarness {
	t.Helper()
	cs, monitor := connectSDK(t, s.server, version)
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: s.lastArguments}
}

// rawHarness connects to a scripted raw server.
func rawHarness(t testing.TB, s *rawServer) sessionHarness {
	t.Helper()
	cs, monitor := s.start(t)
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: s.lastArguments}
}

// jsonrpcError is the JSON-RPC error a raw server answers with.
type jsonrpcError = jsonrpc.Error

// Polling bounds for the few asynchronous effects no synctest bubble can
// hold (a real child process, real sockets, a write queued on go-sdk's
// mutex); every other wait settles a bubble with synctest.Wait.
const (
	waitFor = 5 * time.Second
	tick    = 5 * time.Millisecond
)

var errContextCanceled = context.Canceled

func contextWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

// forEachVersion runs f as one subtest per negotiated version in
// testVersions, so a single version can be selected with -run.
func forEachVersion(t *testing.T, f func(t *testing.T, version string)) {
	t.Helper()
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { f(t, version) })
	}
}

// leakChecked runs body as a subtest and then checks that no goroutine it
// started outlives it (its sessions close at its cleanup).
func leakChecked(t *testing.T, name string, body func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		t.Run("session", body)
	})
}

// serverNotifyDelay is how long a go-sdk server debounces a list change
// before it notifies its sessions (go-sdk v1.8.0 mcp/server.go
// notificationDelay, 10ms), plus a millisecond so the notification's timer
// fires before the waiting test goroutine wakes.
const serverNotifyDelay = 10*time.Millisecond + time.Millisecond

// awaitServerNotify, inside a synctest bubble, lets a go-sdk server's
// debounced list change go out and reach the client: fake time passes the
// debounce, then every goroutine of the bubble settles. The caller then
// asserts the effect directly.
func awaitServerNotify() {
	time.Sleep(serverNotifyDelay)
	synctest.Wait()
}
