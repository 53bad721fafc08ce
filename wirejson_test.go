package purramcp

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/testvalues"
)

// wireNumbers spans encoding/json's float64 spellings: both exponent
// thresholds, the one-digit exponent clean-up, subnormals, the safe-integer
// edge and long fractions.
var wireNumbers = []float64{0, 1, -1, 0.1, -2.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 5e-324, 1e20, 1e21, 9.99e20,
	-1e21, 1e300, 123456789012345680000, 1<<53 - 1, -(1<<53 - 1), 0.30000000000000004, 1e-300, 2.5e-10, 1e-100}

// wireStrings holds every escape class: quotes, backslashes, the short
// control escapes, other controls, HTML characters, U+2028/U+2029, multibyte
// text and astral characters.
var wireStrings = []string{"", "plain", `q"uo\te`, "\b\f\n\r\t", "\x00\x01\x1f\x7f", "<a href=\"x\">&amp;</a>",
	"line\u2028sep\u2029", "é ü 中文", "😀 \U0010ffff", "\ue000", "a/b", "\u00a0\u200b\ufeff"}

// randomWireValue is a random value of the strictjson domain built from
// wireNumbers, wireStrings and testvalues.Plain.
func randomWireValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(9); {
	case k == 0:
		return wireNumbers[r.IntN(len(wireNumbers))]
	case k == 1:
		return wireStrings[r.IntN(len(wireStrings))] + wireStrings[r.IntN(len(wireStrings))]
	case k == 2 || depth <= 0:
		return testvalues.Plain(r, 2)
	case k < 5:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = randomWireValue(r, depth-1)
		}
		return out
	default:
		out := map[string]any{}
		for range r.IntN(6) {
			name := wireStrings[r.IntN(len(wireStrings))]
			if r.IntN(3) == 0 {
				name = []string{"0", "10", "2", "-1", "01", "4294967295", "b", "a", "B"}[r.IntN(9)]
			}
			out[name] = randomWireValue(r, depth-1)
		}
		return out
	}
}

// TestWireJSON_SameAsMarshal: for random values, random numbers and every
// escape class, appendWireJSON of the snapshot writes exactly what
// json.Marshal writes for its Go form, and Run's parseArguments gives the
// same wire bytes and value as the path it replaced (Parse then
// json.Marshal), for texts in any spelling (escapes, number forms, member
// order, array-index names).
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
		if got := appendWireJSON(nil, snap); !bytes.Equal(got, want) {
			t.Fatalf("appendWireJSON:\n got %s\nwant %s", got, want)
		}
	}
	for range 20000 {
		check(randomWireValue(r, 4))
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
	for range 20000 { // integers on both sides of appendWireNumber's fast path
		check(float64(r.Int64N(4e15) - 2e15))
		check(float64(r.Int64N(2000) - 1000))
	}

	contract, err := NewContract(ContractOptions{SchemaID: "s", SchemaVersion: "1",
		Schema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{`{}`, ` { "b" : 1 , "a" : [ 1e2 , -0 , 0.5e-7 , 1E21 ] } `,
		`{"\u003c\u2028":"\ud83d\ude00\n\u0000","10":1,"2":2,"x":{"z":null,"y":true}}`,
		`{"s":"<>&\"\\\/\b\f\r\t\u001f\u007f"}`, `{"n":123456789012345678901234567890,"m":-1.0e-400}`}
	for range 3000 {
		raw, err := json.Marshal(randomWireValue(r, 4))
		if err == nil && bytes.HasPrefix(raw, []byte("{")) {
			texts = append(texts, string(raw), strings.ReplaceAll(string(raw), ",", " , "))
		}
	}
	for _, text := range texts {
		want, wantErr := contract.Parse(text)
		gotValue, gotWire, gotErr := contract.parseArguments(text)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s: parseArguments %v, Parse %v", text, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		wantWire, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(gotValue)
		if !bytes.Equal(gotWire, wantWire) || !bytes.Equal(again, wantWire) {
			t.Fatalf("%s:\n got %s\nwant %s", text, gotWire, wantWire)
		}
	}
}

// TestWireNumber_IntegersAsMarshal: appendWireNumber writes exactly what
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
		if got := appendWireNumber(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("appendWireNumber(%v) = %s, json.Marshal %s", f, got, want)
		}
	}
}
