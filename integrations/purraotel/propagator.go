package purraotel

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"purra.dev/purramcp"
)

// Propagator adapts an OpenTelemetry text map propagator to
// [purramcp.TracePropagator], for [purramcp.DiscoveryOptions.TracePropagator]:
// each tools/call then carries the trace context of its Run's ctx in
// params._meta. nil means propagation.TraceContext{} (W3C traceparent and
// tracestate), not the global propagator, so that no baggage is sent unless
// asked for; purramcp sends only a well-formed traceparent and tracestate
// whatever p writes.
func Propagator(p propagation.TextMapPropagator) purramcp.TracePropagator {
	if p == nil {
		p = propagation.TraceContext{}
	}
	return textMap{p}
}

// textMap is the TracePropagator Propagator returns.
type textMap struct{ p propagation.TextMapPropagator }

// Inject writes ctx's trace context into carrier.
func (t textMap) Inject(ctx context.Context, carrier map[string]string) {
	t.p.Inject(ctx, propagation.MapCarrier(carrier))
}
