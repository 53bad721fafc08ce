package purramcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
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

// byteServer is a JSON-RPC peer over mcp.IOTransport pipes that writes
// every answer as the exact bytes a test gives it: frames go-sdk's own
// encoder would never write (twelve MiB of raw '<', hundreds of thousands of
// blocks or tools on one line). It answers the legacy initialize handshake,
// tools/list with page and tools/call with call; other requests get {}.
type byteServer struct {
	page string // the tools/list result
	call string // the tools/call result
	// beforeList is written, as is, before each tools/list answer.
	beforeList string

	toServer   *io.PipeWriter // the client's writes
	fromClient *io.PipeReader
	toClient   *io.PipeWriter
	done       chan struct{}

	mu    sync.Mutex
	lists int
	calls int
}

// start connects a bounded, attached session to the server; both close at
// cleanup.
func (s *byteServer) start(t testing.TB) sessionHarness {
	t.Helper()
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	s.toServer, s.fromClient, s.toClient, s.done = clientW, serverR, serverW, make(chan struct{})
	go s.serve()
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(context.Background(), monitor.Transport(&mcp.IOTransport{Reader: clientR, Writer: clientW}),
		&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = serverR.Close()
		_ = serverW.Close()
		<-s.done
	})
	require.NoError(t, monitor.Attach(cs))
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: func() json.RawMessage { return nil }}
}

func (s *byteServer) serve() {
	defer close(s.done)
	lines := bufio.NewReaderSize(s.fromClient, 1<<20)
	for {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
			continue // notifications
		}
		result := `{}`
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bytes","version":"1"}}`
		case "tools/list":
			s.mu.Lock()
			s.lists++
			s.mu.Unlock()
			result = s.page
			if s.beforeList != "" {
				if _, err := s.toClient.Write([]byte(s.beforeList)); err != nil {
					return
				}
			}
		case "tools/call":
			s.mu.Lock()
			s.calls++
			s.mu.Unlock()
			result = s.call
		}
		frame := make([]byte, 0, len(result)+64)
		frame = append(frame, `{"jsonrpc":"2.0","id":`...)
		frame = append(frame, req.ID...)
		frame = append(frame, `,"result":`...)
		frame = append(frame, result...)
		frame = append(frame, "}\n"...)
		if _, err := s.toClient.Write(frame); err != nil {
			return
		}
	}
}

func (s *byteServer) counts() (lists, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.calls
}

// rawServer is a scripted JSON-RPC server on the server end of
// mcp.NewInMemoryTransports, for what a go-sdk server never sends: repeated
// cursors, duplicate names, malformed results, list changes before a reply,
// answers that never come, a peer that stops reading (style.md T4). It counts
// every request it reads, so tests assert what reached the server.
type rawServer struct {
	conn mcp.Connection
	// modern answers server/discover, so the session negotiates 2026-07-28;
	// otherwise discover fails and the client falls back to initialize.
	modern bool
	// noTools leaves the tools capability out.
	noTools bool
	// pages are tools/list results; the last one repeats.
	pages []string
	// changedBeforeList sends list_changed before every tools/list reply.
	changedBeforeList bool
	// storm sends this many list_changed notifications before every
	// tools/list reply (a notification storm during paging).
	storm int
	// listError answers every tools/list with this JSON-RPC error.
	listError *jsonrpc.Error
	// responses receives the client's answers to requests the server sent
	// itself (server-initiated requests); nil drops them. It must have room
	// for every answer: the server stops reading while it waits.
	responses chan *jsonrpc.Response
	// call answers tools/call with a raw result, or an error when the string
	// is empty and rpcErr is set.
	call func(args json.RawMessage) (string, *jsonrpc.Error)
	// beforeAnswer runs before each tools/call answer with the call's
	// arguments, on the call's own goroutine (the server keeps reading
	// meanwhile); it may block until ctx, the server's, ends at cleanup.
	beforeAnswer func(ctx context.Context, args json.RawMessage)
	// neverAnswer leaves every tools/call unanswered; the server keeps
	// reading, so it sees notifications/cancelled.
	neverAnswer bool
	// closeOnCall closes the connection instead of answering tools/call.
	closeOnCall bool
	// listFault leaves every tools/list unanswered ("silent") or closes the
	// connection instead of answering it ("close").
	listFault string
	// stallCalls stops reading once a tools/list was answered, so the
	// client's next write blocks.
	stallCalls bool
	// overIO connects over mcp.IOTransport on a net.Pipe instead of the
	// in-memory transport: the bounding layer cannot tell whether closing
	// the host's streams ends a blocked write, so requests run on request
	// workers instead of their callers' goroutines.
	overIO bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // tools/call goroutines

	mu        sync.Mutex // guards the fields below
	lists     int
	cursors   []*string
	calls     []json.RawMessage
	callIDs   []string          // JSON of each tools/call request id
	caps      []json.RawMessage // client capabilities of each handshake request
	cancelled []string          // JSON of the requestId of each notifications/cancelled
	done      chan struct{}
}

// start connects the raw server and a client wired to a fresh, attached
// monitor; the returned session and server are closed at cleanup.
func (s *rawServer) start(t testing.TB) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
	t.Helper()
	monitor := purramcp.NewCatalogMonitor()
	cs, err := s.startWith(t, monitor.ClientOptions(nil), monitor)
	require.NoError(t, err)
	return cs, monitor
}

// startWith is start with the host's own client options, for tests that need
// a client the monitor did not configure; it returns the error of attaching
// the monitor.
func (s *rawServer) startWith(t testing.TB, opts *mcp.ClientOptions, monitor *purramcp.CatalogMonitor) (*mcp.ClientSession, error) {
	t.Helper()
	var st, ct mcp.Transport
	if s.overIO {
		server, client := net.Pipe()
		st, ct = &mcp.IOTransport{Reader: server, Writer: server}, &mcp.IOTransport{Reader: client, Writer: client}
	} else {
		st, ct = mcp.NewInMemoryTransports()
	}
	conn, err := st.Connect(context.Background())
	require.NoError(t, err)
	s.conn, s.done = conn, make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.serve()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), monitor.Transport(ct), nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.cancel()
		_ = s.conn.Close() // unblocks a stalled client write first
		_ = cs.Close()
		<-s.done
	})
	return cs, monitor.Attach(cs)
}

func (s *rawServer) serve() {
	defer close(s.done)
	defer s.wg.Wait()
	ctx := s.ctx
	for {
		msg, err := s.conn.Read(ctx)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			if resp, isResp := msg.(*jsonrpc.Response); isResp && s.responses != nil {
				s.responses <- resp
			}
			continue
		}
		if !req.ID.IsValid() {
			s.notification(req)
			continue
		}
		switch req.Method {
		case "subscriptions/listen":
			continue // long-lived; never answered
		case "tools/list":
			if s.listFault != "" {
				s.mu.Lock()
				s.lists++
				s.mu.Unlock()
				if s.listFault == "close" {
					_ = s.conn.Close()
				}
				continue
			}
		case "tools/call":
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.respondCall(ctx, req)
			}()
			continue
		}
		result, rpcErr := s.answer(req)
		if err := s.conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: result, Error: rpcErr}); err != nil {
			return
		}
		if s.stallCalls && req.Method == "tools/list" {
			<-ctx.Done() // stop reading until cleanup
		}
	}
}

// notification records the request id of notifications/cancelled.
func (s *rawServer) notification(req *jsonrpc.Request) {
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = json.Unmarshal(req.Params, &p)
	s.mu.Lock()
	s.cancelled = append(s.cancelled, string(p.RequestID))
	s.mu.Unlock()
}

func (s *rawServer) capabilities() string {
	if s.noTools {
		return `{}`
	}
	return `{"tools":{}}`
}

func (s *rawServer) answer(req *jsonrpc.Request) (json.RawMessage, error) {
	switch req.Method {
	case "server/discover":
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(req.Params, &p)
		s.recordCapabilities(p.Meta["io.modelcontextprotocol/clientCapabilities"])
		if !s.modern {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
		}
		return json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":` +
			s.capabilities() + `,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`), nil
	case "initialize":
		var p struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		_ = json.Unmarshal(req.Params, &p)
		s.recordCapabilities(p.Capabilities)
		v, _ := json.Marshal(p.ProtocolVersion)
		return json.RawMessage(`{"protocolVersion":` + string(v) + `,"capabilities":` + s.capabilities() +
			`,"serverInfo":{"name":"raw","version":"1"}}`), nil
	case "ping":
		return json.RawMessage(`{}`), nil
	case "tools/list":
		return s.list(req)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
}

func (s *rawServer) list(req *jsonrpc.Request) (json.RawMessage, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p)
	}
	s.mu.Lock()
	i := min(s.lists, len(s.pages)-1)
	s.lists++
	s.cursors = append(s.cursors, p.Cursor)
	s.mu.Unlock()
	if s.changedBeforeList {
		s.notifyChanged()
	}
	for range s.storm {
		s.notifyChanged()
	}
	if s.listError != nil {
		return nil, s.listError
	}
	return json.RawMessage(s.pages[i]), nil
}

// respondCall records one tools/call and answers it as scripted.
func (s *rawServer) respondCall(ctx context.Context, req *jsonrpc.Request) {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &p)
	id, _ := json.Marshal(req.ID.Raw())
	s.mu.Lock()
	s.calls = append(s.calls, p.Arguments)
	s.callIDs = append(s.callIDs, string(id))
	s.mu.Unlock()
	switch {
	case s.closeOnCall:
		_ = s.conn.Close()
		return
	case s.neverAnswer:
		return
	}
	if s.beforeAnswer != nil {
		s.beforeAnswer(ctx, p.Arguments)
	}
	result, rpcErr := json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), (*jsonrpc.Error)(nil)
	if s.call != nil {
		text, e := s.call(p.Arguments)
		result, rpcErr = json.RawMessage(text), e
		if e != nil {
			result = nil
		}
	}
	var err error
	if rpcErr != nil {
		err = rpcErr
	}
	_ = s.conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: result, Error: err})
}

// notifyChanged sends notifications/tools/list_changed.
func (s *rawServer) notifyChanged() {
	_ = s.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/tools/list_changed",
		Params: json.RawMessage(`{}`)})
}

// recordCapabilities records the client capabilities of one handshake
// request (initialize or server/discover); absent ones record as null.
func (s *rawServer) recordCapabilities(caps json.RawMessage) {
	if len(caps) == 0 {
		caps = json.RawMessage(`null`)
	}
	s.mu.Lock()
	s.caps = append(s.caps, caps)
	s.mu.Unlock()
}

// clientCapabilities returns the capabilities of every handshake request.
func (s *rawServer) clientCapabilities() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.caps...)
}

func (s *rawServer) counts() (lists, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, len(s.calls)
}

func (s *rawServer) seenCursors() []*string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*string(nil), s.cursors...)
}

// cancelledCalls returns how many tools/call requests the client cancelled
// with notifications/cancelled.
func (s *rawServer) cancelledCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.cancelled {
		for _, id := range s.callIDs {
			if c == id {
				n++
			}
		}
	}
	return n
}

// toolsPage renders a tools/list result from tool JSON values.
func toolsPage(t testing.TB, nextCursor string, tools ...json.RawMessage) string {
	t.Helper()
	page := map[string]any{"tools": tools}
	if tools == nil {
		page["tools"] = []json.RawMessage{}
	}
	if nextCursor != "" {
		page["nextCursor"] = nextCursor
	}
	b, err := json.Marshal(page)
	require.NoError(t, err)
	return string(b)
}

func (s *rawServer) lastArguments() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return nil
	}
	return s.calls[len(s.calls)-1]
}
