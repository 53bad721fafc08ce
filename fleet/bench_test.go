package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/purramcptest"
)

// BenchmarkRun16 is Registrations() plus one Run on a fleet of 16
// in-memory servers; BenchmarkRunCatalog is one Run of the same tool on a
// bare catalog over the same kind of session. Their ratio is the fleet's
// overhead.
func BenchmarkRun16(b *testing.B) {
	servers := map[string]fleet.ServerConfig{}
	for i := range 16 {
		servers[fmt.Sprintf("s%02d", i)] = memConfig(newMemServer(b), fmt.Sprintf("s%02d_", i), 0)
	}
	f := startFleet(b, &fleet.Config{Servers: servers}, fleet.Options{})
	if n := len(f.Registrations()); n != 32 {
		b.Fatalf("%d registrations", n)
	}
	args := json.RawMessage(convertArgs)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		defs := f.Registrations()
		res, err := defs[14].Run(ctx, args, purramcp.ToolContext{}) // s07_convert_units
		if err != nil || res.ErrorCode != "" {
			b.Fatalf("run: %v %s", err, res.ErrorCode)
		}
	}
}

// BenchmarkRun16Ratio alternates rounds of BenchmarkRun16's and
// BenchmarkRunCatalog's loops in one process, so that a shared machine's
// load drifts over both alike, and reports the median of the per-round
// time ratios (fleet / bare catalog) as "ratio".
func BenchmarkRun16Ratio(b *testing.B) {
	servers := map[string]fleet.ServerConfig{}
	for i := range 16 {
		servers[fmt.Sprintf("s%02d", i)] = memConfig(newMemServer(b), fmt.Sprintf("s%02d_", i), 0)
	}
	f := startFleet(b, &fleet.Config{Servers: servers}, fleet.Options{})
	s := purramcptest.Start(b, purramcptest.Options{}, unitTools("")...)
	catalog, err := purramcp.DiscoverTools(b.Context(), s.Session, "s07", unitBindings("s07_"),
		purramcp.DiscoveryOptions{Monitor: s.Monitor})
	if err != nil {
		b.Fatal(err)
	}
	bare, _ := catalog.Registration("s07_convert_units")
	args := json.RawMessage(convertArgs)
	ctx := context.Background()
	check := func(res purramcp.ToolResult, err error) {
		if err != nil || res.ErrorCode != "" {
			b.Fatalf("run: %v %s", err, res.ErrorCode)
		}
	}
	ratio := func(b *testing.B, fleetRun func()) {
		const perRound = 50
		var ratios []float64
		for b.Loop() {
			start := time.Now()
			for range perRound {
				check(bare.Run(ctx, args, purramcp.ToolContext{}))
			}
			mid := time.Now()
			for range perRound {
				fleetRun()
			}
			ratios = append(ratios, float64(time.Since(mid))/float64(mid.Sub(start)))
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "ratio")
	}
	// Registrations()+Run, as the issue measures it.
	b.Run("registrations+run", func(b *testing.B) {
		ratio(b, func() { check(f.Registrations()[14].Run(ctx, args, purramcp.ToolContext{})) })
	})
	// Run alone through a fleet registration: the routing's share.
	def := f.Registrations()[14]
	b.Run("run", func(b *testing.B) {
		ratio(b, func() { check(def.Run(ctx, args, purramcp.ToolContext{})) })
	})
}

// BenchmarkRunCatalog: see BenchmarkRun16.
func BenchmarkRunCatalog(b *testing.B) {
	s := purramcptest.Start(b, purramcptest.Options{}, unitTools("")...)
	catalog, err := purramcp.DiscoverTools(b.Context(), s.Session, "s07", unitBindings("s07_"),
		purramcp.DiscoveryOptions{Monitor: s.Monitor})
	if err != nil {
		b.Fatal(err)
	}
	def, _ := catalog.Registration("s07_convert_units")
	args := json.RawMessage(convertArgs)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := def.Run(ctx, args, purramcp.ToolContext{})
		if err != nil || res.ErrorCode != "" {
			b.Fatalf("run: %v %s", err, res.ErrorCode)
		}
	}
}

// BenchmarkRegistrations16 is Registrations() alone on a fleet of 16
// in-memory servers (32 tools): the part of BenchmarkRun16 a bare catalog
// does not pay.
func BenchmarkRegistrations16(b *testing.B) {
	servers := map[string]fleet.ServerConfig{}
	for i := range 16 {
		servers[fmt.Sprintf("s%02d", i)] = memConfig(newMemServer(b), fmt.Sprintf("s%02d_", i), 0)
	}
	f := startFleet(b, &fleet.Config{Servers: servers}, fleet.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if n := len(f.Registrations()); n != 32 {
			b.Fatalf("%d registrations", n)
		}
	}
}
