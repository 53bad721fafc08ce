package purramcp_test

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The raw server: a scripted JSON-RPC server on an in-memory transport, for
// pages, cursors and answers a go-sdk server never sends.

// jsonrpcError is the JSON-RPC error a raw server answers with.
type jsonrpcError = jsonrpc.Error

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
	cs, err := s.startWith(t, monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil), monitor)
	if err != nil {
		t.Fatal(err)
	}
	return cs, monitor
}

// startWith is start with a client of the test's choice, for tests that
// need a client the monitor did not build; it returns the error of
// attaching the monitor.
func (s *rawServer) startWith(t testing.TB, client *mcp.Client, monitor *purramcp.CatalogMonitor) (*mcp.ClientSession, error) {
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
