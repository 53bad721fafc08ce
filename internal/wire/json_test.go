package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/testvalues"
)

// TestWireJSON_SameAsMarshal: for random values, random numbers and every
// escape class, AppendJSON of the snapshot writes exactly what
// json.Marshal writes for its Go form.
func TestWireJSON_SameAsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	lim := strictjson.Limits{Depth: 64, Nodes: 1 << 16, Bytes: 1 << 20}
	check := func(v any) {
		t.Helper()
		snap, err := strictjson.Snapshot(v, lim)
		if err != nil {
			return // outside the domain: Run never gets there
		}
		want, err := json.Marshal(strictjson.ToGo(snap))
		if err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		if got := AppendJSON(nil, snap); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want)
		}
	}
	for range 20000 {
		check(testvalues.Wire(r, 4))
	}
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		check(f)
		check(math.Trunc(f / (1 << 12)))
		check(float64(r.Int64N(1<<53)) / float64(int64(1)<<r.IntN(60)))
	}
	for c := range rune(0x3000) {
		check(string(c) + "x" + string(c))
	}
	for range 20000 { // integers on both sides of appendNumber's fast path
		check(float64(r.Int64N(4e15) - 2e15))
		check(float64(r.Int64N(2000) - 1000))
	}

}

// TestWireNumber_IntegersAsMarshal: appendNumber writes exactly what
// json.Marshal writes for the integers at and around the edges of its
// integer fast path (±10^15), for −0, which keeps its sign, and for random
// integers of every magnitude up to 2^53.
func TestWireNumber_IntegersAsMarshal(t *testing.T) {
	numbers := []float64{0, math.Copysign(0, -1), 1, -1, 9, 10, 1e14, 1e15 - 1, -(1e15 - 1), 1e15, -1e15, 1e15 + 1,
		-(1e15 + 1), 1 << 53, 1<<53 - 1, -(1<<53 - 1), 0.5, -0.5, 1e15 - 0.5, 1e21, 1e-7}
	r := rand.New(rand.NewPCG(14, 2))
	for range 50000 {
		numbers = append(numbers, float64(r.Int64N(1<<53)>>r.IntN(53)), -float64(r.Int64N(1<<53)>>r.IntN(53)))
	}
	for _, f := range numbers {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendNumber(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("appendNumber(%v) = %s, json.Marshal %s", f, got, want)
		}
	}
}
