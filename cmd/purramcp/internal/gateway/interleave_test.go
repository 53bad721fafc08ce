//go:build purrabench

package gateway_test

import (
	"slices"
	"testing"
	"time"
)

// TestInterleavedGatewayRatio times rounds of calls on three paths over the
// same transports (straight upstream, through a pass-through proxy with no
// checks, through the gateway), rotating which goes first, so drift in
// machine load falls on all three, and reports the median per-call time of
// each and the median of each round's ratios: gateway/direct, and
// gateway/passthrough, the cost of the gateway's own work above any second
// hop. Run with
// go test -tags purrabench -run TestInterleavedGatewayRatio -v ./internal/gateway   (in cmd/purramcp)
func TestInterleavedGatewayRatio(t *testing.T) {
	const rounds, calls = 21, 200
	ctx := t.Context()
	paths := []callPath{
		directPath(t, ctx, newUpstream("Search documents")),
		passthroughPath(t, ctx, newUpstream("Search documents")),
		gatewayPath(t, ctx, newUpstream("Search documents")),
	}
	time1 := func(p callPath) time.Duration {
		start := time.Now()
		for range calls {
			p.call(t, ctx)
		}
		return time.Since(start)
	}
	for _, p := range paths { // warm every path
		time1(p)
	}
	per := make([][]time.Duration, len(paths))
	var overDirect, overPass []float64
	for i := range rounds {
		took := make([]time.Duration, len(paths))
		for j := range paths {
			k := (i + j) % len(paths) // rotate the order
			took[k] = time1(paths[k])
		}
		for k, d := range took {
			per[k] = append(per[k], d/calls)
		}
		overDirect = append(overDirect, float64(took[2])/float64(took[0]))
		overPass = append(overPass, float64(took[2])/float64(took[1]))
	}
	median := func(s []time.Duration) time.Duration { slices.Sort(s); return s[len(s)/2] }
	slices.Sort(overDirect)
	slices.Sort(overPass)
	t.Logf("per call, median of %d rotated rounds of %d calls: direct %v, passthrough %v, gateway %v; "+
		"gateway/direct %.2f, gateway/passthrough %.2f", rounds, calls,
		median(per[0]), median(per[1]), median(per[2]), overDirect[rounds/2], overPass[rounds/2])
}
