//go:build purrabench

package gateway_test

import (
	"slices"
	"testing"
	"time"
)

// TestInterleavedGatewayRatio times rounds of calls straight upstream and
// through the gateway, alternating, and reports the median ratio, so drift
// in machine load falls on both sides. Run with
// go test -tags purrabench -run TestInterleavedGatewayRatio -v ./internal/gateway
func TestInterleavedGatewayRatio(t *testing.T) {
	const rounds, calls = 21, 200
	ctx := t.Context()
	direct := directPath(t, ctx, newUpstream("Search documents"))
	through := gatewayPath(t, ctx, newUpstream("Search documents"))
	time1 := func(p callPath) time.Duration {
		start := time.Now()
		for range calls {
			p.call(t, ctx)
		}
		return time.Since(start)
	}
	time1(direct) // warm both paths
	time1(through)
	ratios := make([]float64, rounds)
	var d, g []time.Duration
	for i := range rounds {
		var dd, gg time.Duration
		if i%2 == 0 { // alternate which path goes first
			dd, gg = time1(direct), time1(through)
		} else {
			gg, dd = time1(through), time1(direct)
		}
		d, g = append(d, dd/calls), append(g, gg/calls)
		ratios[i] = float64(gg) / float64(dd)
	}
	slices.Sort(ratios)
	slices.Sort(d)
	slices.Sort(g)
	t.Logf("per call, median of %d interleaved rounds of %d calls: direct %v, gateway %v, ratio %.2f",
		rounds, calls, d[rounds/2], g[rounds/2], ratios[rounds/2])
}
