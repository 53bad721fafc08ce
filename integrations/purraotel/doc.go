// Package purraotel reports purramcp's audit events to OpenTelemetry as the
// semantic conventions for MCP clients ask (gen-ai/mcp.md): one CLIENT span
// per tool call, one per discovery attempt, and the histogram
// mcp.client.operation.duration. It also adapts an OpenTelemetry text map
// propagator to [purramcp.TracePropagator], so that a tools/call carries the
// caller's trace context to the server in params._meta.
//
// A host passes the observer to discovery (or to a fleet, which takes the
// same function):
//
//	otel := purraotel.New(tp, mp, purraotel.Options{})
//	opts := purramcp.DiscoveryOptions{
//		Monitor:         monitor,
//		Observer:        otel.Observe,
//		CallStart:       otel.StartCall,
//		TracePropagator: purraotel.Propagator(nil), // W3C traceparent/tracestate
//	}
//	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", bindings, opts)
//
// Each Run then has a span named "tools/call {local name}", a child of the
// span in the Run's ctx, started by StartCall before the request is written
// and ended by Observe when the Run ends. The traceparent the [Propagator]
// sends names it, so an instrumented server's span is its child. When the
// Run's ctx already holds a GenAI execute_tool span for the same tool
// (ADK-Go makes one), the MCP attributes are added to it instead of a
// second span, as the conventions ask, and the traceparent names it.
// [Observer] is Observe without StartCall: the span is then made when the
// Run has ended, with the Run's own times, and the traceparent names the
// caller's span.
//
// A tool's own error result (isError) has error.type "tool_error", as the
// conventions fix; every other failure has its code as error.type, and
// every failed span carries the exact code in purramcp.code.
//
// Nothing of a payload is ever recorded: no arguments, results, schemas,
// descriptions or remote error text (the purramcp events carry none), and
// the conventions' opt-in payload attributes cannot be turned on here.
package purraotel
