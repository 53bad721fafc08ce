package purramcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// rawServer is a scripted JSON-RPC server on the server end of
// mcp.NewInMemoryTransports, for what a go-sdk server never sends: repeated
// cursors, duplicate names, malformed results, list changes before a reply,
// a peer that stops reading (style.md T4).
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
	// call answers tools/call with a raw result, or an error when the string
	// is empty and rpcErr is set.
	call func(args json.RawMessage) (string, *jsonrpc.Error)
	// closeOnCall closes the connection instead of answering tools/call.
	closeOnCall bool
	// stallCalls stops reading once a tools/list was answered, so the
	// client's next write blocks.
	stallCalls bool

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // guards the fields below
	lists   int
	cursors []*string
	calls   []json.RawMessage
	done    chan struct{}
}

// start connects the raw server and a monitored client; the returned session
// and server are closed at cleanup.
func (s *rawServer) start(t testing.TB) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	require.NoError(t, err)
	s.conn, s.done = conn, make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.serve()
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil))
	cs, err := client.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.cancel()
		_ = s.conn.Close() // unblocks a stalled client write first
		_ = cs.Close()
		<-s.done
	})
	require.NoError(t, monitor.Attach(cs))
	return cs, monitor
}

func (s *rawServer) serve() {
	defer close(s.done)
	ctx := s.ctx
	for {
		msg, err := s.conn.Read(ctx)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() || req.Method == "subscriptions/listen" {
			continue // responses, notifications and the long-lived listen
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

func (s *rawServer) capabilities() string {
	if s.noTools {
		return `{}`
	}
	return `{"tools":{}}`
}

func (s *rawServer) answer(req *jsonrpc.Request) (json.RawMessage, error) {
	switch req.Method {
	case "server/discover":
		if !s.modern {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
		}
		return json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":` +
			s.capabilities() + `,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`), nil
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		v, _ := json.Marshal(p.ProtocolVersion)
		return json.RawMessage(`{"protocolVersion":` + string(v) + `,"capabilities":` + s.capabilities() +
			`,"serverInfo":{"name":"raw","version":"1"}}`), nil
	case "ping":
		return json.RawMessage(`{}`), nil
	case "tools/list":
		return s.list(req)
	case "tools/call":
		return s.answerCall(req)
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
	return json.RawMessage(s.pages[i]), nil
}

func (s *rawServer) answerCall(req *jsonrpc.Request) (json.RawMessage, error) {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &p)
	s.mu.Lock()
	s.calls = append(s.calls, p.Arguments)
	s.mu.Unlock()
	if s.closeOnCall {
		_ = s.conn.Close()
		return json.RawMessage(`{}`), nil
	}
	if s.call == nil {
		return json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), nil
	}
	result, rpcErr := s.call(p.Arguments)
	if rpcErr != nil {
		return nil, rpcErr
	}
	return json.RawMessage(result), nil
}

// notifyChanged sends notifications/tools/list_changed.
func (s *rawServer) notifyChanged() {
	_ = s.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/tools/list_changed",
		Params: json.RawMessage(`{}`)})
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
