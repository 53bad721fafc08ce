package jssize

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

type htmlMarshaler struct{}

func (htmlMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal("<a&b>") }

func TestSize(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want int
	}{
		{"null", nil, 4},
		{"true", true, 4},
		{"ascii", "abc", 5},
		{"empty object", map[string]any{}, 2},
		{"object", map[string]any{"a": 1.0, "b": []any{"x", false}}, 23},
		{"line separator raw in JS", "\u2028", 5},
		{"paragraph separator raw in JS", "a\u2029b", 7},
		{"separator in key", map[string]any{"\u2028": nil}, 12},
		{"escaped backslash then u2028 text", `\u2028`, 9},
		{"backslash before separator", "\\\u2028", 7},
		{"html raw in JS", "<>&", 5},
		{"html from nested MarshalJSON", htmlMarshaler{}, 7},
		{"quote and controls", "\"\n\t\b\f\r", 14},
		{"other control", "\x01", 8},
		{"del raw", "\x7f", 3},
		{"invalid UTF-8 becomes U+FFFD", "\xff", 5},
		{"literal U+FFFD", "\ufffd", 5},
		{"emoji", "😀", 6},
		{"cat", "猫", 5},
		{"integral float", 1.0, 1},
		{"fraction", 0.1, 3},
		{"exponent large", 1e21, 5},
		{"below exponent threshold", 1e20, 21},
		{"small", 1e-7, 4},
		{"min subnormal", 5e-324, 6},
		{"negative zero", math.Copysign(0, -1), 1},
		{"negative zero in array", []any{math.Copysign(0, -1), -0.5, -10.0}, 12},
		{"max safe", 9007199254740991.0, 16},
		{"raw message compacted", json.RawMessage(`{ "a" : 1 }`), 7},
		{"300 x", strings.Repeat("x", 300), 302},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Size(tc.v)
			if err != nil {
				t.Fatalf("Size(%#v) error %v", tc.v, err)
			}
			if got != tc.want {
				t.Errorf("Size(%#v) = %d, want %d", tc.v, got, tc.want)
			}
		})
	}
}

func TestSizeErrors(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), func() {}, make(chan int)} {
		if n, err := Size(v); err == nil {
			t.Errorf("Size(%T) = %d, want an error", v, n)
		}
	}
}

// sizePathCases are values whose fast and marshaled measures must agree:
// every TestSize shape, decoded-value nesting, and strings with each class
// of character JSON.stringify treats differently.
var sizePathCases = []any{
	nil, true, false, "", "abc", "\u2028\u2029", "<>&", "\"\\/", "\x00\x1f\x7f", "\xff\xfe", "\xed\xa0\x80",
	"a\xc3", "😀猫é", 0.0, math.Copysign(0, -1), 1.0, -1.5, 0.1, 1e20, 1e21, -1e21, 1e-6, 1e-7, 1.5e-7,
	5e-324, math.MaxFloat64, 9007199254740993.0, 123456789.125,
	[]any{}, map[string]any{}, []any{nil, []any{}, map[string]any{}},
	map[string]any{"": nil, "\u2028": "\n", "a\xff": []any{math.Copysign(0, -1), 2.5}},
	map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"maxLength": 1.0}}},
}

// TestSizePaths checks valueSize against the encoding/json path, and the
// Placeholder identity, on sizePathCases.
func TestSizePaths(t *testing.T) {
	for _, v := range sizePathCases {
		checkSizePaths(t, v)
	}
}

func checkSizePaths(t *testing.T, v any) {
	t.Helper()
	want, err := marshalSize(v)
	if err != nil {
		t.Fatalf("marshalSize(%#v): %v", v, err)
	}
	if got, ok := valueSize(v, 0); !ok || got != want {
		t.Fatalf("valueSize(%#v) = %d, %v; marshalSize %d", v, got, ok, want)
	}
	type shell struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	whole, err := marshalSize(shell{Name: "<x>", Value: v})
	if err != nil {
		t.Fatalf("marshalSize(shell{%#v}): %v", v, err)
	}
	outer, err := Size(shell{Name: "<x>", Value: Placeholder})
	if err != nil || outer-1+want != whole {
		t.Fatalf("shell around %#v: %d - 1 + %d, want %d (%v)", v, outer, want, whole, err)
	}
}

// TestSizeFallback: values outside the decoded shapes, cycles and depth
// past maxFastDepth take the encoding/json path with its result or error.
func TestSizeFallback(t *testing.T) {
	for _, v := range []any{1, json.Number("1.50"), []any{1}, map[string]any{"a": int64(2)}, []string{"x"}} {
		if _, ok := valueSize(v, 0); ok {
			t.Errorf("valueSize(%#v) took the fast path", v)
		}
		want, _ := marshalSize(v)
		if got, err := Size(v); err != nil || got != want {
			t.Errorf("Size(%#v) = %d, %v; want %d", v, got, err, want)
		}
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	if _, err := Size(cyclic); err == nil {
		t.Error("Size of a cyclic map: no error")
	}
	deep := any(nil)
	for range maxFastDepth + 10 {
		deep = []any{deep}
	}
	want, err := marshalSize(deep)
	if got, err2 := Size(deep); err != nil || err2 != nil || got != want {
		t.Errorf("Size of %d nested arrays = %d, %v; want %d, %v", maxFastDepth+10, got, err2, want, err)
	}
	for _, f := range []float64{math.NaN(), math.Inf(-1)} {
		if _, err := Size([]any{f}); err == nil {
			t.Errorf("Size([%v]): no error", f)
		}
	}
}

// FuzzSize decodes fuzzed JSON text as go-sdk does (encoding/json into any,
// numbers as float64) and checks valueSize against the encoding/json path.
func FuzzSize(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0,0.1,1e21,1e-7,"\u2028",null,true]}`, `"\ud800"`, `"<\u00e9>"`,
		`[{"":{"x":"\n\u0001\u007f"}}]`, `-0.0`, `123456789012345678901234567890`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		checkSizePaths(t, v)
	})
}
