package purramcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// everythingServer is the pattern of @modelcontextprotocol/server-everything
// (and many servers built on the TypeScript SDK's McpServer): a go-sdk server
// that adds a tool from its InitializedHandler, so go-sdk announces
// notifications/tools/list_changed (10ms later) while the host's first
// discovery is running.
//
// With gated set the race is made deterministic: the client transport holds
// the notification back until the client has sent its first tools/list, and
// the server answers that first tools/list only once the client's monitor
// has counted the notification. The first discovery then always sees the
// change between its revision read and its first page.
//
// The session negotiates 2025-11-25: under 2026-07-28 there is no
// initialized notification, so no InitializedHandler runs.
type everythingServer struct {
	server  *mcp.Server
	monitor *purramcp.CatalogMonitor
	session *mcp.ClientSession

	mu    sync.Mutex
	lists int
}

func newEverythingServer(t *testing.T, gated bool) *everythingServer {
	t.Helper()
	f := loadMCPFixture(t)
	e := &everythingServer{monitor: purramcp.NewCatalogMonitor()}
	// counted closes once the monitor has counted a list change: the
	// monitor's handler counts before it calls the host's.
	counted := make(chan struct{})
	var countedOnce sync.Once
	hostOptions := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		countedOnce.Do(func() { close(counted) })
	}}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	e.server = mcp.NewServer(&mcp.Implementation{Name: "everything", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
			e.server.AddTool(sdkTool(t, withField(t, f.Tool, "name", "late.tool")), handler)
		},
	})
	e.server.AddTool(sdkTool(t, f.Tool), handler)
	e.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				e.mu.Lock()
				e.lists++
				first := e.lists == 1
				e.mu.Unlock()
				if gated && first {
					select { // until the client's monitor has counted the change
					case <-counted:
					case <-ctx.Done():
					}
				}
			}
			return next(ctx, method, req)
		}
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var transport mcp.Transport = ct
	if gated {
		transport = &gatedTransport{Transport: ct, listSent: make(chan struct{}), closed: make(chan struct{})}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, e.monitor.ClientOptions(hostOptions))
	e.session, err = client.Connect(context.Background(), e.monitor.Transport(transport),
		&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.session.Close()
		_ = ss.Wait()
	})
	if err := e.monitor.Attach(e.session); err != nil {
		t.Fatalf("e.monitor.Attach(e.session): %v", err)
	}
	return e
}

func (e *everythingServer) listCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lists
}

// gatedTransport delays delivering notifications/tools/list_changed to the
// client until the client has written a tools/list request.
type gatedTransport struct {
	mcp.Transport
	listSent  chan struct{}
	closed    chan struct{}
	sentOnce  sync.Once
	closeOnce sync.Once
}

func (g *gatedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Connection: c, g: g}, nil
}

type gatedConn struct {
	mcp.Connection
	g *gatedTransport
}

func (c *gatedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" {
		c.g.sentOnce.Do(func() { close(c.g.listSent) })
	}
	return c.Connection.Write(ctx, msg)
}

func (c *gatedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == listChanged {
		select {
		case <-c.g.listSent:
		case <-c.g.closed:
		case <-ctx.Done():
		}
	}
	return msg, err
}

func (c *gatedConn) Close() error {
	c.g.closeOnce.Do(func() { close(c.g.closed) })
	return c.Connection.Close()
}

// TestStaleRetries_ServerEverythingPattern: a server that announces a list
// change right after initialization fails the first discovery
// mcp_catalog_stale without retries; with StaleRetries: 2 the host binds, on
// the second attempt, a catalog that saw no change.
func TestStaleRetries_ServerEverythingPattern(t *testing.T) {
	bindings := otherBinding()
	delete(bindings, "remote.other")
	bindings["late.tool"] = purramcp.ToolBinding{LocalName: "late", Scope: purramcp.Unscoped,
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Late"}}

	e := newEverythingServer(t, true)
	catalog, err := purramcp.DiscoverTools(t.Context(), e.session, "everything", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: e.monitor})
	if catalog != nil {
		t.Errorf("catalog = %v, want nil", catalog)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
		t.Errorf("without retries: got %q, want %q", got, purramcp.CodeCatalogStale)
	}
	if got := e.listCount(); got != 1 {
		t.Errorf("e.listCount() = %v, want %v", got, 1)
	}

	var events []purramcp.Event
	observe := func(_ context.Context, ev purramcp.Event) {
		if ev.Start.IsZero() {
			t.Errorf("ev.Start.IsZero() is true")
		}
		ev.Duration, ev.Start = 0, time.Time{}
		events = append(events, ev)
	}
	e = newEverythingServer(t, true)
	catalog, err = purramcp.DiscoverTools(t.Context(), e.session, "everything", bindings,
		purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: 2, Observer: observe})
	if err != nil {
		t.Fatalf("with StaleRetries: 2: %v", err)
	}
	if catalog.Stale() {
		t.Errorf("catalog.Stale() is true")
	}
	if got := e.listCount(); got != 2 {
		t.Errorf("one listing per attempt, no more: got %v, want %v", got, 2)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != 2 {
		t.Fatalf("the tool added after initialization is bound too: len = %d, want %d", got, 2)
	}
	res, err := regs[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	digest := catalog.Snapshot().RevisionDigest
	if got, want := events[:2], []purramcp.Event{
		{Kind: "discover", ServerID: "everything", Code: purramcp.CodeCatalogStale, Attempt: 1, Pages: 1,
			ProtocolVersion: "2025-11-25"},
		{Kind: "discover", ServerID: "everything", RevisionDigest: digest, Attempt: 2, Pages: 1,
			ProtocolVersion: "2025-11-25"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("events[:2] = %v, want %v", got, want)
	}

	// Ungated, the race goes either way; with retries it always binds.
	for range 3 {
		e := newEverythingServer(t, false)
		catalog, err := purramcp.DiscoverTools(t.Context(), e.session, "everything", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: 2})
		if err != nil {
			t.Fatal(err)
		}
		if catalog == nil {
			t.Errorf("catalog = nil, want non-nil")
		}
		if got := e.listCount(); got > 2 {
			t.Errorf("e.listCount() = %v, want <= %v", got, 2)
		}
	}
}

// TestStaleRetries_InspectCatalog: the inspector honours the option.
func TestStaleRetries_InspectCatalog(t *testing.T) {
	e := newEverythingServer(t, true)
	report, err := purramcp.InspectCatalog(t.Context(), e.session, "everything", purramcp.DiscoveryOptions{Monitor: e.monitor})
	if report != nil {
		t.Errorf("report = %v, want nil", report)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeCatalogStale)
	}

	e = newEverythingServer(t, true)
	report, err = purramcp.InspectCatalog(t.Context(), e.session, "everything",
		purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(report.Tools); got != 2 {
		t.Fatalf("len(report.Tools) = %d, want %d", got, 2)
	}
	if got, want := []string{report.Tools[0].Name, report.Tools[1].Name}, []string{"late.tool", "remote.search"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	catalog, err := purramcp.DiscoverTools(t.Context(), e.session, "everything", report.Bindings,
		purramcp.DiscoveryOptions{Monitor: e.monitor})
	if err != nil {
		t.Fatal(err)
	}
	if want := catalog.Snapshot().RevisionDigest; report.RevisionDigest != want {
		t.Errorf("report.RevisionDigest = %q, want %q", report.RevisionDigest, want)
	}

	for _, n := range []int{-1, 9} {
		_, err := purramcp.InspectCatalog(t.Context(), e.session, "everything", purramcp.DiscoveryOptions{Monitor: e.monitor, StaleRetries: n})
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("StaleRetries %d: got %q, want %q", n, got, purramcp.CodeBindingInvalid)
		}
	}
}

// TestStaleRetries_Range: 0..8, else mcp_binding_invalid before any request.
func TestStaleRetries_Range(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for _, n := range []int{-1, 9, 1 << 40} {
		catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: n})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("StaleRetries %d: got %q, want %q", n, got, purramcp.CodeBindingInvalid)
		}
	}
	lists, _ := h.counts()
	if lists != 0 {
		t.Errorf("lists = %v, want 0", lists)
	}
	for _, n := range []int{0, 1, 8} {
		_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: n})
		if err != nil {
			t.Errorf("StaleRetries %d: %v", n, err)
		}
	}
}

// TestStaleRetries_Exhausted: a server that changes on every attempt costs
// StaleRetries+1 listings, then fails mcp_catalog_stale.
func TestStaleRetries_Exhausted(t *testing.T) {
	f := loadMCPFixture(t)
	for _, retries := range []int{0, 2, 8} {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
		approvals := 0
		var attempts []int
		catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: retries,
			Approve: func(context.Context, purramcp.Snapshot) error {
				approvals++
				h.monitor.OnNotification(listChanged)
				return nil
			},
			Observer: func(_ context.Context, e purramcp.Event) { attempts = append(attempts, e.Attempt) }})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
			t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeCatalogStale)
		}
		if want := retries + 1; approvals != want {
			t.Errorf("approvals = %v, want %v", approvals, want)
		}
		lists, _ := h.counts()
		if want := retries + 1; lists != want {
			t.Errorf("lists = %v, want %v", lists, want)
		}
		want := make([]int, retries+1)
		for i := range want {
			want[i] = i + 1
		}
		if !reflect.DeepEqual(attempts, want) {
			t.Errorf("attempts = %v, want %v", attempts, want)
		}
	}
}

// TestStaleRetries_OnlyForListChanges: no other failure is retried, a
// canceled ctx included, and nothing is rediscovered after the return.
func TestStaleRetries_OnlyForListChanges(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id   string
		raw  *rawServer
		want string
	}{
		{"protocol_error", &rawServer{pages: []string{page("", string(f.Tool))}, listError: &jsonrpc.Error{Code: -32000, Message: secret}},
			purramcp.CodeProtocolError},
		{"pagination", &rawServer{pages: []string{page("p")}}, purramcp.CodePaginationInvalid},
		{"binding_missing", &rawServer{pages: []string{page("", otherTool)}}, purramcp.CodeBindingMissing},
		{"schema", &rawServer{pages: []string{page("", `{"name":"remote.search","inputSchema":{"type":"string"}}`)}}, purramcp.CodeSchemaUnsupported},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, tc.raw)
			_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: 8})
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, got, tc.want)
			}
			lists, _ := h.counts()
			if lists > 2 {
				t.Errorf("%s: one attempt: got %v, want <= %v", tc.id, lists, 2)
			} // pagination reads two pages
			if tc.id != "pagination" {
				if lists != 1 {
					t.Errorf("%v: got %v, want %v", tc.id, lists, 1)
				}
			}
		})
	}

	// A change, then a canceled ctx: the change would be retried, the
	// cancellation ends it.
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	ctx, cancel := context.WithCancel(t.Context())
	approvals := 0
	_, err := approving(t, ctx, h, purramcp.DiscoveryOptions{StaleRetries: 8, Approve: func(context.Context, purramcp.Snapshot) error {
		approvals++
		h.monitor.OnNotification(listChanged)
		cancel()
		return nil
	}})
	if !reflect.DeepEqual(err, purramcp.ErrCanceled) {
		t.Errorf("err = %v, want %v", err, purramcp.ErrCanceled)
	}
	if approvals != 1 {
		t.Errorf("approvals = %v, want %v", approvals, 1)
	}

	// After the return: the catalog turns stale and nothing is listed again.
	synctest.Test(t, func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		h := sdkHarness(t, srv, "")
		catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{StaleRetries: 8})
		if err != nil {
			t.Fatal(err)
		}
		srv.server.AddTool(sdkTool(t, json.RawMessage(otherTool)), srv.call)
		awaitServerNotify()
		if !catalog.Stale() {
			t.Fatalf("catalog.Stale() is false")
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeCatalogStale {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeCatalogStale)
		}
		lists, calls := h.counts()
		if lists != 1 {
			t.Errorf("no implicit rediscovery: got %v, want %v", lists, 1)
		}
		if calls != 0 {
			t.Errorf("calls = %v, want 0", calls)
		}
	})
}
