package purraotel_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraotel"
)

// tracedServer is newServer's server with a server-side span per
// tools/call, started from the trace context in the request's _meta, as an
// instrumented MCP server does.
func tracedServer(tel *telemetry) *server {
	s := newServer()
	tracer := tel.tp.Tracer("server")
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || method != "tools/call" {
				return next(ctx, method, req)
			}
			carrier := propagation.MapCarrier{}
			for k, v := range p.Meta {
				if s, ok := v.(string); ok {
					carrier[k] = s
				}
			}
			ctx = propagation.TraceContext{}.Extract(ctx, carrier)
			ctx, span := tracer.Start(ctx, "tools/call "+p.Name, trace.WithSpanKind(trace.SpanKindServer))
			defer span.End()
			return next(ctx, method, req)
		}
	})
	return s
}

// TestStartCall_ServerSpanIsChild: with Observe, StartCall and Propagator
// wired, the span an instrumented go-sdk server starts from the _meta it
// receives is a child of the client's tools/call span, which is a child of
// the caller's span, at both protocols, over stdio and over streamable
// HTTP. Inside ADK's execute_tool span (StartCall starts nothing) the
// server's span is that span's child.
func TestStartCall_ServerSpanIsChild(t *testing.T) {
	for _, tc := range []struct {
		name, transport, version string
	}{
		{"stdio/2025-11-25", purramcp.TransportStdio, purramcp.ProtocolVersion20251125},
		{"stdio/2026-07-28", purramcp.TransportStdio, purramcp.ProtocolVersion20260728},
		{"http/2025-11-25", purramcp.TransportHTTP, purramcp.ProtocolVersion20251125},
		{"http/2026-07-28", purramcp.TransportHTTP, purramcp.ProtocolVersion20260728},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t)
			in := purraotel.New(tel.tp, tel.mp, purraotel.Options{})
			m, cs := connectOver(t, tracedServer(tel), tc.transport, tc.version)
			assert.Equal(t, tc.version, m.ProtocolVersion())
			catalog, err := purramcp.DiscoverTools(t.Context(), cs, "docs", map[string]purramcp.ToolBinding{
				"remote.search": {LocalName: "search", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search"}, Scope: purramcp.Unscoped},
			}, purramcp.DiscoveryOptions{Monitor: m, Observer: in.Observe, CallStart: in.StartCall,
				TracePropagator: purraotel.Propagator(nil)})
			require.NoError(t, err)
			reg, _ := catalog.Registration("search")

			ctx, turn := tel.tp.Tracer("host").Start(context.Background(), "agent turn")
			res, err := reg.Run(ctx, json.RawMessage(`{"q":"err"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.CodeToolError, res.ErrorCode)
			turn.End()
			adkCtx, adk := tel.tp.Tracer("adk").Start(context.Background(), "execute_tool search")
			_, err = reg.Run(adkCtx, json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			adk.End()

			spans := tel.spans.Ended()
			client := byName(spans, "tools/call search")
			servers := byName(spans, "tools/call remote.search")
			require.Len(t, client, 1)
			require.Len(t, servers, 2)
			assert.Equal(t, turn.SpanContext().SpanID(), client[0].Parent().SpanID(), "client span under the caller's")
			assert.Equal(t, client[0].SpanContext().TraceID(), servers[0].SpanContext().TraceID())
			assert.Equal(t, client[0].SpanContext().SpanID(), servers[0].Parent().SpanID(), "server span under the client's tools/call")
			assert.True(t, servers[0].Parent().IsRemote())
			assert.Equal(t, trace.SpanKindServer, servers[0].SpanKind())
			assert.Equal(t, "tool_error", attrs(client[0].Attributes())["error.type"])
			assert.Equal(t, adk.SpanContext().SpanID(), servers[1].Parent().SpanID(), "server span under ADK's execute_tool")
		})
	}
}

// connectOver connects a monitored client to s over stdio pipes or
// streamable HTTP at version; everything closes at t's cleanup.
func connectOver(t *testing.T, s *server, transport, version string) (*purramcp.CatalogMonitor, *mcp.ClientSession) {
	t.Helper()
	var ct mcp.Transport
	switch transport {
	case purramcp.TransportStdio:
		clientR, serverW := io.Pipe()
		serverR, clientW := io.Pipe()
		ss, err := s.srv.Connect(context.Background(), &mcp.IOTransport{Reader: serverR, Writer: serverW}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Wait() })
		ct = &mcp.IOTransport{Reader: clientR, Writer: clientW}
	case purramcp.TransportHTTP:
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv },
			&mcp.StreamableHTTPOptions{Stateless: version == purramcp.ProtocolVersion20260728}))
		hc := &http.Transport{}
		t.Cleanup(func() {
			hs.CloseClientConnections()
			hs.Close()
			hc.CloseIdleConnections()
		})
		ct = &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: hc}}
	}
	m := purramcp.NewCatalogMonitor()
	client := m.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := m.Connect(context.Background(), client, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return m, cs
}
