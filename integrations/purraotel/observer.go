package purraotel

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"purra.dev/purramcp"
)

// scopeName is the instrumentation scope of the tracer and the meter.
const scopeName = "purra.dev/purramcp/integrations/purraotel"

// Names the conventions fix.
const (
	// DurationMetric is the histogram of operation durations, in seconds.
	DurationMetric = "mcp.client.operation.duration"

	methodToolsCall = "tools/call"
	methodToolsList = "tools/list"
	executeTool     = "execute_tool"
)

// DurationBuckets are the explicit bucket boundaries, in seconds, the
// conventions recommend for mcp.client.operation.duration.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Attribute keys: the conventions' and purramcp's own (prefix "purramcp.").
const (
	keyMethod        = attribute.Key("mcp.method.name")
	keyProtocol      = attribute.Key("mcp.protocol.version")
	keyOperation     = attribute.Key("gen_ai.operation.name")
	keyToolName      = attribute.Key("gen_ai.tool.name")
	keyToolCallID    = attribute.Key("gen_ai.tool.call.id")
	keyErrorType     = attribute.Key("error.type")
	keyTransport     = attribute.Key("network.transport")
	keyServerID      = attribute.Key("purramcp.server_id")
	keyDigest        = attribute.Key("purramcp.revision_digest")
	keyRemoteName    = attribute.Key("purramcp.remote_name")
	keyRunID         = attribute.Key("purramcp.run_id")
	keyRequests      = attribute.Key("purramcp.requests")
	keyArgumentBytes = attribute.Key("purramcp.argument_bytes")
	keyResultBytes   = attribute.Key("purramcp.result_bytes")
	keyAttempt       = attribute.Key("purramcp.attempt")
	keyPages         = attribute.Key("purramcp.pages")
	keyTransportKind = attribute.Key("purramcp.transport")
)

// Options configures an Observer. The zero value is the default.
type Options struct {
	// Attributes are added to every span the observer makes (not to the
	// metric, whose attributes stay the conventions' low-cardinality set):
	// for example server.address of the MCP server. nil adds none. The
	// slice is copied.
	Attributes []attribute.KeyValue
}

// Observer returns a function for [purramcp.DiscoveryOptions.Observer] (and a
// fleet's Options.Observer) that turns each [purramcp.Event] into
// OpenTelemetry telemetry:
//
//   - a call ("call" event) becomes a CLIENT span named
//     "tools/call {local name}", child of the span in the Run's ctx, from
//     the Run's start to its end, with mcp.method.name "tools/call",
//     gen_ai.operation.name "execute_tool", gen_ai.tool.name (the local
//     name), gen_ai.tool.call.id (the ToolContext's CallID, when set),
//     mcp.protocol.version, network.transport ("pipe" for stdio, "tcp" for
//     HTTP; absent otherwise), error.type (the mcp_* code, "canceled" or
//     "host_failure") with an Error status, and purramcp.server_id,
//     purramcp.revision_digest, purramcp.remote_name, purramcp.run_id,
//     purramcp.requests, purramcp.argument_bytes, purramcp.result_bytes and
//     purramcp.transport. When the ctx's span is a recording GenAI
//     execute_tool span for the same tool, these attributes (but the name
//     and operation, already there) are set on it and no span is made;
//   - a discovery attempt ("discover" event) becomes a CLIENT span named
//     "tools/list" with mcp.method.name, mcp.protocol.version,
//     network.transport, error.type and purramcp.server_id,
//     purramcp.revision_digest, purramcp.attempt, purramcp.pages and
//     purramcp.transport;
//   - both record their duration in seconds in the histogram
//     mcp.client.operation.duration ([DurationBuckets]) with
//     mcp.method.name, gen_ai.tool.name (calls) and error.type (failures).
//
// A nil tp or mp means OpenTelemetry's global provider at the time Observer
// is called. The returned function is safe for concurrent use and never
// blocks beyond what the providers do. It records no payload: purramcp
// events carry none.
func Observer(tp trace.TracerProvider, mp metric.MeterProvider, opts Options) func(context.Context, purramcp.Event) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	// On an invalid instrument the SDK returns a working no-op one beside
	// its error; the spans are made either way.
	hist, _ := mp.Meter(scopeName).Float64Histogram(DurationMetric, metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	o := &observer{tracer: tp.Tracer(scopeName), hist: hist, extra: append([]attribute.KeyValue(nil), opts.Attributes...)}
	return o.observe
}

// observer is the state of one Observer.
type observer struct {
	tracer trace.Tracer
	hist   metric.Float64Histogram
	extra  []attribute.KeyValue
}

func (o *observer) observe(ctx context.Context, e purramcp.Event) {
	switch e.Kind {
	case purramcp.EventCall:
		o.call(ctx, e)
	case purramcp.EventDiscover:
		o.discover(ctx, e)
	}
}

// call reports one Run.
func (o *observer) call(ctx context.Context, e purramcp.Event) {
	o.record(ctx, e, methodToolsCall, e.LocalName)
	parent := trace.SpanFromContext(ctx)
	reuse := isToolSpan(parent, e.LocalName)
	attrs := make([]attribute.KeyValue, 0, 20+len(o.extra))
	attrs = append(attrs, keyMethod.String(methodToolsCall))
	if !reuse {
		attrs = append(attrs, keyOperation.String(executeTool), keyToolName.String(e.LocalName))
	}
	if e.CallID != "" {
		attrs = append(attrs, keyToolCallID.String(e.CallID))
	}
	attrs = common(attrs, e)
	attrs = append(attrs, keyRemoteName.String(e.RemoteName),
		keyRequests.Int(e.Requests), keyArgumentBytes.Int(e.ArgumentBytes), keyResultBytes.Int(e.ResultBytes))
	if e.RunID != "" {
		attrs = append(attrs, keyRunID.String(e.RunID))
	}
	if reuse {
		parent.SetAttributes(attrs...)
		return
	}
	o.span(ctx, e, methodToolsCall+" "+e.LocalName, attrs)
}

// discover reports one discovery attempt.
func (o *observer) discover(ctx context.Context, e purramcp.Event) {
	attrs := make([]attribute.KeyValue, 0, 12+len(o.extra))
	attrs = append(attrs, keyMethod.String(methodToolsList))
	attrs = common(attrs, e)
	attrs = append(attrs, keyAttempt.Int(e.Attempt), keyPages.Int(e.Pages))
	o.record(ctx, e, methodToolsList, "")
	o.span(ctx, e, methodToolsList, attrs)
}

// common appends the attributes calls and discoveries share.
func common(attrs []attribute.KeyValue, e purramcp.Event) []attribute.KeyValue {
	if e.ProtocolVersion != "" {
		attrs = append(attrs, keyProtocol.String(e.ProtocolVersion))
	}
	if t := networkTransport(e.Transport); t != "" {
		attrs = append(attrs, keyTransport.String(t))
	}
	if e.Transport != "" {
		attrs = append(attrs, keyTransportKind.String(e.Transport))
	}
	if e.Code != "" {
		attrs = append(attrs, keyErrorType.String(e.Code))
	}
	if e.ServerID != "" {
		attrs = append(attrs, keyServerID.String(e.ServerID))
	}
	if e.RevisionDigest != "" {
		attrs = append(attrs, keyDigest.String(e.RevisionDigest))
	}
	return attrs
}

// span makes the CLIENT span of one event, from its start to its end.
func (o *observer) span(ctx context.Context, e purramcp.Event, name string, attrs []attribute.KeyValue) {
	attrs = append(attrs, o.extra...)
	_, s := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(e.Start),
		trace.WithAttributes(attrs...))
	if e.Code != "" {
		s.SetStatus(codes.Error, e.Code)
	}
	s.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
}

// record adds the event's duration to the histogram.
func (o *observer) record(ctx context.Context, e purramcp.Event, method, tool string) {
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, keyMethod.String(method))
	if tool != "" {
		attrs = append(attrs, keyToolName.String(tool))
	}
	if e.Code != "" {
		attrs = append(attrs, keyErrorType.String(e.Code))
	}
	o.hist.Record(ctx, e.Duration.Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}

// networkTransport is the conventions' network.transport of a purramcp
// transport kind: "pipe" for stdio, "tcp" for HTTP, "" otherwise.
func networkTransport(kind string) string {
	switch kind {
	case purramcp.TransportStdio:
		return "pipe"
	case purramcp.TransportHTTP:
		return "tcp"
	}
	return ""
}

// readableSpan is what the OpenTelemetry SDK's spans expose beyond the API:
// their name and attributes.
type readableSpan interface {
	Name() string
	Attributes() []attribute.KeyValue
}

// isToolSpan reports whether s is a recording GenAI execute_tool span for
// the tool named local: named "execute_tool {local}", or carrying
// gen_ai.operation.name "execute_tool" and gen_ai.tool.name local.
func isToolSpan(s trace.Span, local string) bool {
	if !s.IsRecording() {
		return false
	}
	r, ok := s.(readableSpan)
	if !ok {
		return false
	}
	if r.Name() == executeTool+" "+local {
		return true
	}
	var op, tool string
	for _, kv := range r.Attributes() {
		switch kv.Key {
		case keyOperation:
			op = kv.Value.AsString()
		case keyToolName:
			tool = kv.Value.AsString()
		}
	}
	return op == executeTool && tool == local
}
