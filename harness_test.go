package purramcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// The package's test harness: the fixture, the in-memory, raw and byte
// servers the tests drive, connecting and discovering helpers, the shared
// generators and fuzz checks, and the small assertions the tests share. The
// benchmarks' own harness is in bench_test.go (-tags purrabench).

// mcpFixture is testdata/mcp_tools.json, loaded strictly (unknown fields fail).
type mcpFixture struct {
	SchemaVersion         int             `json:"schemaVersion"`
	Tool                  json.RawMessage `json:"tool"`
	Cases                 []mcpCallCase   `json:"cases"`
	RevisionDigest        string          `json:"revisionDigest"`
	TestModelCapabilities json.RawMessage `json:"testModelCapabilities"`
	SchemaCases           []mcpSchemaCase `json:"schemaCases"`
	DeclaredDialectTool   json.RawMessage `json:"declaredDialectTool"`
}

// mcpCallCase is one shared-boundary row: a call and the outcome every
// implementation must reach.
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

// mcpSchemaCase is one rejected tool and the fault discovery reports.
type mcpSchemaCase struct {
	ID        string          `json:"id"`
	Tool      json.RawMessage `json:"tool"`
	ErrorCode string          `json:"errorCode"`
}

func loadMCPFixture(t testing.TB) mcpFixture {
	t.Helper()
	var f mcpFixture
	decodeStrict(t, readVector(t, "mcp_tools.json"), &f)
	if got := len(f.Cases); got != 14 {
		t.Fatalf("mcp_tools.json cases: len = %d, want %d", got, 14)
	}
	if got := len(f.SchemaCases); got != 6 {
		t.Fatalf("mcp_tools.json schemaCases: len = %d, want %d", got, 6)
	}
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
	if err := json.Unmarshal(raw, &rt); err != nil {
		t.Fatalf("json.Unmarshal(raw, &rt): %v", err)
	}
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
	if err := json.Unmarshal(tool, &m); err != nil {
		t.Fatalf("json.Unmarshal(tool, &m): %v", err)
	}
	if value == nil {
		delete(m, key)
	} else {
		m[key] = value
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
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
	return purramcptest.Connect(t, server, purramcptest.Options{ProtocolVersion: version})
}

// searchBinding is the reference's default binding: remote.search as the
// read tool search, unscoped, concurrency-safe.
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
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("json.Unmarshal(raw, &m): %v", err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = serverR.Close()
		_ = serverW.Close()
		<-s.done
	})
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
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
// answers that never come, a peer that stops reading. It counts
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
	// the host's streams ends a blocked write, so requests run on
	// goroutines of their own instead of their callers' goroutines.
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
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	s.conn, s.done = conn, make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.serve()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), monitor.Transport(ct), nil)
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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

// diffNumberClasses groups literal spellings of one numeric value. Every
// value is safe and has few significant digits, so rounding to binary64
// (the profile) and exact decimals (jsonschema uses big.Rat) order them the
// same way and never merge two classes.
var diffNumberClasses = [][]string{
	{"0", "-0", "0.0", "-0.0", "0e5", "0E-3"},
	{"1", "1.0", "1e0", "10e-1", "0.1e1", "1.000"},
	{"-1", "-1.0", "-1e0", "-10E-1"},
	{"2", "2.0", "2e0", "0.2e1", "200e-2"},
	{"3", "3.00", "30e-1"},
	{"10", "1e1", "10.0", "1E+1"},
	{"100", "1e2", "100.0"},
	{"-7", "-7.0", "-70e-1"},
	{"1.5", "1.50", "15e-1", "0.15e1"},
	{"-2.5", "-2.50", "-25e-1"},
	{"0.1", "0.10", "1e-1", "1E-1"},
	{"0.5", "5e-1", "0.50"},
	{"2.75", "275e-2"},
	{"1e-7", "0.0000001", "1E-7"},
	{"123456.5", "1.234565e5"},
	{"9007199254740991", "9007199254740991.0", "9.007199254740991e15"},
	{"-9007199254740991", "-9007199254740991.0"},
}

// diffRunes are the code points strings are built from: multi-byte UTF-8,
// astral (one code point, two UTF-16 units), a combining mark, controls
// and characters JSON must escape.
var diffRunes = []string{"a", "Z", "é", "😀", "\u0301", "日", "\ue000", "\u2028", "\x00", "\"", "\\", "\n"}

// diffNames are property and required names, some of them special in other
// languages or in JSON Schema, all plain data here.
var diffNames = []string{"a", "b", "v", "é", "😀", "10", "2", "__proto__", "toString", "$ref", ""}

var diffTypeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

type diffGen struct{ r *rand.Rand }

func newDiffGen(seed uint64) *diffGen {
	return &diffGen{r: rand.New(rand.NewPCG(seed, 0x70757272616d6370))}
}

func (g *diffGen) chance(p float64) bool { return g.r.Float64() < p }

func diffPick[T any](g *diffGen, list []T) T { return list[g.r.IntN(len(list))] }

// number returns a literal from class i in a random spelling.
func (g *diffGen) number(i int) json.Number {
	return json.Number(diffPick(g, diffNumberClasses[i]))
}

func diffNumberValue(class int) float64 {
	f, err := strconv.ParseFloat(diffNumberClasses[class][0], 64)
	if err != nil {
		panic(err)
	}
	return f
}

// diffClassOf returns the class of a literal the generator produced.
func diffClassOf(n json.Number) int {
	for i, class := range diffNumberClasses {
		if slices.Contains(class, string(n)) {
			return i
		}
	}
	panic("differential: literal outside the number classes: " + string(n))
}

// numberIn picks a class whose value lies in [lo, hi] and satisfies integral
// when set; it falls back to any class when none does.
func (g *diffGen) numberIn(lo, hi float64, integral bool) json.Number {
	var fits []int
	for i := range diffNumberClasses {
		f := diffNumberValue(i)
		if f >= lo && f <= hi && (!integral || f == math.Trunc(f)) {
			fits = append(fits, i)
		}
	}
	if len(fits) == 0 {
		return g.number(g.r.IntN(len(diffNumberClasses)))
	}
	return g.number(diffPick(g, fits))
}

func (g *diffGen) str(minLen, maxLen int) string {
	var b strings.Builder
	for range minLen + g.r.IntN(maxLen-minLen+1) {
		b.WriteString(diffPick(g, diffRunes))
	}
	return b.String()
}

// value returns an arbitrary value of the generator's domain.
func (g *diffGen) value(depth int) any {
	kinds := 4
	if depth > 0 {
		kinds = 6
	}
	switch g.r.IntN(kinds) {
	case 0:
		return nil
	case 1:
		return g.chance(0.5)
	case 2:
		return g.number(g.r.IntN(len(diffNumberClasses)))
	case 3:
		return g.str(0, 3)
	case 4:
		out := []any{}
		for range g.r.IntN(4) {
			out = append(out, g.value(depth-1))
		}
		return out
	}
	out := map[string]any{}
	for range g.r.IntN(4) {
		out[diffPick(g, diffNames)] = g.value(depth - 1)
	}
	return out
}

// respell returns a copy of v with every number in another spelling of the
// same value, so equality must be numeric (1 equals 1.0).
func (g *diffGen) respell(v any) any {
	switch x := v.(type) {
	case json.Number:
		return g.number(diffClassOf(x))
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = g.respell(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range diffSortedKeys(x) {
			out[k] = g.respell(x[k])
		}
		return out
	}
	return v
}

func diffSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// schema returns a schema node inside the profile (A4): whitelisted
// keywords only, valid values, min ≤ max for every pair.
func (g *diffGen) schema(depth int) map[string]any {
	s := map[string]any{}
	if g.chance(0.5) {
		s["type"] = g.typeKeyword()
	}
	if g.chance(0.1) {
		s["title"] = g.str(0, 2)
	}
	if g.chance(0.1) {
		s["description"] = g.str(0, 2)
	}
	if g.chance(0.15) {
		list := []any{}
		for range 1 + g.r.IntN(4) {
			list = append(list, g.value(2))
		}
		s["enum"] = list
	}
	if g.chance(0.1) {
		s["const"] = g.value(2)
	}
	// Keywords that apply to the declared type are likelier, so that
	// their violations are not all masked by type mismatches.
	likely := func(types ...string) float64 {
		if t, ok := s["type"].(string); ok && slices.Contains(types, t) {
			return 0.6
		}
		return 0.2
	}
	g.counts(s, likely("string"), "minLength", "maxLength", 3)
	g.counts(s, likely("array"), "minItems", "maxItems", 3)
	if g.chance(likely("array")) {
		s["uniqueItems"] = g.chance(0.8)
	}
	if g.chance(likely("number", "integer")) {
		g.bounds(s)
	}
	if g.chance(0.25) {
		s["required"] = g.required()
	}
	if g.chance(0.25) {
		s["additionalProperties"] = g.chance(0.3)
	}
	if depth > 0 {
		g.children(s, depth)
	}
	return s
}

func (g *diffGen) children(s map[string]any, depth int) {
	if g.chance(0.4) {
		props := map[string]any{}
		for range g.r.IntN(4) {
			props[diffPick(g, diffNames)] = g.schema(depth - 1)
		}
		s["properties"] = props
	}
	if g.chance(0.3) {
		s["items"] = g.schema(depth - 1)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if g.chance(0.15) {
			list := []any{}
			for range 1 + g.r.IntN(3) {
				list = append(list, g.schema(depth-1))
			}
			s[k] = list
		}
	}
}

func (g *diffGen) typeKeyword() any {
	if g.chance(0.6) {
		return diffPick(g, diffTypeNames)
	}
	names := slices.Clone(diffTypeNames)
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	list := []any{}
	for _, name := range names[:1+g.r.IntN(3)] {
		list = append(list, name)
	}
	return list
}

// counts sets one or both of a count pair, spelled as any integral literal.
func (g *diffGen) counts(s map[string]any, p float64, minName, maxName string, most int) {
	if !g.chance(p) {
		return
	}
	lo := g.r.IntN(most + 1)
	hi := lo + g.r.IntN(most)
	spell := func(n int) any {
		if g.chance(0.2) {
			return json.Number(strconv.Itoa(n) + ".0")
		}
		return json.Number(strconv.Itoa(n))
	}
	switch g.r.IntN(3) {
	case 0:
		s[minName] = spell(lo)
	case 1:
		s[maxName] = spell(hi)
	default:
		s[minName], s[maxName] = spell(lo), spell(hi)
	}
}

func (g *diffGen) bounds(s map[string]any) {
	a, b := g.r.IntN(len(diffNumberClasses)), g.r.IntN(len(diffNumberClasses))
	if diffNumberValue(a) > diffNumberValue(b) {
		a, b = b, a
	}
	switch g.r.IntN(3) {
	case 0:
		s["minimum"] = g.number(a)
	case 1:
		s["maximum"] = g.number(b)
	default:
		s["minimum"], s["maximum"] = g.number(a), g.number(b)
	}
}

func (g *diffGen) required() []any {
	names := map[string]bool{}
	for range g.r.IntN(3) {
		if name := diffPick(g, diffNames); name != "" {
			names[name] = true
		}
	}
	list := []any{}
	for _, name := range diffSortedKeys(names) {
		list = append(list, name)
	}
	return list
}

// valueFor returns a value aimed at schema node s: often conforming, often
// one constraint off, sometimes unrelated.
func (g *diffGen) valueFor(s map[string]any, depth int) any {
	if depth < 0 || g.chance(0.05) {
		return g.value(max(depth, 0))
	}
	if c, ok := s["const"]; ok && g.chance(0.6) {
		return g.respell(c)
	}
	if e, ok := s["enum"]; ok && g.chance(0.6) {
		return g.respell(diffPick(g, e.([]any)))
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k]; ok && g.chance(0.4) {
			return g.valueFor(diffPick(g, branches.([]any)).(map[string]any), depth)
		}
	}
	switch g.kindFor(s) {
	case "null":
		return nil
	case "boolean":
		return g.chance(0.5)
	case "integer":
		return g.numberFor(s, true)
	case "number":
		return g.numberFor(s, false)
	case "string":
		lo, hi := g.countsFor(s, "minLength", "maxLength")
		return g.str(lo, hi)
	case "array":
		return g.arrayFor(s, depth)
	}
	return g.objectFor(s, depth)
}

// kindFor picks a JSON type for a value aimed at s: one of its type names,
// else one its other keywords suggest.
func (g *diffGen) kindFor(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		if g.chance(0.9) {
			return t
		}
	case []any:
		if g.chance(0.9) {
			return diffPick(g, t).(string)
		}
	}
	var hints []string
	for kw, kind := range map[string]string{"properties": "object", "required": "object",
		"additionalProperties": "object", "items": "array", "minItems": "array",
		"uniqueItems": "array", "minLength": "string", "maxLength": "string",
		"minimum": "number", "maximum": "number"} {
		if _, ok := s[kw]; ok {
			hints = append(hints, kind)
		}
	}
	slices.Sort(hints)
	if len(hints) > 0 && g.chance(0.8) {
		return diffPick(g, hints)
	}
	return diffPick(g, diffTypeNames)
}

func (g *diffGen) numberFor(s map[string]any, integral bool) json.Number {
	lo, hi := math.Inf(-1), math.Inf(1)
	if g.chance(0.8) {
		if v, ok := s["minimum"]; ok {
			lo = diffNumberValue(diffClassOf(v.(json.Number)))
		}
		if v, ok := s["maximum"]; ok {
			hi = diffNumberValue(diffClassOf(v.(json.Number)))
		}
	}
	return g.numberIn(lo, hi, integral)
}

func diffCount(s map[string]any, name string, absent int) int {
	v, ok := s[name]
	if !ok {
		return absent
	}
	f, err := strconv.ParseFloat(string(v.(json.Number)), 64)
	if err != nil {
		panic(err)
	}
	return int(f)
}

// countsFor returns a length range for a value aimed at a count pair:
// inside the bounds, or just outside one of them.
func (g *diffGen) countsFor(s map[string]any, minName, maxName string) (int, int) {
	lo := diffCount(s, minName, 0)
	hi := max(lo, diffCount(s, maxName, lo+3))
	switch {
	case !g.chance(0.25):
		return lo, hi
	case lo > 0 && g.chance(0.5):
		return lo - 1, lo - 1
	}
	return hi + 1, hi + 1
}

func (g *diffGen) arrayFor(s map[string]any, depth int) []any {
	lo, hi := g.countsFor(s, "minItems", "maxItems")
	n := lo + g.r.IntN(hi-lo+1)
	items, _ := s["items"].(map[string]any)
	out := make([]any, 0, n)
	for range n {
		if len(out) > 0 && s["uniqueItems"] == true && g.chance(0.3) {
			out = append(out, g.respell(diffPick(g, out)))
		} else if items != nil {
			out = append(out, g.valueFor(items, depth-1))
		} else {
			out = append(out, g.value(max(depth-1, 0)))
		}
	}
	return out
}

func (g *diffGen) objectFor(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	for _, name := range diffSortedKeys(props) {
		if g.chance(0.7) {
			out[name] = g.valueFor(props[name].(map[string]any), depth-1)
		}
	}
	if req, ok := s["required"].([]any); ok {
		for _, name := range req {
			if _, done := out[name.(string)]; !done && g.chance(0.85) {
				out[name.(string)] = g.value(max(depth-1, 0))
			}
		}
	}
	if g.chance(0.2) {
		out[diffPick(g, diffNames)] = g.value(max(depth-1, 0))
	}
	return out
}

// encode writes v as JSON text with object members in a random order.
func (g *diffGen) encode(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return append(b, x...)
	case string:
		s, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		return append(b, s...)
	case []any:
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.encode(b, item)
		}
		return append(b, ']')
	case map[string]any:
		keys := diffSortedKeys(x)
		g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.encode(b, k)
			b = append(b, ':')
			b = g.encode(b, x[k])
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("differential: cannot encode %T", v))
}

// mib formats a byte count in MiB.
func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// Paddings of memoryTool: memoryPad gives the largest all-bound catalog
// used here; memoryPadOverDigest (a page of 1,015,698 bytes, still under
// MaxCatalogBytes) fails discovery at the digest's budget.
const (
	memoryPad           = 1_790
	memoryPadOverDigest = 1_800
)

// memoryTool is tool i of the maximum catalog: a description and a padded
// input schema sized so that 256 of them, as one tools/list page, come just
// under MaxCatalogBytes.
func memoryTool(i, pad int) *mcp.Tool {
	input := fmt.Sprintf(`{"type":"object","properties":{"q":{"type":"string","description":%q},`+
		`"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},`+
		`"required":["q"],"additionalProperties":false}`, strings.Repeat("q", pad))
	output := `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`
	return &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: strings.Repeat("d", pad),
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// memoryServer is a go-sdk server with n tools padded by pad bytes twice,
// whose every call answers {"content":[text "ok"],"structuredContent":{"count":1}}
// and only counts (it keeps nothing per call).
func memoryServer(n, pad int) (*mcp.Server, *atomic.Int64) {
	var calls atomic.Int64
	server := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
	for i := range n {
		server.AddTool(memoryTool(i, pad), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}},
				StructuredContent: map[string]any{"count": 1}}, nil
		})
	}
	return server, &calls
}

// memoryBindings binds every tool of memoryServer.
func memoryBindings(n int) map[string]purramcp.ToolBinding {
	bindings := make(map[string]purramcp.ToolBinding, n)
	for i := range n {
		name := fmt.Sprintf("tool_%03d", i)
		bindings[name] = purramcp.ToolBinding{LocalName: name, Scope: purramcp.Unscoped,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Tool " + name}}
	}
	return bindings
}

// sharedConformance is where CI lays the reference project's vectors.
const sharedConformance = "../shared/conformance"

// readVector returns a pinned vector file from testdata/.
func readVector(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("pinned vector %s: %v", name, err)
	}
	return b
}

// decodeStrict decodes a vector file, failing on any field the loader does
// not know, so a changed vector format cannot be half-read.
func decodeStrict(t testing.TB, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("dec.Decode(v): %v", err)
	}
}

// fuzzNoGoroutineGrowth records the goroutine count now and, at the end of
// the iteration (after every later cleanup, so after the session closed),
// waits up to 5s for the count to fall back to it. Register it before the
// server starts.
func fuzzNoGoroutineGrowth(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines outlive the iteration (%d before it)", runtime.NumGoroutine(), before)
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	})
}

// fuzzLimit maps a fuzzed value onto 0 (the default) or 1..max.
func fuzzLimit(v uint32, max int) int {
	if v == 0 {
		return 0
	}
	return 1 + int(v%uint32(max))
}

// fuzzCheckError checks the closed error surface of discovery: nil
// catalog, an *Error with a code in codes and fixed text.
func fuzzCheckError(t *testing.T, catalog *purramcp.Catalog, err error, codes []string, what string) string {
	if catalog != nil {
		t.Fatalf("%s failed but returned a catalog: got %v, want nil", what, catalog)
	}
	var e *purramcp.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %T %v is not an *Error", what, err, err)
	}
	if !slices.Contains(codes, e.Code) {
		t.Fatalf("%s: %v does not contain %q", what, codes, e.Code)
	}
	if got, want := err.Error(), "purramcp: MCP tool boundary rejected the operation: "+e.Code; got != want {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
	if errors.Is(err, purramcp.ErrCanceled) {
		t.Fatalf("%s", what)
	}
	return e.Code
}

// fuzzCheckCatalog checks a discovered catalog against its bindings: a
// 64-hex digest that is the identity digest of the snapshot without it,
// entries sorted by local name, one per binding with its normalized policy,
// and registrations in the same order.
func fuzzCheckCatalog(t *testing.T, catalog *purramcp.Catalog, bindings map[string]purramcp.ToolBinding,
	protocol, what string) {
	if catalog == nil {
		t.Fatalf("%s: got nil", what)
	}
	snap := catalog.Snapshot()
	if !fuzzDigestPattern.MatchString(snap.RevisionDigest) {
		t.Fatalf("%s: %q does not match %v", what, snap.RevisionDigest, fuzzDigestPattern)
	}
	if snap.ProtocolVersion != protocol {
		t.Fatalf("%s: got %q, want %q", what, snap.ProtocolVersion, protocol)
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var identity map[string]any
	if err := json.Unmarshal(raw, &identity); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	delete(identity, "revisionDigest")
	digest, err := purramcp.IdentityDigest(identity)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if snap.RevisionDigest != digest {
		t.Fatalf("%s: digest of the snapshot minus revisionDigest: got %q, want %q", what, snap.RevisionDigest, digest)
	}

	if got := len(snap.Entries); got != len(bindings) {
		t.Fatalf("%s: len = %d, want %d", what, got, len(bindings))
	}
	if !slices.IsSortedFunc(snap.Entries, func(a, b purramcp.ToolEntry) int {
		return bytes.Compare([]byte(a.LocalName), []byte(b.LocalName))
	}) {
		t.Fatalf("%s: entries sorted by local name", what)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != len(bindings) {
		t.Fatalf("%s: len = %d, want %d", what, got, len(bindings))
	}
	for i, e := range snap.Entries {
		b, ok := bindings[e.RemoteName]
		if !ok {
			t.Fatalf("%s: entry %q is not bound", what, e.RemoteName)
		}
		if e.LocalName != b.LocalName {
			t.Fatalf("%s: got %q, want %q", what, e.LocalName, b.LocalName)
		}
		if e.ConcurrencySafe != b.ConcurrencySafe {
			t.Fatalf("%s: got %v, want %v", what, e.ConcurrencySafe, b.ConcurrencySafe)
		}
		if want := (purramcp.ToolPolicy{Mode: "read", Title: fuzzTrimJS(b.Policy.Title), RiskLevel: "read"}); !reflect.DeepEqual(e.Policy, want) {
			t.Fatalf("%s: got %v, want %v", what, e.Policy, want)
		}
		if regs[i].Name != e.LocalName {
			t.Fatalf("%s: got %q, want %q", what, regs[i].Name, e.LocalName)
		}
	}
	if catalog.Stale() {
		t.Fatalf("%s", what)
	}
}

// discoverDefault runs the reference's default discovery.
func discoverDefault(t testing.TB, h sessionHarness, limits purramcp.Limits) (*purramcp.Catalog, error) {
	t.Helper()
	return purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
}

// modernities are both raw-server handshakes: initialize (2025-11-25) and
// server/discover (2026-07-28).
var modernities = []bool{false, true}

// catalogLimitCase runs one catalog-limit case: pages [tool + "next", other] under
// limits fail mcp_catalog_limit_exceeded after wantLists requests.
func catalogLimitCase(t *testing.T, id string, limits purramcp.Limits, wantLists int) {
	f := loadMCPFixture(t)
	other := json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "next", f.Tool), toolsPage(t, "", other)}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, limits)
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
			t.Errorf("%s modern=%v: got %q, want %q", id, modern, got, purramcp.CodeCatalogLimitExceeded)
		}
		lists, calls := h.counts()
		if lists != wantLists {
			t.Errorf("%s modern=%v: tools/list requests: got %v, want %v", id, modern, lists, wantLists)
		}
		if calls != 0 {
			t.Errorf("%s modern=%v: got %v, want 0", id, modern, calls)
		}
	}
}

// uniqueLeavesTool is the i-th tool of a catalog whose schemas share no
// subtree between tools: distinctTool's shape, with every leaf schema
// carrying i (a bound, an enum member or a description), so that the
// monitor's schema cache can share nothing below the roots either.
func uniqueLeavesTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	n := 1000 + i
	input := fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","minLength":1,"maxLength":%[1]d},`+
		`"limit":{"type":"integer","minimum":1,"maximum":%[1]d},`+
		`"tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},`+
		`"shard":{"enum":["primary","replica","r%[1]d"]}},`+
		`"required":["query"],"additionalProperties":false}`, n)
	output := fmt.Sprintf(`{"type":"object","properties":{`+
		`"count":{"type":"integer","minimum":%[1]d},`+
		`"nextCursor":{"type":["string","null"],"maxLength":%[1]d},`+
		`"items":{"type":"array","maxItems":%[1]d,"items":{"type":"object","properties":{`+
		`"id":{"type":"string","minLength":1,"maxLength":%[1]d},`+
		`"kind":{"enum":["document","page","section","k%[1]d"]},`+
		`"title":{"type":"string","maxLength":%[1]d},`+
		`"url":{"type":"string","maxLength":%[1]d},`+
		`"score":{"type":"number","minimum":0,"maximum":%[1]d},`+
		`"field":{"type":"boolean","description":"d%[1]d"},`+
		`"snippet":{"type":"string","maxLength":%[1]d},`+
		`"tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},`+
		`"updated":{"anyOf":[{"type":"integer","minimum":%[1]d},{"type":"null","description":"n%[1]d"}]}},`+
		`"required":["id","kind","title","url","score"],"additionalProperties":false}}},`+
		`"required":["count","items"],"additionalProperties":false}`, n)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index for entries " +
		"that match a full-text query and returns them ranked, with a snippet around each match.",
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// uniqueLeavesCatalog is distinctCatalog with uniqueLeavesTool's tools.
func uniqueLeavesCatalog() (*mcp.Server, map[string]purramcp.ToolBinding) {
	tools := make([]*mcp.Tool, benchCatalogSize)
	bindings := make(map[string]purramcp.ToolBinding, benchCatalogSize)
	for i := range tools {
		tools[i] = uniqueLeavesTool(i)
		bindings[tools[i].Name] = purramcp.ToolBinding{LocalName: tools[i].Name[5:],
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search " + tools[i].Name[5:]}, Scope: purramcp.Unscoped,
			ConcurrencySafe: i%3 != 0}
	}
	return benchServe(benchPageSize, tools...), bindings
}

// connectInMemory connects a client to server over
// mcp.NewInMemoryTransports at version ("" = go-sdk's default) and fails
// unless that version is negotiated. When monitored, it uses the production wiring (the monitor's
// ClientOptions, Transport and Attach), or purra-mcp 1.0.0's reference
// wiring without Transport when version ends in " reference". close ends
// both sides.
func connectInMemory(server *mcp.Server, version string, monitored bool) (
	cs *mcp.ClientSession, monitor *purramcp.CatalogMonitor, close func(), err error) {
	version, reference := strings.CutSuffix(version, " reference")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var opts *mcp.ClientOptions
	if monitored {
		monitor = purramcp.NewCatalogMonitor()
		opts = monitor.ClientOptions(nil)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	var transport mcp.Transport = ct
	if monitored && !reference {
		transport = monitor.Transport(ct)
	}
	cs, err = client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		_ = ss.Close()
		return nil, nil, nil, err
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		_ = cs.Close()
		return nil, nil, nil, fmt.Errorf("negotiated %s, want %s", got, version)
	}
	if monitored {
		if err := monitor.Attach(cs); err != nil {
			return nil, nil, nil, err
		}
	}
	return cs, monitor, func() { _ = cs.Close(); _ = ss.Wait() }, nil
}

// distinctTool is the i-th tool of the distinct-schema catalog: the search
// tool's shape, but every schema differs from every other tool's (a
// property name and bounds carry i), so no two contracts are equal.
func distinctTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	input := fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","minLength":1,"maxLength":%d},`+
		`"limit":{"type":"integer","minimum":1,"maximum":%d},`+
		`"tags":{"type":"array","items":{"type":"string","maxLength":64},"uniqueItems":true,"maxItems":16},`+
		`"shard_%03d":{"enum":["primary","replica"]}},`+
		`"required":["query"],"additionalProperties":false}`, 256+i, 100+i, i)
	output := strings.Replace(benchOutputSchema, `"maxItems": 1000`, fmt.Sprintf(`"maxItems": %d`, 1000+i), 1)
	output = strings.Replace(output, `"snippet": {`, fmt.Sprintf(`"field_%03d": {"type": "boolean"}, "snippet": {`, i), 1)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index for entries " +
		"that match a full-text query and returns them ranked, with a snippet around each match.",
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// distinctCatalog serves benchCatalogSize distinct tools benchPageSize per
// page (32 pages of 8) and binds all of them.
func distinctCatalog() (*mcp.Server, map[string]purramcp.ToolBinding) {
	tools := make([]*mcp.Tool, benchCatalogSize)
	bindings := make(map[string]purramcp.ToolBinding, benchCatalogSize)
	for i := range tools {
		tools[i] = distinctTool(i)
		bindings[tools[i].Name] = purramcp.ToolBinding{LocalName: tools[i].Name[5:],
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search " + tools[i].Name[5:]}, Scope: purramcp.Unscoped,
			ConcurrencySafe: i%3 != 0}
	}
	return benchServe(benchPageSize, tools...), bindings
}

// discoveryWorkload is a catalog the discovery pairs list: its server, the
// bindings and schema policy DiscoverTools is given, and what a complete
// listing holds (the tools, the pages and the last tool's name).
type discoveryWorkload struct {
	server       *mcp.Server
	bindings     map[string]purramcp.ToolBinding
	policy       purramcp.SchemaPolicy
	tools, pages int
	last         string
}

// benchWorkload is the workload of a catalog of benchCatalogSize tools
// docs.search_000 … served benchPageSize per page (distinctCatalog,
// uniqueLeavesCatalog), bound under the default policy.
func benchWorkload(server *mcp.Server, bindings map[string]purramcp.ToolBinding) discoveryWorkload {
	return discoveryWorkload{server: server, bindings: bindings, tools: benchCatalogSize,
		pages: benchCatalogSize / benchPageSize, last: fmt.Sprintf("docs.search_%03d", benchCatalogSize-1)}
}

// interleaveDigest discovers w once on its own session for the digest
// every later discovery must return.
func interleaveDigest(t *testing.T, w discoveryWorkload) string {
	cs, monitor, closeSession, err := connectInMemory(w.server, "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession()
	catalog, err := purramcp.DiscoverTools(context.Background(), cs, "bench", w.bindings,
		purramcp.DiscoveryOptions{Monitor: monitor, Policy: w.policy})
	if err != nil {
		t.Fatal(err)
	}
	return catalog.Snapshot().RevisionDigest
}

// benchTool is the search tool with the given name and description.
func benchTool(name, description string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description,
		InputSchema: json.RawMessage(benchInputSchema), OutputSchema: json.RawMessage(benchOutputSchema)}
}

// benchServe returns a go-sdk server listing tools pageSize per page
// (0: go-sdk's default); every call answers benchCallResult.
func benchServe(pageSize int, tools ...*mcp.Tool) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	for _, tool := range tools {
		server.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return benchCallResult(), nil
		})
	}
	return server
}

// benchCatalogSize is the number of tools (and bindings) of both discovery
// fixtures: MaxTools, served 8 per page over MaxPages pages.
const (
	benchCatalogSize = 256
	benchPageSize    = 8
)

// benchOutputSchema is a search tool's output schema using most of the
// profile's keywords.
const benchOutputSchema = `{
  "type": "object",
  "properties": {
    "count": {"type": "integer", "minimum": 0},
    "nextCursor": {"type": ["string", "null"], "maxLength": 256},
    "items": {
      "type": "array",
      "maxItems": 1000,
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "minLength": 1, "maxLength": 64},
          "kind": {"enum": ["document", "page", "section", "attachment"]},
          "title": {"type": "string", "maxLength": 200},
          "url": {"type": "string", "maxLength": 2048},
          "score": {"type": "number", "minimum": 0, "maximum": 1},
          "snippet": {"type": "string", "maxLength": 1000},
          "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 16},
          "updated": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
        },
        "required": ["id", "kind", "title", "url", "score"],
        "additionalProperties": false
      }
    }
  },
  "required": ["count", "items"],
  "additionalProperties": false
}`

// benchInputSchema is a search tool's input schema: a few properties, one
// required, no others allowed.
const benchInputSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 512},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 64}, "uniqueItems": true, "maxItems": 16}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// benchCallResult is the small structured result every benchmarked call
// returns: one text block and three ranked hits (about 900 bytes of JSON),
// valid under benchOutputSchema.
func benchCallResult() *mcp.CallToolResult {
	items := make([]any, 3)
	for i := range items {
		items[i] = map[string]any{
			"id": fmt.Sprintf("doc-%06d", i), "kind": "document",
			"title":   fmt.Sprintf("Quarterly report %d: revenue, costs and outlook", i),
			"url":     fmt.Sprintf("https://docs.example.com/reports/%06d#summary", i),
			"score":   1 / float64(i+1),
			"snippet": "…the committee approved the budget for the next quarter…",
			"tags":    []any{"finance", "report"}, "updated": 1700000000 + i,
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "3 documents match \"quarterly report\""}},
		StructuredContent: map[string]any{"count": 3, "nextCursor": nil, "items": items},
	}
}

// packageTempDir holds what the package's tests build once (the stdio child
// server); TestMain removes it after every test has run.
var packageTempDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "purramcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "purramcp tests: temporary directory:", err)
		os.Exit(2)
	}
	packageTempDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// listChanged is the notification the monitor counts.
const listChanged = "notifications/tools/list_changed"

// approving discovers the default binding with opts completed by the
// harness's monitor.
func approving(t testing.TB, ctx context.Context, h sessionHarness, opts purramcp.DiscoveryOptions) (*purramcp.Catalog, error) {
	t.Helper()
	opts.Monitor = h.monitor
	return purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), opts)
}

var argsA = json.RawMessage(`{"q":"a"}`)

// discoverWith discovers the fixture tool with bindings edited by edit.
func discoverWith(t testing.TB, h sessionHarness, limits purramcp.Limits, edit func(*purramcp.ToolBinding)) purramcp.ToolDefinition {
	t.Helper()
	bindings := searchBinding()
	b := bindings["remote.search"]
	if edit != nil {
		edit(&b)
	}
	bindings["remote.search"] = b
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
		purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return catalog.Registrations()[0]
}

// ran is what one Run returned and when.
type ran struct {
	res     purramcp.ToolResult
	err     error
	elapsed time.Duration
}

// runAsync starts reg.Run in a goroutine.
func runAsync(ctx context.Context, reg purramcp.ToolDefinition) <-chan ran {
	done := make(chan ran, 1)
	start := time.Now()
	go func() {
		res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
		done <- ran{res, err, time.Since(start)}
	}()
	return done
}

// otherBinding adds the reference's second binding: remote.other → another,
// title "Other", concurrencySafe omitted.
func otherBinding() map[string]purramcp.ToolBinding {
	bindings := searchBinding()
	bindings["remote.other"] = purramcp.ToolBinding{LocalName: "another",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Other"}, Scope: purramcp.Unscoped}
	return bindings
}

// page is a one-page tools/list result from raw tool JSON texts, sent byte
// for byte (toolsPage re-encodes).
func page(nextCursor string, tools ...string) string {
	p := `{"tools":[` + strings.Join(tools, ",") + `]`
	if nextCursor != "" {
		p += `,"nextCursor":` + fmt.Sprintf("%q", nextCursor)
	}
	return p + `}`
}

// otherTool is a second bound tool with a schema unlike the fixture's.
const otherTool = `{"name":"remote.other","description":"Delete a document","inputSchema":{"type":"object",` +
	`"properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}}`

// Installed smoke schemas: the count and write tools of the reference's
// smoke servers.
const (
	smokeCountTool = `{"name":"count","inputSchema":{"type":"object","properties":{},"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}}`
	smokeWriteTool = `{"name":"write","inputSchema":{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{"written":{"type":"boolean"}},"required":["written"],"additionalProperties":false}}`
	// smokeDigest is the installed smoke snapshot's digest at 2025-11-25.
	smokeDigest = "2f3abeae2653d364f7f1b3d3ea4c4bd5e55f64f50db3e7a128ae638adefbeea3"
)

// countBinding is the installed smoke binding: count → count, title "Count".
func countBinding(remote string) map[string]purramcp.ToolBinding {
	return map[string]purramcp.ToolBinding{remote: {LocalName: "count",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Count"}, Scope: purramcp.Unscoped}}
}

type outputVectors struct {
	Profile  string         `json:"profile"`
	Keywords []string       `json:"keywords"`
	Cases    []outputVector `json:"cases"`
}

type outputVector struct {
	Name           string          `json:"name"`
	Schema         json.RawMessage `json:"schema"`
	Text           string          `json:"text"`
	Code           *string         `json:"code"`
	Mode           string          `json:"mode"`
	Limits         map[string]int  `json:"limits"`
	SchemaDigest   string          `json:"schemaDigest"`
	ContractDigest string          `json:"contractDigest"`
}

func loadOutputVectors(t testing.TB) outputVectors {
	var v outputVectors
	decodeStrict(t, readVector(t, "structured_output.json"), &v)
	if got := len(v.Cases); got != 62 {
		t.Fatalf("structured_output.json case count: len = %d, want %d", got, 62)
	}
	return v
}

var fuzzDigestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// fuzzTrimJS is JavaScript's String.prototype.trim: ECMA-262 WhiteSpace
// (Zs, tab, VT, FF, ZWNBSP) and LineTerminator (LF, CR, LS, PS).
func fuzzTrimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return strings.ContainsRune("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff", r) ||
			(r >= 0x2000 && r <= 0x200a)
	})
}

// fuzzPageCodes are the codes discovery may report against a server that
// answers every tools/list with a result: the paging, catalog-limit, name
// and schema codes, never a transport or timeout one.
var fuzzPageCodes = []string{purramcp.CodeBindingMissing, purramcp.CodeCatalogLimitExceeded, purramcp.CodeNameConflict,
	purramcp.CodePaginationInvalid, purramcp.CodeResultInvalid, purramcp.CodeSchemaUnsupported, purramcp.CodeToolUnsupported}

// jsonEqual reports whether got and want are equal JSON values (object
// member order and spacing aside); t fails at once when either is not JSON.
func jsonEqual(t testing.TB, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("not JSON: %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// eventually polls cond every tick until it holds (true) or waitFor has
// passed (false).
func eventually(cond func() bool, waitFor, tick time.Duration) bool {
	deadline := time.Now().Add(waitFor)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
}

// recovered runs f and returns the value it panicked with, nil when it
// returned.
func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}
