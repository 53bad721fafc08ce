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
//	opts := purramcp.DiscoveryOptions{
//		Monitor:         monitor,
//		Observer:        purraotel.Observer(tp, mp, purraotel.Options{}),
//		TracePropagator: purraotel.Propagator(nil), // W3C traceparent/tracestate
//	}
//	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", bindings, opts)
//
// Each Run then ends a span named "tools/call {local name}", a child of the
// span in the Run's ctx, started when the Run started and ended when it
// ended. When that ctx's span is already a GenAI execute_tool span for the
// same tool (ADK-Go makes one), the MCP attributes are added to it instead
// of a second span, as the conventions ask.
//
// Nothing of a payload is ever recorded: no arguments, results, schemas,
// descriptions or remote error text (the purramcp events carry none), and
// the conventions' opt-in payload attributes cannot be turned on here.
//
// Because a purramcp event is reported when the Run has ended, the span is
// created then, with the Run's own start and end times. The traceparent a
// [Propagator] sends is therefore the caller's span context: the server's
// span is a sibling of the tools/call span under the caller's span, not its
// child.
package purraotel
