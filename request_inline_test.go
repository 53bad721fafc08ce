package purramcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// customTransport is a host's own transport, which the bounding layer knows
// nothing about.
type customTransport struct{ mcp.Transport }

// TestBounded_InlineWhereTheLayerEndsWrites: a request runs on its
// caller's goroutine exactly when the session is connected through the
// monitor's Transport over a transport whose blocked writes the layer can
// end (in-memory, command, streamable HTTP); over an IOTransport on the
// host's streams, a host's own transport, or without the layer it runs on
// a request worker.
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
		wire   func(m *CatalogMonitor) (server, client mcp.Transport)
	}{
		{"in_memory bounded", true, func(m *CatalogMonitor) (mcp.Transport, mcp.Transport) {
			st, ct := mcp.NewInMemoryTransports()
			return st, m.Transport(ct)
		}},
		{"io bounded", false, func(m *CatalogMonitor) (mcp.Transport, mcp.Transport) {
			s, c := net.Pipe()
			return &mcp.IOTransport{Reader: s, Writer: s}, m.Transport(&mcp.IOTransport{Reader: c, Writer: c})
		}},
		{"custom bounded", false, func(m *CatalogMonitor) (mcp.Transport, mcp.Transport) {
			st, ct := mcp.NewInMemoryTransports()
			return st, m.Transport(customTransport{ct})
		}},
		{"streamable HTTP bounded", true, func(m *CatalogMonitor) (mcp.Transport, mcp.Transport) {
			server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
			hc := &http.Transport{}
			cleanups = append(cleanups, ts.Close, hc.CloseIdleConnections)
			return nil, m.Transport(&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: hc}})
		}},
		{"in_memory without the layer", false, func(m *CatalogMonitor) (mcp.Transport, mcp.Transport) {
			return mcp.NewInMemoryTransports()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			ctx := t.Context()
			server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			m := NewCatalogMonitor()
			st, ct := tc.wire(m)
			var ss *mcp.ServerSession
			if st != nil {
				var err error
				if ss, err = server.Connect(ctx, st, nil); err != nil {
					t.Fatal(err)
				}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, m.ClientOptions(nil)).Connect(ctx, ct, nil)
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
			if err := m.Attach(cs); err != nil {
				t.Fatal(err)
			}
			if got := m.inlineRequests(); got != tc.inline {
				t.Fatalf("inlineRequests() = %v, want %v", got, tc.inline)
			}
			caller := goroutineID()
			ran, err := bounded(ctx, time.Second, m, CodeResultTooLarge, 1<<20, func(context.Context) (string, error) {
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
			if _, err := bounded(ctx, time.Millisecond, m, CodeResultTooLarge, 1<<20, func(ctx context.Context) (int, error) {
				<-ctx.Done()
				return 0, ctx.Err()
			}); CodeOf(err) != CodeTimeout {
				t.Fatalf("timed-out request: %v", err)
			}
			if b := m.bound; b != nil && b.conn != nil {
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
func boundedSession(t *testing.T, server *mcp.Server) (*CatalogMonitor, *mcp.ClientSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewCatalogMonitor()
	cs, err := m.Connect(t.Context(), mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, m.ClientOptions(nil)), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return m, cs
}

// TestBounded_InlineLateResultDropped: on the caller's goroutine, a request
// that returns a result only after the adapter's deadline fails
// mcp_timeout, as on a worker, where the caller stops waiting at the
// deadline.
func TestBounded_InlineLateResultDropped(t *testing.T) {
	m, _ := boundedSession(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil))
	_, err := bounded(t.Context(), 20*time.Millisecond, m, CodeResultTooLarge, 1<<20, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		time.Sleep(5 * time.Millisecond)
		return 1, nil // ignores its ctx and answers late
	})
	if code := CodeOf(err); code != CodeTimeout {
		t.Fatalf("late result: %v (code %q), want %s", err, code, CodeTimeout)
	}
}

// TestBounded_BlockingCancelNotifyKeepsWorkers: under
// MCPGODEBUG=blockingcancelnotify=1 go-sdk writes notifications/cancelled
// on the caller's goroutine, so a bounded in-memory session keeps its
// requests on workers.
func TestBounded_BlockingCancelNotifyKeepsWorkers(t *testing.T) {
	t.Setenv("MCPGODEBUG", "blockingcancelnotify=1")
	if m, _ := boundedSession(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)); m.inlineRequests() {
		t.Fatal("requests inline although go-sdk's cancellation notice blocks its caller")
	}
}

// TestBounded_InlineConcurrentCancels: many Runs at once on one bounded
// in-memory session, each on its caller's goroutine, with callers that give
// up at random moments (before, during and after the request). Every Run
// returns a result or ErrCanceled within its Timeout, none severs the
// healthy session, later Runs still succeed, and no goroutine is left.
func TestBounded_InlineConcurrentCancels(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // after the session's own cleanup
	ctx := t.Context()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	m, cs := boundedSession(t, server)
	if !m.inlineRequests() {
		t.Fatal("the bounded in-memory session does not run requests inline")
	}
	const timeout = 2 * time.Second
	catalog, err := DiscoverTools(ctx, cs, "s", map[string]ToolBinding{"echo": {LocalName: "echo",
		Policy: ToolPolicy{Mode: "read", Title: "Echo"}, Scope: Unscoped}}, DiscoveryOptions{Monitor: m, Limits: Limits{Timeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	run := catalog.Registrations()[0].Run
	var wg sync.WaitGroup
	var canceled, answered atomic.Int32
	errs := make(chan error, 8*40)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				wait := timeout // every third caller waits; the others give up within 2.4 ms
				if i%3 != 0 {
					wait = time.Duration((g*40+i)%9) * 300 * time.Microsecond
				}
				callCtx, cancel := context.WithTimeout(ctx, wait)
				start := time.Now()
				res, err := run(callCtx, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), ToolContext{})
				took := time.Since(start)
				cancel()
				switch {
				case took > timeout:
					errs <- fmt.Errorf("Run took %v, over its Timeout", took)
				case errors.Is(err, ErrCanceled):
					canceled.Add(1)
				case err != nil || res.ErrorCode != "":
					errs <- fmt.Errorf("Run = %+v, %v", res, err)
				case len(res.Content.Text) != 1 || res.Content.Text[0] != fmt.Sprintf(`{"n":%d}`, i):
					errs <- fmt.Errorf("Run answered %v for n=%d", res.Content.Text, i)
				default:
					answered.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d Runs answered, %d canceled", answered.Load(), canceled.Load())
	if canceled.Load() == 0 || answered.Load() == 0 {
		t.Fatalf("the callers' deadlines did not mix outcomes: %d answered, %d canceled", answered.Load(), canceled.Load())
	}
	if catalog.Stale() {
		t.Fatal("a healthy session was severed")
	}
	res, err := run(ctx, json.RawMessage(`{"n":-1}`), ToolContext{})
	if err != nil || res.ErrorCode != "" {
		t.Fatalf("Run after the cancels = %+v, %v", res, err)
	}
}
