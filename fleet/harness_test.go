package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// serverDial returns a ServerConfig.Dial that connects srv in memory, a
// fresh server session each time; t's cleanup waits for every session it
// made to end.
func serverDial(t *testing.T, srv *mcp.Server) func(context.Context) (mcp.Transport, error) {
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			_ = ss.Wait()
		}
	})
	return func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}
}

// memServer is an in-memory MCP server a fleet reaches through Dial. Each
// Dial starts a fresh go-sdk server session with the current tools, as a
// restarted process would; Kill ends every live session, and Down makes
// Dial fail until Up.
type memServer struct {
	t     testing.TB
	dials atomic.Int32
	calls atomic.Int32 // tools/call requests received, over every session
	lists atomic.Int32 // tools/list requests received, over every session

	// mu guards the fields below.
	mu           sync.Mutex
	suffix       string // added to units.list's description: a different digest
	down         bool
	sessions     []*mcp.ServerSession
	servers      []*mcp.Server
	block        chan struct{} // when set, units.convert waits for it (or its ctx)
	gate         chan struct{} // when set, tools/list waits for it (or its ctx)
	versions     []string      // the protocol versions the server speaks; nil: go-sdk's
	dieAfterInit bool          // the server's connection ends once the client is initialized
	modernOnly   bool          // initialize is refused (-32022): only server/discover, 2026-07-28, is spoken
}

// newMemServer returns a server serving unitTools("").
func newMemServer(t testing.TB) *memServer {
	m := &memServer{t: t}
	t.Cleanup(m.Kill)
	return m
}

// dial is the ServerConfig.Dial of the server.
func (m *memServer) dial(ctx context.Context) (mcp.Transport, error) {
	m.dials.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, errors.New("memServer: down")
	}
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SupportedProtocolVersions: m.versions}
	st, ct := mcp.NewInMemoryTransports()
	d := &dying{Transport: st}
	dies, modernOnly := m.dieAfterInit, m.modernOnly
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, opts)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				m.calls.Add(1)
			}
			if method == "initialize" && modernOnly {
				return nil, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported protocol version"}
			}
			if method == "tools/list" {
				m.lists.Add(1)
				m.mu.Lock()
				gate := m.gate
				m.mu.Unlock()
				if gate != nil {
					select {
					case <-gate:
					case <-ctx.Done():
					}
				}
			}
			if dies && method != "initialize" && !strings.HasPrefix(method, "notifications/") {
				_ = d.conn.Close() // the first request after the handshake finds the server gone
				return nil, errors.New("memServer: died")
			}
			return next(ctx, method, req)
		}
	})
	for _, tool := range unitTools(m.suffix) {
		if tool.Tool.Name == "units.convert" {
			tool.Handler = m.convert
		}
		srv.AddTool(tool.Tool, tool.Handler)
	}
	ss, err := srv.Connect(ctx, d, nil)
	if err != nil {
		return nil, err
	}
	m.sessions = append(m.sessions, ss)
	m.servers = append(m.servers, srv)
	return ct, nil
}

// dying is a server transport whose connection the test can end
// abruptly, as a crashing process does.
type dying struct {
	mcp.Transport
	conn mcp.Connection
}

// Connect connects and keeps the connection.
func (d *dying) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	d.conn = c
	return c, err
}

// convert answers {"value": 1}, after block is closed when one is set.
func (m *memServer) convert(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	m.mu.Lock()
	block := m.block
	m.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1"}},
		StructuredContent: map[string]any{"value": 1.0}}, nil
}

// Kill ends every live session, as a crash would.
func (m *memServer) Kill() {
	m.mu.Lock()
	sessions := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	for _, ss := range sessions {
		_ = ss.Close()
		_ = ss.Wait()
	}
}

// set changes what the next sessions serve and whether Dial works.
func (m *memServer) set(suffix string, down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.suffix, m.down = suffix, down
}

// addUnbound adds a tool no binding names to every live session's server:
// a list change that leaves the bound catalog as it was.
func (m *memServer) addUnbound(name string) {
	m.mu.Lock()
	servers := m.servers
	m.mu.Unlock()
	for _, srv := range servers {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
}

// memConfig is a server config reaching m, binding both unit tools under
// prefix.
func memConfig(m *memServer, prefix string, timeout time.Duration) fleet.ServerConfig {
	return fleet.ServerConfig{Dial: m.dial, StaleRetries: 2, Limits: purramcp.Limits{Timeout: timeout},
		Tools: map[string]fleet.ToolConfig{
			"units.list":    {As: prefix + "list_units"},
			"units.convert": {As: prefix + "convert_units"},
		}}
}

// fastBackoff keeps recoveries short in tests.
var fastBackoff = fleet.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}

// startFleet builds and starts a fleet, closed when the test ends.
func startFleet(t testing.TB, cfg *fleet.Config, opts fleet.Options) *fleet.Fleet {
	t.Helper()
	f, err := fleet.New(cfg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, f.Start(ctx))
	return f
}

// statusOf returns the status of server id.
func statusOf(t testing.TB, f *fleet.Fleet, id string) fleet.ServerStatus {
	t.Helper()
	for _, s := range f.Status() {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no status for %s", id)
	return fleet.ServerStatus{}
}

// waitFor polls cond every 5ms for at most 10s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until server id is in state with digest (any digest when
// digest is "").
func waitState(t testing.TB, f *fleet.Fleet, id string, state fleet.State, digest string) fleet.ServerStatus {
	t.Helper()
	var st fleet.ServerStatus
	waitFor(t, id+" "+string(state), func() bool {
		st = statusOf(t, f, id)
		return st.State == state && (digest == "" || st.Digest == digest)
	})
	return st
}

// registration returns the registration named name.
func registration(t testing.TB, f *fleet.Fleet, name string) purramcp.ToolDefinition {
	t.Helper()
	for _, d := range f.Registrations() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no registration %s", name)
	return purramcp.ToolDefinition{}
}

// run calls def with args and returns the result's code ("" on success).
func run(t testing.TB, def purramcp.ToolDefinition, args string) string {
	t.Helper()
	res, err := def.Run(context.Background(), json.RawMessage(args), purramcp.ToolContext{})
	require.NoError(t, err)
	return res.ErrorCode
}

// convertArgs are valid arguments of units.convert.
const convertArgs = `{"value": 1}`

// wedged is a server that reads every request and never answers: a
// server wedged at initialize.
type wedged struct {
	mu    sync.Mutex
	conns []io.Closer
}

// newWedged returns a wedged server whose connections close when the test
// ends.
func newWedged(t testing.TB) *wedged {
	w := &wedged{}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, c := range w.conns {
			_ = c.Close()
		}
	})
	return w
}

// dial is the ServerConfig.Dial of the wedged server.
func (w *wedged) dial(ctx context.Context) (mcp.Transport, error) {
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.conns = append(w.conns, conn)
	w.mu.Unlock()
	go func() { // ends when either side closes
		for {
			if _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	return ct, nil
}
