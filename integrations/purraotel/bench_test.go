package purraotel_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraotel"
)

// BenchmarkRun is one Run over an in-memory session without an observer,
// with the OpenTelemetry observer on SDK providers (an in-memory span
// recorder and a manual metric reader), and with it, StartCall and the
// propagator, under a caller span.
func BenchmarkRun(b *testing.B) {
	for _, tc := range []struct {
		name        string
		otel, start bool
	}{{"observer=none", false, false}, {"observer=otel", true, false}, {"observer=otel+start", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			tel := newTelemetry(b)
			var opts purramcp.DiscoveryOptions
			if tc.otel {
				in := purraotel.New(tel.tp, tel.mp, purraotel.Options{})
				opts.Observer = in.Observe
				if tc.start {
					opts.CallStart, opts.TracePropagator = in.StartCall, purraotel.Propagator(nil)
				}
			}
			catalog := sessionWith(b, newServer(), opts)
			reg, _ := catalog.Registration("search")
			ctx, span := tel.tp.Tracer("host").Start(context.Background(), "turn")
			defer span.End()
			args := json.RawMessage(`{"q":"a"}`)
			b.ReportAllocs()
			for b.Loop() {
				res, err := reg.Run(ctx, args, purramcp.ToolContext{})
				if err != nil || res.ErrorCode != "" {
					b.Fatal(err, res.ErrorCode)
				}
				if tc.otel {
					tel.spans.Reset() // the recorder would otherwise keep every span
				}
			}
		})
	}
}

// BenchmarkObserverCall is the observer alone on one call event (span and
// histogram point), the part of BenchmarkRun's difference that is
// purraotel's own.
func BenchmarkObserverCall(b *testing.B) {
	tel := newTelemetry(b)
	observe := purraotel.Observer(tel.tp, tel.mp, purraotel.Options{})
	ctx, span := tel.tp.Tracer("host").Start(context.Background(), "turn")
	defer span.End()
	e := purramcp.Event{Kind: "call", ServerID: "docs", RevisionDigest: "d", LocalName: "search",
		RemoteName: "remote.search", Requests: 1, ArgumentBytes: 9, ResultBytes: 40,
		ProtocolVersion: purramcp.ProtocolVersion20251125, Transport: purramcp.TransportStdio, Start: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		observe(ctx, e)
		tel.spans.Reset()
	}
	if len(tel.spans.Ended()) != 0 {
		b.Fatal("the recorder was not reset")
	}
}
