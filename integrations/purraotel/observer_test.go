package purraotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraotel"
)

// attrs renders a span's attributes as a map for exact comparison.
func attrs(kvs []attribute.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// byName returns the ended spans named name.
func byName(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// TestObserver_Spans: the discovery span and one CLIENT span per Run, child
// of the caller's span, with the Run's start and end, exact attributes and
// the status, error.type and purramcp.code of each outcome; the same
// whether the span is made at the end (Observer) or started by StartCall.
func TestObserver_Spans(t *testing.T) {
	for _, started := range []bool{false, true} {
		t.Run(map[bool]string{false: "Observer", true: "StartCall"}[started], func(t *testing.T) { observerSpans(t, started) })
	}
}

func observerSpans(t *testing.T, started bool) {
	tel := newTelemetry(t)
	var log events
	in := purraotel.New(tel.tp, tel.mp, purraotel.Options{Attributes: []attribute.KeyValue{attribute.String("server.address", "docs.local")}})
	opts := purramcp.DiscoveryOptions{Observer: log.tee(in.Observe)}
	if started {
		opts.CallStart = in.StartCall
	}
	catalog := sessionWith(t, newServer(), opts)
	digest := catalog.Snapshot().RevisionDigest
	reg, ok := catalog.Registration("search")
	require.True(t, ok)

	ctx, parent := tel.tp.Tracer("host").Start(context.Background(), "agent turn")
	for _, args := range []string{`{"q":"a"}`, `{"q":"toolong"}`, `{"q":"err"}`} {
		_, err := reg.Run(ctx, json.RawMessage(args), purramcp.ToolContext{CallID: "call-1", RunID: "run-1"})
		require.NoError(t, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := reg.Run(canceled, json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
	require.ErrorIs(t, err, purramcp.ErrCanceled)
	parent.End()

	spans := tel.spans.Ended()
	list := byName(spans, "tools/list")
	require.Len(t, list, 1)
	assert.Equal(t, trace.SpanKindClient, list[0].SpanKind())
	assert.False(t, list[0].Parent().IsValid(), "discovery ran without a span in ctx")
	assert.Equal(t, map[string]any{
		"mcp.method.name": "tools/list", "mcp.protocol.version": "2025-11-25", "purramcp.transport": "memory",
		"purramcp.server_id": "docs", "purramcp.revision_digest": digest, "purramcp.attempt": int64(1),
		"purramcp.pages": int64(1), "server.address": "docs.local",
	}, attrs(list[0].Attributes()))
	assert.Equal(t, codes.Unset, list[0].Status().Code)

	calls := byName(spans, "tools/call search")
	require.Len(t, calls, 4)
	evs := log.all()
	require.Len(t, evs, 5)
	base := map[string]any{
		"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
		"mcp.protocol.version": "2025-11-25", "purramcp.transport": "memory", "purramcp.server_id": "docs",
		"purramcp.revision_digest": digest, "purramcp.remote_name": "remote.search", "server.address": "docs.local",
	}
	want := []struct {
		code, errorType             string
		requests, argBytes, results int64
		ids                         bool
	}{
		{"", "", 1, 9, -1, true},
		{"mcp_invalid_arguments", "mcp_invalid_arguments", 0, 15, 0, true},
		{"mcp_tool_error", "tool_error", 1, 11, -1, true},
		{"canceled", "canceled", 0, 9, 0, false},
	}
	for i, s := range calls {
		e := evs[i+1]
		assert.Equal(t, trace.SpanKindClient, s.SpanKind())
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "child of the caller's span")
		assert.Equal(t, parent.SpanContext().TraceID(), s.SpanContext().TraceID())
		assert.Equal(t, e.Start, s.StartTime(), "started at the Run's start")
		assert.Equal(t, e.Start.Add(e.Duration), s.EndTime(), "ended at the Run's end")
		w := map[string]any{}
		for k, v := range base {
			w[k] = v
		}
		w["purramcp.requests"], w["purramcp.argument_bytes"] = want[i].requests, want[i].argBytes
		w["purramcp.result_bytes"] = int64(e.ResultBytes)
		if want[i].results == 0 {
			assert.Zero(t, e.ResultBytes)
		} else {
			assert.Positive(t, e.ResultBytes)
		}
		if want[i].ids {
			w["gen_ai.tool.call.id"], w["purramcp.run_id"] = "call-1", "run-1"
		}
		if want[i].code != "" {
			w["error.type"], w["purramcp.code"] = want[i].errorType, want[i].code
			assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: want[i].code}, s.Status())
		} else {
			assert.Equal(t, codes.Unset, s.Status().Code)
		}
		assert.Equal(t, w, attrs(s.Attributes()), "call %d", i)
		assert.Empty(t, s.Events())
	}
}

// TestObserver_ReusesExecuteToolSpan: inside a recording GenAI
// execute_tool span for the same tool (as ADK-Go makes), the MCP attributes
// go on that span and no second span is made; a span for another tool does
// not count.
func TestObserver_ReusesExecuteToolSpan(t *testing.T) {
	tel := newTelemetry(t)
	catalog := session(t, newServer(), purraotel.Observer(tel.tp, tel.mp, purraotel.Options{}), nil)
	reg, _ := catalog.Registration("search")
	tracer := tel.tp.Tracer("adk")
	for _, tc := range []struct {
		name  string
		attrs []attribute.KeyValue
		reuse bool
	}{
		{"execute_tool search", []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "search")}, true},
		{"tool step", []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "search")}, true},
		{"execute_tool other", []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "other")}, false},
	} {
		tel.spans.Reset()
		ctx, span := tracer.Start(context.Background(), tc.name, trace.WithAttributes(tc.attrs...))
		_, err := reg.Run(ctx, json.RawMessage(`{"q":"err"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		span.End()
		ended := tel.spans.Ended()
		if !tc.reuse {
			require.Len(t, ended, 2, tc.name)
			assert.Equal(t, "tools/call search", ended[0].Name())
			continue
		}
		require.Len(t, ended, 1, tc.name)
		got := attrs(ended[0].Attributes())
		resultBytes, ok := got["purramcp.result_bytes"].(int64)
		require.True(t, ok, tc.name)
		assert.Positive(t, resultBytes)
		assert.Equal(t, map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", // the host's own
			"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25", "error.type": "tool_error",
			"purramcp.code": "mcp_tool_error", "purramcp.transport": "memory", "purramcp.server_id": "docs", "purramcp.revision_digest": catalog.Snapshot().RevisionDigest,
			"purramcp.remote_name": "remote.search", "purramcp.requests": int64(1), "purramcp.argument_bytes": int64(11),
			"purramcp.result_bytes": resultBytes,
		}, got, tc.name)
		assert.Equal(t, tc.name, ended[0].Name(), "the host's span keeps its name")
	}
}

// TestObserver_Histogram: one histogram point set per method, tool and
// error.type, in seconds, with the conventions' buckets.
func TestObserver_Histogram(t *testing.T) {
	tel := newTelemetry(t)
	catalog := session(t, newServer(), purraotel.Observer(tel.tp, tel.mp, purraotel.Options{}), nil)
	reg, _ := catalog.Registration("search")
	for _, args := range []string{`{"q":"a"}`, `{"q":"b"}`, `{"q":"toolong"}`, `{"q":"err"}`} {
		_, err := reg.Run(context.Background(), json.RawMessage(args), purramcp.ToolContext{})
		require.NoError(t, err)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	assert.Equal(t, "purra.dev/purramcp/integrations/purraotel", rm.ScopeMetrics[0].Scope.Name)
	require.Len(t, rm.ScopeMetrics[0].Metrics, 1)
	m := rm.ScopeMetrics[0].Metrics[0]
	assert.Equal(t, "mcp.client.operation.duration", m.Name)
	assert.Equal(t, "s", m.Unit)
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%T", m.Data)
	counts := map[string]uint64{}
	for _, p := range h.DataPoints {
		assert.Equal(t, []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}, p.Bounds)
		assert.Len(t, p.BucketCounts, 15)
		var sum uint64
		for _, c := range p.BucketCounts {
			sum += c
		}
		assert.Equal(t, p.Count, sum)
		assert.GreaterOrEqual(t, p.Sum, 0.0)
		var key []string
		for _, kv := range p.Attributes.ToSlice() {
			key = append(key, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
		}
		counts[strings.Join(key, ",")] = p.Count
	}
	assert.Equal(t, map[string]uint64{
		"mcp.method.name=tools/list":                                                          1,
		"gen_ai.tool.name=search,mcp.method.name=tools/call":                                  2,
		"error.type=mcp_invalid_arguments,gen_ai.tool.name=search,mcp.method.name=tools/call": 1,
		"error.type=tool_error,gen_ai.tool.name=search,mcp.method.name=tools/call":            1,
	}, counts)
}

// TestObserver_Canary: no remote text (description, result, tool error) and
// no argument value appears in any span name, attribute, event, status or
// metric attribute.
func TestObserver_Canary(t *testing.T) {
	tel := newTelemetry(t)
	catalog := session(t, newServer(), purraotel.Observer(tel.tp, tel.mp, purraotel.Options{}), purraotel.Propagator(nil))
	reg, _ := catalog.Registration("search")
	ctx, parent := tel.tp.Tracer("host").Start(context.Background(), "turn")
	for _, args := range []string{`{"q":"a","note":"` + secret + `"}`, `{"q":"err","note":"` + secret + `"}`,
		`{"q":"` + secret + `"}`} {
		_, err := reg.Run(ctx, json.RawMessage(args), purramcp.ToolContext{})
		require.NoError(t, err)
	}
	parent.End()
	var dump strings.Builder
	for _, s := range tel.spans.Ended() {
		fmt.Fprintf(&dump, "%s %v %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status(), s.Links())
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	fmt.Fprintf(&dump, "%+v", rm)
	require.Contains(t, dump.String(), "tools/call search", "the dump holds the spans")
	assert.NotContains(t, dump.String(), secret)
	assert.NotContains(t, dump.String(), "found")
}

// TestPropagator_TraceparentArrives: with purraotel.Propagator the server
// sees the caller's span context as traceparent in _meta; without a span
// in ctx it sees no _meta at all.
func TestPropagator_TraceparentArrives(t *testing.T) {
	tel := newTelemetry(t)
	s := newServer()
	catalog := session(t, s, purraotel.Observer(tel.tp, tel.mp, purraotel.Options{}), purraotel.Propagator(nil))
	reg, _ := catalog.Registration("search")
	ctx, parent := tel.tp.Tracer("host").Start(context.Background(), "turn")
	_, err := reg.Run(ctx, json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
	require.NoError(t, err)
	parent.End()
	_, err = reg.Run(context.Background(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
	require.NoError(t, err)
	sc := parent.SpanContext()
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, []map[string]any{
		{"traceparent": fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())},
		nil,
	}, []map[string]any{s.metas[0], s.metas[1]})
	assert.Len(t, s.metas, 2)
}
