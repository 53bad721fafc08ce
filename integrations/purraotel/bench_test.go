package purraotel_test

import (
	"context"
	"encoding/json"
	"testing"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraotel"
)

// BenchmarkRun is one Run over an in-memory session without an observer
// and with the OpenTelemetry observer on SDK providers (an in-memory span
// recorder and a manual metric reader), under a caller span.
func BenchmarkRun(b *testing.B) {
	for _, tc := range []struct {
		name string
		otel bool
	}{{"observer=none", false}, {"observer=otel", true}} {
		b.Run(tc.name, func(b *testing.B) {
			tel := newTelemetry(b)
			var observe func(context.Context, purramcp.Event)
			if tc.otel {
				observe = purraotel.Observer(tel.tp, tel.mp, purraotel.Options{})
			}
			catalog := session(b, newServer(), observe, nil)
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
