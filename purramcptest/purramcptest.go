// Package purramcptest runs an MCP server in memory for tests of hosts and
// agent-framework integrations built on purramcp.
//
// [Start] serves the given tools from a real go-sdk server over
// mcp.NewInMemoryTransports, connects a client the monitor built
// ([purramcp.CatalogMonitor.NewClient]), attaches the monitor and closes everything when the test
// ends. The server counts the requests it receives, so a test can assert
// that exactly one tools/call reached it per model tool call:
//
//	srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
//		Tool:    &mcp.Tool{Name: "remote.search", InputSchema: schema},
//		Handler: search,
//	})
//	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{
//		"remote.search": purramcptest.Binding("search"),
//	}, purramcp.DiscoveryOptions{})
//
// [NewFixture] starts a server with one tool per outcome an integration
// renders, and [Conformance] checks the rules every integration shares
// (codes shown as {"error":"mcp_..."}, host failures, call ids,
// cancellation, stale catalogs and a changing source, the ConcurrencySafe
// gate) against an integration's [Adapter]:
//
//	func TestConformance(t *testing.T) {
//		purramcptest.Conformance(t, purramcptest.ConformanceOptions{UnknownTool: true},
//			func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
//				tb, err := purraopenai.NewToolbox(src, purraopenai.Options{Call: hooks.Call, OnHostError: hooks.OnHostError})
//				if err != nil {
//					t.Fatal(err)
//				}
//				return myAdapter{tb} // Declared, Invoke and Refresh over tb
//			})
//	}
package purramcptest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// A Tool is one tool the server serves: its definition, sent as it is, and
// the handler that answers its tools/call requests.
type Tool struct {
	// Tool is the definition the server lists, schemas sent as they are.
	Tool *mcp.Tool
	// Handler answers the tool's tools/call requests.
	Handler mcp.ToolHandler
}

// Options configures [Start]. The zero value negotiates go-sdk's default
// protocol version with default client options.
type Options struct {
	// ProtocolVersion is the version the client asks for; "" is go-sdk's
	// default (2026-07-28).
	ProtocolVersion string
	// Client is the host's own client options, which
	// [purramcp.CatalogMonitor.NewClient] composes with the monitor's; nil
	// means none.
	Client *mcp.ClientOptions
	// Server is the server's options; nil advertises the tools capability
	// with listChanged.
	Server *mcp.ServerOptions
}

// A Server is a go-sdk MCP server connected in memory to a client session
// whose monitor is attached. Its methods are safe for concurrent use.
type Server struct {
	// MCP is the go-sdk server. Adding or removing a tool on it sends
	// notifications/tools/list_changed, which makes earlier catalogs stale.
	MCP *mcp.Server
	// Session is the client session, already initialized (nil from
	// [NewServer]).
	Session *mcp.ClientSession
	// Monitor is attached to Session (nil from [NewServer]).
	Monitor *purramcp.CatalogMonitor

	mu        sync.Mutex // guards the fields below
	lists     int
	arguments []json.RawMessage // of every tools/call received, in order
}

// Start serves tools in memory and returns the connected server. The client
// session and the server session are closed when tb's test ends. It fails
// tb at once when the session cannot be set up.
func Start(tb testing.TB, opts Options, tools ...Tool) *Server {
	tb.Helper()
	s := NewServer(opts, tools...)
	s.Session, s.Monitor = Connect(tb, s.MCP, opts)
	return s
}

// NewServer is [Start] without the connection: a counting server serving
// tools, whose Session and Monitor are nil. A test connects it itself, in
// memory with [Connect] or over HTTP with mcp.NewStreamableHTTPHandler
// serving MCP, as many times as it needs; every session counts.
func NewServer(opts Options, tools ...Tool) *Server {
	serverOpts := opts.Server
	if serverOpts == nil {
		serverOpts = &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true}}}
	}
	s := &Server{MCP: mcp.NewServer(&mcp.Implementation{Name: "purramcptest", Version: "1"}, serverOpts)}
	s.MCP.AddReceivingMiddleware(s.count)
	for _, t := range tools {
		s.MCP.AddTool(t.Tool, t.Handler)
	}
	return s
}

// Connect connects server in memory to a new client session with the
// production wiring: a client a fresh monitor built (with opts.Client),
// its Transport, RequireTransport and Attach. When opts.ProtocolVersion is set,
// it fails tb unless that version is the one negotiated. opts.Server is
// not used. Both sessions are closed when tb's test ends; any failure
// fails tb at once.
func Connect(tb testing.TB, server *mcp.Server, opts Options) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
	tb.Helper()
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), serverTransport, nil)
	if err != nil {
		tb.Fatalf("purramcptest: server connect: %v", err)
	}
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "purramcptest-host", Version: "1"}, opts.Client)
	cs, err := client.Connect(context.Background(), monitor.Transport(clientTransport),
		&mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion})
	if err != nil {
		_ = ss.Close()
		tb.Fatalf("purramcptest: client connect: %v", err)
	}
	tb.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	if got := cs.InitializeResult().ProtocolVersion; opts.ProtocolVersion != "" && got != opts.ProtocolVersion {
		tb.Fatalf("purramcptest: negotiated %s, want %s", got, opts.ProtocolVersion)
	}
	monitor.RequireTransport()
	if err := monitor.Attach(cs); err != nil {
		tb.Fatalf("purramcptest: attach: %v", err)
	}
	return cs, monitor
}

// count records every tools/list and tools/call request the server receives.
func (s *Server) count(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			s.mu.Lock()
			s.lists++
			s.mu.Unlock()
		case "tools/call":
			var args json.RawMessage
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				args = append(json.RawMessage(nil), p.Arguments...)
			}
			s.mu.Lock()
			s.arguments = append(s.arguments, args)
			s.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// Discover runs [purramcp.DiscoverTools] over the session with serverID
// "test" and the server's monitor (opts.Monitor is replaced), and fails tb
// when discovery fails.
func (s *Server) Discover(tb testing.TB, bindings map[string]purramcp.ToolBinding,
	opts purramcp.DiscoveryOptions) *purramcp.Catalog {
	tb.Helper()
	opts.Monitor = s.Monitor
	catalog, err := purramcp.DiscoverTools(tb.Context(), s.Session, "test", bindings, opts)
	if err != nil {
		tb.Fatalf("purramcptest: discover: %v", err)
	}
	return catalog
}

// Lists returns the number of tools/list requests the server has received.
func (s *Server) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// Calls returns the number of tools/call requests the server has received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.arguments)
}

// Arguments returns a copy of the argument text of every tools/call the
// server has received, in order (nil where a request had none).
func (s *Server) Arguments() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]json.RawMessage, len(s.arguments))
	for i, a := range s.arguments {
		out[i] = append(json.RawMessage(nil), a...)
	}
	return out
}

// Binding returns a read binding of a remote tool to local with title local
// and no scope check ([purramcp.Unscoped]).
func Binding(local string) purramcp.ToolBinding {
	return purramcp.ToolBinding{LocalName: local,
		Policy: purramcp.ToolPolicy{Mode: "read", Title: local}, Scope: purramcp.Unscoped}
}

// Text returns a handler that answers every call with the given text blocks
// and structured content (nil for none).
func Text(structured map[string]any, text ...string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		content := make([]mcp.Content, len(text))
		for i, t := range text {
			content[i] = &mcp.TextContent{Text: t}
		}
		res := &mcp.CallToolResult{Content: content}
		if structured != nil {
			res.StructuredContent = structured
		}
		return res, nil
	}
}

// WaitStale waits until catalog is stale, as it becomes once the server's
// notifications/tools/list_changed has arrived (asynchronously, after the
// server's tool list changed), and fails tb after ten seconds.
func WaitStale(tb testing.TB, catalog *purramcp.Catalog) {
	tb.Helper()
	deadline := time.Now().Add(waitLimit)
	for !catalog.Stale() {
		if time.Now().After(deadline) {
			tb.Fatal("purramcptest: the catalog never became stale")
		}
		time.Sleep(time.Millisecond)
	}
}
