package purramcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Valid W3C trace context values.
const (
	testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	testTracestate  = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
)

// traceKey carries the traceparent a mapPropagator injects, so the test
// proves the caller's ctx reaches it.
type traceKey struct{}

// mapPropagator injects the traceparent found in ctx, plus fixed extras.
type mapPropagator struct{ extra map[string]string }

func (p mapPropagator) Inject(ctx context.Context, carrier map[string]string) {
	if v, ok := ctx.Value(traceKey{}).(string); ok {
		carrier["traceparent"] = v
	}
	for k, v := range p.extra {
		carrier[k] = v
	}
}

// metaServer is the fixture server recording the _meta of every tools/call
// as the server decoded it, without the io.modelcontextprotocol/ keys go-sdk
// itself adds under 2026-07-28 (nil when nothing else is left).
type metaServer struct {
	*sdkServer
	mu    sync.Mutex
	metas []mcp.Meta
}

func newMetaServer(t *testing.T) *metaServer {
	t.Helper()
	s := &metaServer{sdkServer: newSDKServer(t, nil, loadMCPFixture(t).Tool)}
	s.MCP.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				meta := hostMeta(p.Meta)
				s.mu.Lock()
				s.metas = append(s.metas, meta)
				s.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// hostMeta is the _meta of a request without the keys go-sdk itself sets
// (io.modelcontextprotocol/...): what the host sent, nil when nothing.
func hostMeta(m mcp.Meta) mcp.Meta {
	var meta mcp.Meta
	for k, v := range m {
		if !strings.HasPrefix(k, "io.modelcontextprotocol/") {
			if meta == nil {
				meta = mcp.Meta{}
			}
			meta[k] = v
		}
	}
	return meta
}

// TestTracePropagator_Meta: the traceparent of the caller's ctx arrives in
// the server's _meta with a valid tracestate; other keys are dropped; the
// arguments, the result and the digest are those without a propagator.
func TestTracePropagator_Meta(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		s := newMetaServer(t)
		h := sdkHarness(t, s.sdkServer, version)
		p := mapPropagator{extra: map[string]string{"tracestate": testTracestate, "baggage": "user=secret", "x": "y"}}
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, TracePropagator: p})
		if err != nil {
			t.Fatal(err)
		}
		if version == purramcp.ProtocolVersion20251125 {
			if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
				t.Errorf("the digest is unaffected: got %q, want %q", got, f.RevisionDigest)
			}
		}
		ctx := context.WithValue(t.Context(), traceKey{}, testTraceparent)
		res, err := catalog.Registrations()[0].Run(ctx, argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
		}
		if got, want := string(s.lastArguments()), `{"q":"a"}`; !jsonEqual(t, got, want) {
			t.Errorf("got %s, want JSON equal to %s", got, want)
		}
		// Without a traceparent in ctx nothing is sent, tracestate included.
		res, err = catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
		}
		// Invalid arguments never reach the propagator's request.
		res, err = catalog.Registrations()[0].Run(ctx, json.RawMessage(`{"q":"toolong"}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeInvalidArguments)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if want := []mcp.Meta{{"traceparent": testTraceparent, "tracestate": testTracestate}, nil}; !reflect.DeepEqual(s.metas, want) {
			t.Errorf("s.metas = %v, want %v", s.metas, want)
		}
	})
}

// TestTracePropagator_Rejected: a malformed traceparent sends no _meta; a
// malformed or oversized tracestate is dropped alone.
func TestTracePropagator_Rejected(t *testing.T) {
	s := newMetaServer(t)
	h := sdkHarness(t, s.sdkServer, purramcp.ProtocolVersion20251125)
	cases := []struct {
		parent, state string
		want          mcp.Meta
	}{
		{testTraceparent, "", mcp.Meta{"traceparent": testTraceparent}},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", "",
			mcp.Meta{"traceparent": "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later"}},
		{testTraceparent, strings.Repeat("a", 513), mcp.Meta{"traceparent": testTraceparent}},
		{testTraceparent, "k=v\n", mcp.Meta{"traceparent": testTraceparent}},
		{testTraceparent, strings.Repeat("a", 512), mcp.Meta{"traceparent": testTraceparent, "tracestate": strings.Repeat("a", 512)}},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", testTracestate, nil},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", testTracestate, nil},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", testTracestate, nil},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", testTracestate, nil},
		{testTraceparent + "-x", testTracestate, nil},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", testTracestate, nil},
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", testTracestate, nil},
		{"", testTracestate, nil},
	}
	for _, tc := range cases {
		p := mapPropagator{extra: map[string]string{"tracestate": tc.state}}
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, TracePropagator: p})
		if err != nil {
			t.Fatal(err)
		}
		res, err := catalog.Registrations()[0].Run(context.WithValue(t.Context(), traceKey{}, tc.parent), argsA,
			purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := len(s.metas); got != len(cases) {
		t.Fatalf("len(s.metas) = %d, want %d", got, len(cases))
	}
	for i, tc := range cases {
		if !reflect.DeepEqual(s.metas[i], tc.want) {
			t.Errorf("%q %q: got %v, want %v", tc.parent, tc.state, s.metas[i], tc.want)
		}
	}
}

// frameRecorder is a writer that keeps every line the client writes.
type frameRecorder struct {
	w  io.WriteCloser
	mu sync.Mutex
	b  bytes.Buffer
}

func (r *frameRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.b.Write(p)
	r.mu.Unlock()
	return r.w.Write(p)
}

func (r *frameRecorder) Close() error { return r.w.Close() }

// callFrames returns the client's tools/call lines.
func (r *frameRecorder) callFrames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.b.Bytes()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"method":"tools/call"`) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// TestTracePropagator_WireUnchanged: without a propagator, and with one
// that finds no trace context, the tools/call frame is byte for byte the
// one purra-mcp 1.0.0's wiring sends; with a trace context only _meta is
// added.
func TestTracePropagator_WireUnchanged(t *testing.T) {
	s := newSDKServer(t, nil, loadMCPFixture(t).Tool)
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	rec := &frameRecorder{w: clientW}
	ss, err := s.MCP.Connect(t.Context(), &mcp.IOTransport{Reader: serverR, Writer: serverW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := purramcp.NewCatalogMonitor()
	client := m.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := m.Connect(t.Context(), client, &mcp.IOTransport{Reader: clientR, Writer: rec},
		&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	ctx := context.WithValue(t.Context(), traceKey{}, testTraceparent)
	for _, p := range []purramcp.TracePropagator{nil, mapPropagator{}, mapPropagator{}} {
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: m, TracePropagator: p})
		if err != nil {
			t.Fatal(err)
		}
		runCtx := t.Context()
		if p != nil && len(rec.callFrames()) == 2 {
			runCtx = ctx // the third call carries a trace context
		}
		res, err := catalog.Registrations()[0].Run(runCtx, argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
		}
	}
	if got, want := rec.callFrames(), []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remote.search","arguments":{"q":"a"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"remote.search","arguments":{"q":"a"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"traceparent":"` + testTraceparent +
			`"},"name":"remote.search","arguments":{"q":"a"}}}`,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("rec.callFrames() = %v, want %v", got, want)
	}
}

// TestEvent_Transport: the Event names the transport Connect wrapped, and
// the accepted protocol version.
func TestEvent_Transport(t *testing.T) {
	f := loadMCPFixture(t)
	var mu sync.Mutex
	var got []purramcp.Event
	observe := func(_ context.Context, e purramcp.Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}
	type connected struct {
		cs *mcp.ClientSession
		m  *purramcp.CatalogMonitor
	}
	discoverAndRun := func(t *testing.T, c connected) {
		cs, m := c.cs, c.m
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: m, Observer: observe})
		if err != nil {
			t.Fatal(err)
		}
		_, err = catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
	}
	connect := func(t *testing.T, srv *mcp.Server, ct mcp.Transport, st mcp.Transport) connected {
		if st != nil {
			ss, err := srv.Connect(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ss.Wait() })
		}
		m := purramcp.NewCatalogMonitor()
		client := m.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cs, err := m.Connect(t.Context(), client, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return connected{cs, m}
	}
	t.Run("memory", func(t *testing.T) {
		st, ct := mcp.NewInMemoryTransports()
		discoverAndRun(t, connect(t, newSDKServer(t, nil, f.Tool).MCP, ct, st))
	})
	t.Run("stdio", func(t *testing.T) {
		clientR, serverW := io.Pipe()
		serverR, clientW := io.Pipe()
		discoverAndRun(t, connect(t, newSDKServer(t, nil, f.Tool).MCP, &mcp.IOTransport{Reader: clientR, Writer: clientW},
			&mcp.IOTransport{Reader: serverR, Writer: serverW}))
	})
	t.Run("http", func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
			&mcp.StreamableHTTPOptions{Stateless: true}))
		tr := &http.Transport{}
		t.Cleanup(func() { hs.Close(); tr.CloseIdleConnections() })
		discoverAndRun(t, connect(t, nil, &mcp.StreamableClientTransport{Endpoint: hs.URL,
			HTTPClient: &http.Client{Transport: tr}}, nil))
	})
	t.Run("unknown", func(t *testing.T) {
		plain := purramcp.NewCatalogMonitor()
		client := plain.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := newSDKServer(t, nil, f.Tool).MCP.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Wait() })
		cs, err := client.Connect(t.Context(), ct, nil) // not through the monitor's Transport
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if err := plain.Attach(cs); err != nil {
			t.Fatalf("plain.Attach(cs): %v", err)
		}
		discoverAndRun(t, connected{cs, plain})
	})
	type kind struct{ Kind, Version, Transport string }
	var kinds []kind
	for _, e := range got {
		kinds = append(kinds, kind{e.Kind, e.ProtocolVersion, e.Transport})
	}
	if want := []kind{
		{"discover", "2026-07-28", "memory"}, {"call", "2026-07-28", "memory"},
		{"discover", "2026-07-28", "stdio"}, {"call", "2026-07-28", "stdio"},
		{"discover", "2026-07-28", "http"}, {"call", "2026-07-28", "http"},
		{"discover", "2026-07-28", ""}, {"call", "2026-07-28", ""},
	}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
}

// startKey marks the ctx a CallStart returned.
type startKey struct{}

// TestCallStart: with an Observer, CallStart runs at the start of each Run,
// before any request, with the call's identity and no outcome; the
// traceparent the request carries is read from the ctx it returned, and the
// call's end Event gets that ctx; a nil return keeps the caller's ctx; a
// Run refused before any request still starts and ends. Without an
// Observer it is never called and the request is the one without it.
func TestCallStart(t *testing.T) {
	const startedParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"
	forEachVersion(t, func(t *testing.T, version string) {
		s := newMetaServer(t)
		h := sdkHarness(t, s.sdkServer, version)
		var (
			mu       sync.Mutex
			starts   []purramcp.Event
			callsAt  []int
			ends     []purramcp.Event
			endMarks []any
			keep     bool // CallStart returns nil
		)
		start := func(ctx context.Context, e purramcp.Event) context.Context {
			_, calls := s.counts()
			mu.Lock()
			defer mu.Unlock()
			starts, callsAt = append(starts, e), append(callsAt, calls)
			if keep {
				return nil
			}
			return context.WithValue(context.WithValue(ctx, traceKey{}, startedParent), startKey{}, len(starts))
		}
		observe := func(ctx context.Context, e purramcp.Event) {
			if e.Kind != purramcp.EventCall {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ends, endMarks = append(ends, e), append(endMarks, ctx.Value(startKey{}))
		}
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, Observer: observe, CallStart: start, TracePropagator: mapPropagator{}})
		if err != nil {
			t.Fatal(err)
		}
		reg := catalog.Registrations()[0]
		ctx := context.WithValue(t.Context(), traceKey{}, testTraceparent)
		call := purramcp.ToolContext{CallID: "c1", RunID: "r1"}
		for i, args := range []json.RawMessage{argsA, json.RawMessage(`{"q":"toolong"}`), argsA} {
			mu.Lock()
			keep = i == 2
			mu.Unlock()
			if _, err := reg.Run(ctx, args, call); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(starts) != 3 || len(ends) != 3 {
			t.Fatalf("got %d starts and %d ends, want 3 and 3", len(starts), len(ends))
		}
		for i, e := range starts {
			want := purramcp.Event{Kind: purramcp.EventCallStart, ServerID: "fixture", RevisionDigest: catalog.Snapshot().RevisionDigest,
				LocalName: "search", RemoteName: "remote.search", CallID: "c1", RunID: "r1",
				ProtocolVersion: h.monitor.ProtocolVersion(), Transport: purramcp.TransportMemory, Start: ends[i].Start}
			if !reflect.DeepEqual(e, want) {
				t.Errorf("start %d = %+v, want %+v", i, e, want)
			}
		}
		if want := []int{0, 1, 1}; !reflect.DeepEqual(callsAt, want) {
			t.Errorf("tools/call requests the server had seen at each start = %v, want %v", callsAt, want)
		}
		if want := []any{1, 2, nil}; !reflect.DeepEqual(endMarks, want) {
			t.Errorf("the end Events' ctx marks = %v, want %v", endMarks, want)
		}
		if got := []string{ends[0].Code, ends[1].Code, ends[2].Code}; !reflect.DeepEqual(got, []string{"", purramcp.CodeInvalidArguments, ""}) {
			t.Errorf("end codes = %q", got)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if want := []mcp.Meta{{"traceparent": startedParent}, {"traceparent": testTraceparent}}; !reflect.DeepEqual(s.metas, want) {
			t.Errorf("s.metas = %v, want %v", s.metas, want)
		}
	})
	t.Run("without_Observer", func(t *testing.T) {
		s := newMetaServer(t)
		h := sdkHarness(t, s.sdkServer, "")
		called := 0
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, TracePropagator: mapPropagator{},
				CallStart: func(ctx context.Context, _ purramcp.Event) context.Context { called++; return ctx }})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{}); err != nil || res.ErrorCode != "" {
			t.Fatalf("Run: %v %q", err, res.ErrorCode)
		}
		if called != 0 {
			t.Errorf("CallStart was called %d times without an Observer", called)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if want := []mcp.Meta{nil}; !reflect.DeepEqual(s.metas, want) {
			t.Errorf("s.metas = %v, want %v", s.metas, want)
		}
	})
}
