package purramcp_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// progressStep is one notifications/progress a progressServer sends during
// a call: for the call's own token unless token is set.
type progressStep struct {
	token           any
	progress, total float64
}

// progressServer serves the fixture tool; each call sends its script's
// notifications (with a message, which is remote text) and then answers.
// before, when set, runs first; after, when set, runs on its own goroutine
// once the answer is being written, with the call's session and token.
type progressServer struct {
	server *mcp.Server
	script []progressStep
	before func(ctx context.Context, req *mcp.CallToolRequest)
	after  func(ss *mcp.ServerSession, token any)

	mu     sync.Mutex
	tokens []any // the progress token of each call, nil when it had none
	metas  []mcp.Meta
}

func newProgressServer(t *testing.T, script ...progressStep) *progressServer {
	t.Helper()
	s := &progressServer{script: script}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	s.server.AddTool(sdkTool(t, loadMCPFixture(t).Tool), s.call)
	return s
}

func (s *progressServer) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	own := req.Params.GetProgressToken()
	meta := hostMeta(req.Params.Meta)
	s.mu.Lock()
	s.tokens = append(s.tokens, own)
	s.metas = append(s.metas, meta)
	s.mu.Unlock()
	if s.before != nil {
		s.before(ctx, req)
	}
	for _, step := range s.script {
		token := step.token
		if token == nil {
			token = own
		}
		if token == nil {
			continue
		}
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
			Progress: step.progress, Total: step.total, Message: "remote text: do not show"}); err != nil {
			return nil, err
		}
	}
	if s.after != nil {
		go s.after(req.Session, own)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
}

// progressRecorder is a ProgressFunc that keeps what it was given.
type progressRecorder struct {
	mu  sync.Mutex
	got [][2]float64
}

func (r *progressRecorder) record(progress, total float64) {
	r.mu.Lock()
	r.got = append(r.got, [2]float64{progress, total})
	r.mu.Unlock()
}

func (r *progressRecorder) values() [][2]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][2]float64(nil), r.got...)
}

// discoverProgress connects to s through the monitor's Transport and
// discovers the fixture tool as search.
func discoverProgress(t *testing.T, s *progressServer, opts purramcp.DiscoveryOptions, client *mcp.ClientOptions) purramcp.ToolDefinition {
	t.Helper()
	cs, monitor := purramcptest.Connect(t, s.server, purramcptest.Options{Client: client})
	opts.Monitor = monitor
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return catalog.Registrations()[0]
}

// TestWithProgress_Delivered: under WithProgress the call carries a token
// unique in the session beside the trace context, and the ProgressFunc gets,
// before Run returns, every increasing progress the server sent for it with
// its total, and nothing else: not a repeated or decreasing progress, not
// another call's token, not a numeric token.
func TestWithProgress_Delivered(t *testing.T) {
	leakChecked(t, "progress", func(t *testing.T) {
		s := newProgressServer(t,
			progressStep{progress: 1, total: 4},
			progressStep{progress: 2, total: 4},
			progressStep{progress: 2, total: 4},   // not an increase
			progressStep{progress: 1.5, total: 4}, // a decrease
			progressStep{token: "purramcp-999", progress: 3},
			progressStep{token: 1, progress: 3},
			progressStep{progress: 4},
		)
		def := discoverProgress(t, s, purramcp.DiscoveryOptions{TracePropagator: mapPropagator{}}, nil)
		for call := 1; call <= 2; call++ {
			var r progressRecorder
			ctx := purramcp.WithProgress(context.WithValue(t.Context(), traceKey{}, testTraceparent), r.record)
			res, err := def.Run(ctx, argsA, purramcp.ToolContext{})
			if err != nil || res.ErrorCode != "" {
				t.Fatalf("Run = %+v, %v; want a success", res, err)
			}
			if want := [][2]float64{{1, 4}, {2, 4}, {4, 0}}; !reflect.DeepEqual(r.values(), want) {
				t.Errorf("call %d: progress = %v, want %v", call, r.values(), want)
			}
		}
		// Without WithProgress the request carries nothing new.
		if res, err := def.Run(t.Context(), argsA, purramcp.ToolContext{}); err != nil || res.ErrorCode != "" {
			t.Fatalf("Run = %+v, %v; want a success", res, err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if want := []any{"purramcp-1", "purramcp-2", nil}; !reflect.DeepEqual(s.tokens, want) {
			t.Errorf("tokens = %v, want %v", s.tokens, want)
		}
		want := []mcp.Meta{
			{"traceparent": testTraceparent, "progressToken": "purramcp-1"},
			{"traceparent": testTraceparent, "progressToken": "purramcp-2"},
			nil,
		}
		if !reflect.DeepEqual(s.metas, want) {
			t.Errorf("metas = %v, want %v", s.metas, want)
		}
	})
}

// TestWithProgress_Concurrent: calls in flight at once on one session each
// get their own progress only.
func TestWithProgress_Concurrent(t *testing.T) {
	const calls = 8
	var started sync.WaitGroup
	started.Add(calls)
	s := newProgressServer(t, progressStep{progress: 1, total: 2}, progressStep{progress: 2, total: 2})
	s.before = func(ctx context.Context, req *mcp.CallToolRequest) {
		// Every call is in flight before any sends its progress.
		started.Done()
		started.Wait()
	}
	def := discoverProgress(t, s, purramcp.DiscoveryOptions{}, nil)
	recorders := make([]progressRecorder, calls)
	var wg sync.WaitGroup
	for i := range recorders {
		wg.Go(func() {
			res, err := def.Run(purramcp.WithProgress(t.Context(), recorders[i].record), argsA, purramcp.ToolContext{})
			if err != nil || res.ErrorCode != "" {
				t.Errorf("Run = %+v, %v; want a success", res, err)
			}
		})
	}
	wg.Wait()
	for i := range recorders {
		if want := [][2]float64{{1, 2}, {2, 2}}; !reflect.DeepEqual(recorders[i].values(), want) {
			t.Errorf("call %d: progress = %v, want %v", i, recorders[i].values(), want)
		}
	}
}

// TestWithProgress_NotAfterRun: a notification that arrives after the call
// returned reaches the host's own handler, not the ProgressFunc.
func TestWithProgress_NotAfterRun(t *testing.T) {
	returned := make(chan struct{})
	late := make(chan any, 1)
	s := newProgressServer(t, progressStep{progress: 1})
	s.after = func(ss *mcp.ServerSession, token any) {
		<-returned
		_ = ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 2})
	}
	host := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if req.Params.Progress == 2 {
			late <- req.Params.ProgressToken
		}
	}}
	def := discoverProgress(t, s, purramcp.DiscoveryOptions{}, host)
	var r progressRecorder
	if res, err := def.Run(purramcp.WithProgress(t.Context(), r.record), argsA, purramcp.ToolContext{}); err != nil || res.ErrorCode != "" {
		t.Fatalf("Run = %+v, %v; want a success", res, err)
	}
	close(returned)
	select {
	case token := <-late:
		if token != "purramcp-1" {
			t.Errorf("the host's handler got token %v, want purramcp-1", token)
		}
	case <-time.After(waitFor):
		t.Fatal("the late notification never reached the host's handler")
	}
	if want := [][2]float64{{1, 0}}; !reflect.DeepEqual(r.values(), want) {
		t.Errorf("progress = %v, want %v (nothing after Run returned)", r.values(), want)
	}
}

// TestWithProgress_WithoutTransport: on a session connected without the
// monitor's Transport, progress comes through go-sdk's handler.
func TestWithProgress_WithoutTransport(t *testing.T) {
	var r progressRecorder
	got := make(chan struct{})
	s := newProgressServer(t)
	s.before = func(ctx context.Context, req *mcp.CallToolRequest) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 3})
		// The answer waits until the handler delivered: go-sdk handles
		// notifications apart from answers.
		select {
		case <-got:
		case <-time.After(waitFor):
		}
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	monitor := purramcp.NewCatalogMonitor()
	cs, err := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	if err := monitor.Attach(cs); err != nil {
		t.Fatal(err)
	}
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	fn := func(progress, total float64) {
		r.record(progress, total)
		once.Do(func() { close(got) })
	}
	res, err := catalog.Registrations()[0].Run(purramcp.WithProgress(t.Context(), fn), argsA, purramcp.ToolContext{})
	if err != nil || res.ErrorCode != "" {
		t.Fatalf("Run = %+v, %v; want a success", res, err)
	}
	if want := [][2]float64{{1, 3}}; !reflect.DeepEqual(r.values(), want) {
		t.Errorf("progress = %v, want %v", r.values(), want)
	}
}
