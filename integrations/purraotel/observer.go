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
	toolError       = "tool_error" // error.type of a tools/call result with isError true
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
	keyCode          = attribute.Key("purramcp.code")
)

// Options configures an Observer. The zero value is the default.
type Options struct {
	// Attributes are added to every span the observer makes (not to the
	// metric, whose attributes stay the conventions' low-cardinality set):
	// for example server.address of the MCP server. nil adds none. The
	// slice is copied.
	Attributes []attribute.KeyValue
}

// Observer returns New(tp, mp, opts).Observe: the instrumentation without
// its CallStart hook, so that each call's span is made when the call has
// ended (see [Instrumentation.Observe]).
func Observer(tp trace.TracerProvider, mp metric.MeterProvider, opts Options) func(context.Context, purramcp.Event) {
	return New(tp, mp, opts).Observe
}

// An Instrumentation turns purramcp's events into OpenTelemetry telemetry
// as the semantic conventions for MCP clients ask. Its Observe method goes
// in [purramcp.DiscoveryOptions.Observer] (and a fleet's Options.Observer);
// its StartCall method, in [purramcp.DiscoveryOptions.CallStart] beside it,
// starts each call's span before the request is written, so that the trace
// context a [Propagator] puts in the request names that span and the
// server's span is its child. It is safe for concurrent use.
type Instrumentation struct {
	tracer trace.Tracer
	hist   metric.Float64Histogram
	extra  []attribute.KeyValue
}

// New returns the Instrumentation over tp and mp. A nil tp or mp means
// OpenTelemetry's global provider at the time New is called.
func New(tp trace.TracerProvider, mp metric.MeterProvider, opts Options) *Instrumentation {
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
	return &Instrumentation{tracer: tp.Tracer(scopeName), hist: hist, extra: append([]attribute.KeyValue(nil), opts.Attributes...)}
}

// Observe reports one purramcp event:
//
//   - a call ("call" event) is a CLIENT span named "tools/call {local
//     name}", child of the span in the Run's ctx, from the Run's start to
//     its end, with mcp.method.name "tools/call", gen_ai.operation.name
//     "execute_tool", gen_ai.tool.name (the local name),
//     gen_ai.tool.call.id (the ToolContext's CallID, when set),
//     mcp.protocol.version, network.transport ("pipe" for stdio, "tcp" for
//     HTTP; absent otherwise), and purramcp.server_id,
//     purramcp.revision_digest, purramcp.remote_name, purramcp.run_id,
//     purramcp.requests, purramcp.argument_bytes, purramcp.result_bytes and
//     purramcp.transport. When StartCall started the span, Observe ends
//     it; otherwise Observe makes it now, with the Run's start and end
//     times. When the Run's ctx holds a recording GenAI execute_tool span
//     for the same tool, these attributes (but the name and operation,
//     already there) are set on it and no span is made;
//   - a discovery attempt ("discover" event) is a CLIENT span named
//     "tools/list" with mcp.method.name, mcp.protocol.version,
//     network.transport and purramcp.server_id, purramcp.revision_digest,
//     purramcp.attempt, purramcp.pages and purramcp.transport;
//   - a failed call or attempt has an Error status whose description is
//     its code, purramcp.code (the exact code: an mcp_* code, "canceled"
//     or "host_failure") and error.type: "tool_error" for a tool's own
//     error result (mcp_tool_error, isError true), as the conventions fix,
//     else the code itself;
//   - both record their duration in seconds in the histogram
//     mcp.client.operation.duration ([DurationBuckets]) with
//     mcp.method.name, gen_ai.tool.name (calls) and error.type (failures).
//
// It never blocks beyond what the providers do. It records no payload:
// purramcp events carry none.
func (o *Instrumentation) Observe(ctx context.Context, e purramcp.Event) {
	switch e.Kind {
	case purramcp.EventCall:
		o.call(ctx, e)
	case purramcp.EventDiscover:
		o.discover(ctx, e)
	}
}

// StartCall starts the CLIENT span of a call ("call_start" event) with the
// attributes known before the request and returns ctx with it, for
// [purramcp.DiscoveryOptions.CallStart]; Observe ends it with the rest when
// the call's event arrives with that ctx. Inside a recording GenAI
// execute_tool span for the same tool, it starts nothing and returns ctx:
// that span is the call's, and the request's trace context names it. Any
// other event returns ctx unchanged.
func (o *Instrumentation) StartCall(ctx context.Context, e purramcp.Event) context.Context {
	if e.Kind != purramcp.EventCallStart || isToolSpan(trace.SpanFromContext(ctx), e.LocalName) {
		return ctx
	}
	attrs := callAttrs(make([]attribute.KeyValue, 0, 20+len(o.extra)), e, false)
	attrs = append(attrs, o.extra...)
	ctx, s := o.tracer.Start(ctx, methodToolsCall+" "+e.LocalName, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(e.Start), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, startedKey{o}, s)
}

// startedKey holds, in a ctx StartCall returned, the span it started.
type startedKey struct{ o *Instrumentation }

// call reports one Run.
func (o *Instrumentation) call(ctx context.Context, e purramcp.Event) {
	o.record(ctx, e, methodToolsCall, e.LocalName)
	if s, ok := ctx.Value(startedKey{o}).(trace.Span); ok {
		s.SetAttributes(outcomeAttrs(make([]attribute.KeyValue, 0, 6), e)...)
		o.end(s, e)
		return
	}
	parent := trace.SpanFromContext(ctx)
	reuse := isToolSpan(parent, e.LocalName)
	attrs := outcomeAttrs(callAttrs(make([]attribute.KeyValue, 0, 24+len(o.extra)), e, reuse), e)
	if reuse {
		parent.SetAttributes(attrs...)
		return
	}
	o.span(ctx, e, methodToolsCall+" "+e.LocalName, attrs)
}

// callAttrs appends the attributes of a call known at its start; reuse
// leaves out the name and operation an execute_tool span already has.
func callAttrs(attrs []attribute.KeyValue, e purramcp.Event, reuse bool) []attribute.KeyValue {
	attrs = append(attrs, keyMethod.String(methodToolsCall))
	if !reuse {
		attrs = append(attrs, keyOperation.String(executeTool), keyToolName.String(e.LocalName))
	}
	if e.CallID != "" {
		attrs = append(attrs, keyToolCallID.String(e.CallID))
	}
	attrs = common(attrs, e)
	attrs = append(attrs, keyRemoteName.String(e.RemoteName))
	if e.RunID != "" {
		attrs = append(attrs, keyRunID.String(e.RunID))
	}
	return attrs
}

// outcomeAttrs appends the attributes of a call known at its end.
func outcomeAttrs(attrs []attribute.KeyValue, e purramcp.Event) []attribute.KeyValue {
	attrs = append(attrs, keyRequests.Int(e.Requests), keyArgumentBytes.Int(e.ArgumentBytes), keyResultBytes.Int(e.ResultBytes))
	return failure(attrs, e)
}

// discover reports one discovery attempt.
func (o *Instrumentation) discover(ctx context.Context, e purramcp.Event) {
	attrs := make([]attribute.KeyValue, 0, 12+len(o.extra))
	attrs = append(attrs, keyMethod.String(methodToolsList))
	attrs = failure(common(attrs, e), e)
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
	if e.ServerID != "" {
		attrs = append(attrs, keyServerID.String(e.ServerID))
	}
	if e.RevisionDigest != "" {
		attrs = append(attrs, keyDigest.String(e.RevisionDigest))
	}
	return attrs
}

// failure appends error.type and purramcp.code of a failed event.
func failure(attrs []attribute.KeyValue, e purramcp.Event) []attribute.KeyValue {
	if e.Code == "" {
		return attrs
	}
	return append(attrs, keyErrorType.String(errorType(e.Code)), keyCode.String(e.Code))
}

// errorType is the error.type of a code: "tool_error" for a tool's own
// error result, as the conventions fix, else the code.
func errorType(code string) string {
	if code == purramcp.CodeToolError {
		return toolError
	}
	return code
}

// span makes the CLIENT span of one event, from its start to its end.
func (o *Instrumentation) span(ctx context.Context, e purramcp.Event, name string, attrs []attribute.KeyValue) {
	attrs = append(attrs, o.extra...)
	_, s := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(e.Start),
		trace.WithAttributes(attrs...))
	o.end(s, e)
}

// end sets the span's status from the event's code and ends it at the
// event's end.
func (o *Instrumentation) end(s trace.Span, e purramcp.Event) {
	if e.Code != "" {
		s.SetStatus(codes.Error, e.Code)
	}
	s.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
}

// record adds the event's duration to the histogram.
func (o *Instrumentation) record(ctx context.Context, e purramcp.Event, method, tool string) {
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, keyMethod.String(method))
	if tool != "" {
		attrs = append(attrs, keyToolName.String(tool))
	}
	if e.Code != "" {
		attrs = append(attrs, keyErrorType.String(errorType(e.Code)))
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
