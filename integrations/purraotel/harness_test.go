package purraotel_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"purra.dev/purramcp"
)

// secret is remote and argument text that must never reach telemetry.
const secret = "CANARY-7f3a9"

// server is an in-memory go-sdk MCP server with one tool, remote.search,
// that records the _meta of each tools/call. A q of "err" answers isError
// with secret text; every other answer carries secret text too.
type server struct {
	srv   *mcp.Server
	mu    sync.Mutex
	metas []mcp.Meta
}

func newServer() *server {
	s := &server{srv: mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})}
	s.srv.AddTool(&mcp.Tool{Name: "remote.search", Description: "Search " + secret,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"q": map[string]any{"type": "string", "maxLength": 3}, "note": map[string]any{"type": "string"}},
			"required": []any{"q"}, "additionalProperties": false}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var meta mcp.Meta
			for k, v := range req.Params.Meta {
				if !strings.HasPrefix(k, "io.modelcontextprotocol/") {
					if meta == nil {
						meta = mcp.Meta{}
					}
					meta[k] = v
				}
			}
			s.mu.Lock()
			s.metas = append(s.metas, meta)
			s.mu.Unlock()
			isError := strings.Contains(string(req.Params.Arguments), `"err"`)
			return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: "found " + secret}}}, nil
		})
	return s
}

// telemetry is an SDK tracer provider over an in-memory span recorder and
// an SDK meter provider over a manual reader.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// events collects the purramcp events beside the observer under test.
type events struct {
	mu   sync.Mutex
	list []purramcp.Event
}

func (l *events) tee(next func(context.Context, purramcp.Event)) func(context.Context, purramcp.Event) {
	return func(ctx context.Context, e purramcp.Event) {
		l.mu.Lock()
		l.list = append(l.list, e)
		l.mu.Unlock()
		next(ctx, e)
	}
}

func (l *events) all() []purramcp.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]purramcp.Event(nil), l.list...)
}

// session connects a monitored client to s in memory and discovers
// remote.search as "search" with the given observer and propagator.
func session(t testing.TB, s *server, observe func(context.Context, purramcp.Event),
	prop purramcp.TracePropagator) *purramcp.Catalog {
	t.Helper()
	return sessionWith(t, s, purramcp.DiscoveryOptions{Observer: observe, TracePropagator: prop})
}

// sessionWith is session with opts (its Monitor set here).
func sessionWith(t testing.TB, s *server, opts purramcp.DiscoveryOptions) *purramcp.Catalog {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	m := purramcp.NewCatalogMonitor()
	client := m.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := m.Connect(context.Background(), client, ct, &mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	catalog, err := purramcp.DiscoverTools(context.Background(), cs, "docs", map[string]purramcp.ToolBinding{
		"remote.search": {LocalName: "search", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search"}, Scope: purramcp.Unscoped},
	}, func() purramcp.DiscoveryOptions { opts.Monitor = m; return opts }())
	require.NoError(t, err)
	return catalog
}
