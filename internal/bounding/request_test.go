package bounding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// testMonitor stands for the monitor that owns a Session: its Sever
// severs the session, as the monitor's does after closing itself.
type testMonitor struct {
	Session
	severed atomic.Int32
}

func newTestMonitor() *testMonitor { return &testMonitor{} }

func (m *testMonitor) Sever() {
	m.severed.Add(1)
	m.Session.Sever()
}

func (m *testMonitor) Progress(json.RawMessage) {}
func (m *testMonitor) Unauthorized(error) bool  { return false }

// Transport wraps t in m's bounding layer.
func (m *testMonitor) Transport(t mcp.Transport) mcp.Transport { return m.Session.Transport(t, m) }

// Connect connects client over m's Transport wrapping t.
func (m *testMonitor) Connect(ctx context.Context, client *mcp.Client, t mcp.Transport,
	opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	return client.Connect(ctx, m.Transport(t), opts)
}

// inlineRequests reports whether m's requests run on their caller's
// goroutine.
func (m *testMonitor) inlineRequests() bool { return m.Inline() }

// bounded runs request on m's request path.
func bounded[T any](ctx context.Context, timeout time.Duration, m *testMonitor, answer Cap,
	request func(context.Context) (T, error)) (T, error) {
	return Request(ctx, &m.Session, m, timeout, answer, request)
}

// codeOf returns err's code, "" when err is no *Failure.
func codeOf(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Code
	}
	return ""
}

// goroutineID returns the calling goroutine's id, read from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// customTransport is a host's own transport, which the bounding layer knows
// nothing about.
type customTransport struct{ mcp.Transport }

// TestBounded_InlineWhereTheLayerEndsWrites: a request runs on its
// caller's goroutine exactly when the session is connected through the
// session's Transport over a transport whose blocked writes the layer can
// end (in-memory, command, streamable HTTP); over an IOTransport on the
// host's streams, a host's own transport, or without the layer it runs on
// a goroutine of its own.
func TestBounded_InlineWhereTheLayerEndsWrites(t *testing.T) {
	for _, tc := range []struct {
		transport mcp.Transport
		want      bool
	}{
		{&mcp.InMemoryTransport{}, true},
		{&mcp.CommandTransport{}, true},
		{&mcp.IOTransport{}, false},
		{customTransport{}, false},
		{&mcp.StreamableClientTransport{}, false}, // inline through its own branch of Connect
	} {
		if got := closeEndsWrites(tc.transport); got != tc.want {
			t.Errorf("closeEndsWrites(%T) = %v, want %v", tc.transport, got, tc.want)
		}
	}

	var cleanups []func() // the HTTP case's server and client
	type roundTripper struct{ http.RoundTripper }
	type oauthHandler struct{ auth.OAuthHandler }
	for _, tc := range []struct {
		transport *mcp.StreamableClientTransport
		want      bool
	}{
		{&mcp.StreamableClientTransport{}, true},
		{&mcp.StreamableClientTransport{HTTPClient: &http.Client{}}, true},
		{&mcp.StreamableClientTransport{HTTPClient: &http.Client{Transport: &http.Transport{}}}, true},
		{&mcp.StreamableClientTransport{HTTPClient: &http.Client{Transport: roundTripper{}}}, false},
		{&mcp.StreamableClientTransport{OAuthHandler: oauthHandler{}}, false},
	} {
		if got := httpWritesEndWithCtx(tc.transport); got != tc.want {
			t.Errorf("httpWritesEndWithCtx(%+v) = %v, want %v", tc.transport, got, tc.want)
		}
	}

	for env, want := range map[string]bool{"": false, "blockingcancelnotify=1": true, "x=1, blockingcancelnotify = 1": true,
		"blockingcancelnotify=0": false, "blockingcancelnotify": false} {
		if got := cancelNotifyBlocks(env); got != want {
			t.Errorf("cancelNotifyBlocks(%q) = %v, want %v", env, got, want)
		}
	}

	for _, tc := range []struct {
		name   string
		inline bool
		wire   func(m *testMonitor) (server, client mcp.Transport)
	}{
		{"in_memory bounded", true, func(m *testMonitor) (mcp.Transport, mcp.Transport) {
			st, ct := mcp.NewInMemoryTransports()
			return st, m.Transport(ct)
		}},
		{"io bounded", false, func(m *testMonitor) (mcp.Transport, mcp.Transport) {
			s, c := net.Pipe()
			return &mcp.IOTransport{Reader: s, Writer: s}, m.Transport(&mcp.IOTransport{Reader: c, Writer: c})
		}},
		{"custom bounded", false, func(m *testMonitor) (mcp.Transport, mcp.Transport) {
			st, ct := mcp.NewInMemoryTransports()
			return st, m.Transport(customTransport{ct})
		}},
		{"streamable HTTP bounded", true, func(m *testMonitor) (mcp.Transport, mcp.Transport) {
			server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
			hc := &http.Transport{}
			cleanups = append(cleanups, ts.Close, hc.CloseIdleConnections)
			return nil, m.Transport(&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: hc}})
		}},
		{"in_memory without the layer", false, func(m *testMonitor) (mcp.Transport, mcp.Transport) {
			return mcp.NewInMemoryTransports()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			ctx := t.Context()
			server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			m := newTestMonitor()
			st, ct := tc.wire(m)
			var ss *mcp.ServerSession
			if st != nil {
				var err error
				if ss, err = server.Connect(ctx, st, nil); err != nil {
					t.Fatal(err)
				}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = cs.Close()
				if ss != nil {
					_ = ss.Wait()
				}
				for _, f := range cleanups {
					f()
				}
				cleanups = nil
			}()
			if got := m.inlineRequests(); got != tc.inline {
				t.Fatalf("inlineRequests() = %v, want %v", got, tc.inline)
			}
			caller := goroutineID()
			ran, err := bounded(ctx, time.Second, m, ResultCap(1<<20, 128), func(context.Context) (string, error) {
				return goroutineID(), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if onCaller := ran == caller; onCaller != tc.inline {
				t.Errorf("request on the caller's goroutine: %v, want %v", onCaller, tc.inline)
			}
			// Answered and timed-out requests leave no pending entry.
			for range 20 {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := bounded(ctx, time.Millisecond, m, ResultCap(1<<20, 128), func(ctx context.Context) (int, error) {
				<-ctx.Done()
				return 0, ctx.Err()
			}); codeOf(err) != CodeTimeout {
				t.Fatalf("timed-out request: %v", err)
			}
			if b := m.current(); b != nil && b.conn != nil {
				deadline := time.Now().Add(time.Second)
				for {
					b.conn.mu.Lock()
					n := len(b.conn.pending)
					b.conn.mu.Unlock()
					if n == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d pending entries left", n)
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

// boundedSession connects server in memory through a fresh monitor's
// Connect (the bounding layer, attached); both ends close at t's cleanup.
func boundedSession(t *testing.T, server *mcp.Server) (*testMonitor, *mcp.ClientSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestMonitor()
	cs, err := m.Connect(t.Context(), mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return m, cs
}

// TestBounded_InlineLateResultDropped: on the caller's goroutine, a request
// that returns a result only after the adapter's deadline fails
// mcp_timeout, as on a goroutine of its own, where the caller stops waiting at the
// deadline.
func TestBounded_InlineLateResultDropped(t *testing.T) {
	m, _ := boundedSession(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil))
	_, err := bounded(t.Context(), 20*time.Millisecond, m, ResultCap(1<<20, 128), func(ctx context.Context) (int, error) {
		<-ctx.Done()
		time.Sleep(5 * time.Millisecond)
		return 1, nil // ignores its ctx and answers late
	})
	if code := codeOf(err); code != CodeTimeout {
		t.Fatalf("late result: %v (code %q), want %s", err, code, CodeTimeout)
	}
}

// TestBounded_BlockingCancelNotifyKeepsWorkers: under
// MCPGODEBUG=blockingcancelnotify=1 go-sdk writes notifications/cancelled
// on the caller's goroutine, so a bounded in-memory session keeps its
// requests on goroutines of their own.
func TestBounded_BlockingCancelNotifyKeepsWorkers(t *testing.T) {
	t.Setenv("MCPGODEBUG", "blockingcancelnotify=1")
	if m, _ := boundedSession(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)); m.inlineRequests() {
		t.Fatal("requests inline although go-sdk's cancellation notice blocks its caller")
	}
}

// TestBounded_CallContext: the request's ctx is what context.WithDeadline
// over the caller's ctx would give: it reports the adapter's deadline, or
// the caller's when earlier; it ends with context.DeadlineExceeded at
// either deadline and with context.Canceled when the caller cancels; and a
// ctx derived from it ends with it, with the same error.
func TestBounded_CallContext(t *testing.T) {
	m, _ := boundedSession(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil))
	type seen struct {
		deadline time.Time
		err      error
		derived  error
	}
	observe := func(ctx context.Context, timeout time.Duration) (seen, time.Time) {
		start := time.Now()
		var s seen
		_, _ = bounded(ctx, timeout, m, ResultCap(1<<20, 128), func(ctx context.Context) (int, error) {
			if ctx.Err() != nil {
				t.Errorf("request ctx ended before the request: %v", ctx.Err())
			}
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			s.deadline, _ = ctx.Deadline()
			<-ctx.Done()
			<-child.Done()
			s.err, s.derived = ctx.Err(), child.Err()
			return 0, ctx.Err()
		})
		return s, start
	}

	// The adapter's deadline first.
	s, start := observe(t.Context(), 30*time.Millisecond)
	if s.err != context.DeadlineExceeded || s.derived != context.DeadlineExceeded {
		t.Errorf("at the adapter's deadline: Err %v, derived %v", s.err, s.derived)
	}
	if d := s.deadline.Sub(start); d < 30*time.Millisecond || d > time.Second {
		t.Errorf("Deadline %v after the start, want 30ms", d)
	}

	// The caller's deadline first.
	callerCtx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	want, _ := callerCtx.Deadline()
	s, _ = observe(callerCtx, time.Hour)
	cancel()
	if !s.deadline.Equal(want) || s.err != context.DeadlineExceeded || s.derived != context.DeadlineExceeded {
		t.Errorf("at the caller's deadline: Deadline %v (want %v), Err %v, derived %v", s.deadline, want, s.err, s.derived)
	}

	// The caller cancels.
	callerCtx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	s, _ = observe(callerCtx, time.Hour)
	if s.err != context.Canceled || s.derived != context.Canceled {
		t.Errorf("canceled by the caller: Err %v, derived %v", s.err, s.derived)
	}
}

// TestBounded_UnansweredRequestsLeaveNoPendingEntry: requests the server
// never answers leave no pending entry on a bounded in-memory session once
// bounded returned, when the adapter's deadline passes, when the caller
// cancels, and when one request function sends two requests on its ctx.
func TestBounded_UnansweredRequestsLeaveNoPendingEntry(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	release := make(chan struct{})
	server.AddTool(&mcp.Tool{Name: "never", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-release // answers only once the test is over
			return &mcp.CallToolResult{}, nil
		})
	m, cs := boundedSession(t, server)
	t.Cleanup(func() { close(release) }) // before the session's cleanup
	pending := func() map[jsonrpc.ID]pendingCall {
		m.current().conn.mu.Lock()
		defer m.current().conn.mu.Unlock()
		return maps.Clone(m.current().conn.pending)
	}
	before := pending() // go-sdk's own calls, such as subscriptions/listen
	call := func(ctx context.Context) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "never", Arguments: json.RawMessage(`{}`)})
		return err
	}
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration // the caller cancels after it; 0: never
		request func(ctx context.Context) (int, error)
		want    error
	}{
		{"adapter deadline", 30 * time.Millisecond, 0, func(ctx context.Context) (int, error) { return 0, call(ctx) }, fail(CodeTimeout)},
		{"caller cancels", time.Hour, 30 * time.Millisecond, func(ctx context.Context) (int, error) { return 0, call(ctx) }, ErrCanceled},
		{"two requests", 30 * time.Millisecond, 0, func(ctx context.Context) (int, error) {
			errs := make(chan error, 2)
			for range 2 {
				go func() { errs <- call(ctx) }()
			}
			return 0, errors.Join(<-errs, <-errs)
		}, fail(CodeTimeout)},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		if tc.cancel > 0 {
			time.AfterFunc(tc.cancel, cancel)
		}
		_, err := bounded(ctx, tc.timeout, m, ResultCap(1<<20, 128), tc.request)
		cancel()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		deadline := time.Now().Add(time.Second) // another ctx's cleanup runs on its own goroutine
		for {
			after := pending()
			maps.DeleteFunc(after, func(id jsonrpc.ID, _ pendingCall) bool { _, ok := before[id]; return ok })
			if len(after) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: pending entries left: %+v", tc.name, after)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// wedgedCallTransport is a host's own transport (requests run on goroutines of their own)
// whose tools/call writes block until release is closed.
type wedgedCallTransport struct {
	mcp.Transport
	release chan struct{}
}

func (w wedgedCallTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	return wedgedCallConn{c, w.release}, err
}

type wedgedCallConn struct {
	mcp.Connection
	release chan struct{}
}

func (c wedgedCallConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "tools/call" {
		<-c.release
	}
	return c.Connection.Write(ctx, msg)
}

// TestBounded_WedgedWorkerLeavesNoPendingEntry: on a goroutine of its own, a
// request whose write is still blocked at the adapter's deadline, which
// the layer cannot end, fails mcp_timeout and leaves no pending entry
// while that goroutine still waits on the write.
func TestBounded_WedgedWorkerLeavesNoPendingEntry(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	m := newTestMonitor()
	cs, err := m.Connect(t.Context(), mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil),
		wedgedCallTransport{ct, release}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(release); _ = cs.Close(); _ = ss.Wait() })
	if m.inlineRequests() {
		t.Fatal("a host's own transport runs requests inline")
	}
	m.current().conn.mu.Lock()
	before := maps.Clone(m.current().conn.pending)
	m.current().conn.mu.Unlock()
	_, err = bounded(t.Context(), 30*time.Millisecond, m, ResultCap(1<<20, 128), func(ctx context.Context) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "any", Arguments: json.RawMessage(`{}`)})
	})
	if codeOf(err) != CodeTimeout {
		t.Fatalf("wedged write: %v, want %s", err, CodeTimeout)
	}
	deadline := time.Now().Add(time.Second)
	for {
		m.current().conn.mu.Lock()
		after := maps.Clone(m.current().conn.pending)
		m.current().conn.mu.Unlock()
		maps.DeleteFunc(after, func(id jsonrpc.ID, _ pendingCall) bool { _, ok := before[id]; return ok })
		if len(after) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending entries left: %+v", after)
		}
		time.Sleep(time.Millisecond)
	}
}
