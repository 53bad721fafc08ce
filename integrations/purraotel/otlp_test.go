package purraotel_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraotel"
)

// TestObserver_OTLPHTTP: the spans go through the OTLP/HTTP exporter to an
// httptest receiver, which decodes the same names, kinds and attributes.
func TestObserver_OTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var got []*collectortrace.ExportTraceServiceRequest
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer receiver.Close()
	exporter, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(receiver.URL+"/v1/traces"))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))

	catalog := session(t, newServer(), purraotel.Observer(tp, noop.NewMeterProvider(), purraotel.Options{}), nil)
	reg, _ := catalog.Registration("search")
	ctx, parent := tp.Tracer("host").Start(context.Background(), "turn")
	_, err = reg.Run(ctx, json.RawMessage(`{"q":"err"}`), purramcp.ToolContext{CallID: "c9"})
	require.NoError(t, err)
	parent.End()
	require.NoError(t, tp.Shutdown(context.Background()))

	type span struct {
		Name, Parent string
		Kind         int32
		Attrs        map[string]any
		Status       string
	}
	var spans []span
	ids := map[string]string{}
	mu.Lock()
	defer mu.Unlock()
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					ids[string(s.SpanId)] = s.Name
					attrs := map[string]any{}
					for _, kv := range s.Attributes {
						if sv := kv.Value.GetStringValue(); sv != "" {
							attrs[kv.Key] = sv
						} else {
							attrs[kv.Key] = kv.Value.GetIntValue()
						}
					}
					spans = append(spans, span{Name: s.Name, Parent: string(s.ParentSpanId), Kind: int32(s.Kind),
						Attrs: attrs, Status: s.GetStatus().GetMessage()})
				}
			}
		}
	}
	for i := range spans {
		spans[i].Parent = ids[spans[i].Parent]
	}
	require.Len(t, spans, 3)
	digest := catalog.Snapshot().RevisionDigest
	assert.Equal(t, span{Name: "tools/list", Kind: 3, Attrs: map[string]any{
		"mcp.method.name": "tools/list", "mcp.protocol.version": "2025-11-25", "purramcp.transport": "memory",
		"purramcp.server_id": "docs", "purramcp.revision_digest": digest, "purramcp.attempt": int64(1), "purramcp.pages": int64(1),
	}}, spans[0])
	resultBytes := spans[1].Attrs["purramcp.result_bytes"]
	assert.Equal(t, span{Name: "tools/call search", Parent: "turn", Kind: 3, Status: "mcp_tool_error", Attrs: map[string]any{
		"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
		"gen_ai.tool.call.id": "c9", "mcp.protocol.version": "2025-11-25", "purramcp.transport": "memory",
		"error.type": "tool_error", "purramcp.code": "mcp_tool_error", "purramcp.server_id": "docs", "purramcp.revision_digest": digest,
		"purramcp.remote_name": "remote.search", "purramcp.requests": int64(1), "purramcp.argument_bytes": int64(11),
		"purramcp.result_bytes": resultBytes,
	}}, spans[1])
	assert.Positive(t, resultBytes)
	assert.Equal(t, "turn", spans[2].Name)
}
