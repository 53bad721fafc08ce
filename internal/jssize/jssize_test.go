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
