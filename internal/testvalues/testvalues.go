// Package testvalues supplies the inputs the engines' differential tests
// share: the texts of the pinned vector files and random decoded Go values
// that cross every rule of the JSON value domain (numbers at the safe-integer
// edges, strings that need escaping, nesting, repeated names).
// Only tests import it.
package testvalues

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// VectorFiles are the pinned vector files, in the order VectorTexts reads them.
var VectorFiles = []string{"structured_output.json", "approval_records.json", "mcp_tools.json"}

// VectorTexts returns every string and every object or array, as its raw
// text, found in the vector files under dir, each once: all case texts and
// schemas, the approval intent and the MCP tools, arguments and results.
func VectorTexts(dir string) ([]string, error) {
	var seeds []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			seeds = append(seeds, s)
		}
	}
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		var obj map[string]json.RawMessage
		var arr []json.RawMessage
		var s string
		switch {
		case json.Unmarshal(raw, &obj) == nil:
			add(string(raw))
			for _, v := range obj {
				walk(v)
			}
		case json.Unmarshal(raw, &arr) == nil:
			add(string(raw))
			for _, v := range arr {
				walk(v)
			}
		case json.Unmarshal(raw, &s) == nil:
			add(s)
		default:
			add(string(raw))
		}
	}
	for _, name := range VectorFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("pinned vector %s: %w", name, err)
		}
		walk(b)
	}
	return seeds, nil
}

// strings a random value draws from: ASCII of every length around the
// eight-byte word, escapes, multi-byte text, U+FFFD itself, and invalid
// UTF-8 (a stray byte, a truncated sequence, a CESU-8 surrogate, an
// overlong form).
var pieces = []string{"", "a", "abcdefg", "abcdefgh", "abcdefghi", "0123456789abcdef0", "\"", "\\", "\n", "\x00",
	"\x1f", "\t", "é", "😀", "\u2028", "\ufffd", "\xff", "\xc3", "\xed\xa0\x80", "\xc0\xaf", "x\"y\\z"}

// names an object draws member names from: canonical array indexes (which
// JavaScript enumerates first), non-canonical ones, and names that sort
// differently by bytes and by UTF-16.
var names = []string{"", "0", "1", "2", "10", "01", "4294967294", "4294967295", "-1", "a", "b", "type", "z",
	"\ue000", "😀", "é", "\xff", "a\x00"}

// Random returns a random decoded Go value of at most depth levels: nil,
// bool, every Go number kind (including NaN, ±Inf, −0 and integers beyond
// 2^53), json.Number (valid or not), strings (valid or not), []any,
// map[string]any and json.RawMessage (valid or not), and now and then a
// value outside the domain.
func Random(r *rand.Rand, depth int) any {
	k := r.IntN(20)
	if depth <= 0 && k >= 14 {
		k = r.IntN(14)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return []float64{0, math.Copysign(0, -1), 1.5, -2, 0.1, 1e300, 5e-324, 1 << 53, 1<<53 - 1,
			math.NaN(), math.Inf(1)}[r.IntN(11)]
	case 3:
		return []any{int(7), int8(-8), int16(300), int32(-70000), int64(1) << 60, uint(9), uint8(255),
			uint16(65535), uint32(1) << 31, uint64(1)<<53 - 1, uint64(1) << 53, float32(0.25)}[r.IntN(12)]
	case 4:
		return json.Number([]string{"1", "-0", "1e2", "0.1", "9007199254740993", "1e400", "01", "x", ""}[r.IntN(9)])
	case 5, 6, 7, 8:
		return randomString(r)
	case 9:
		return struct{}{}
	case 10, 11, 12, 13:
		return randomScalarText(r)
	case 14, 15, 16:
		n := r.IntN(6)
		out := make([]any, n)
		for i := range out {
			out[i] = Random(r, depth-1)
		}
		return out
	case 18:
		return siblings(r, depth)
	default:
		if k == 19 {
			raw, err := json.Marshal(Plain(r, depth-1))
			if err != nil || r.IntN(5) == 0 {
				return json.RawMessage(`{"a":1,"a":2}`)
			}
			return json.RawMessage(raw)
		}
		n := r.IntN(7)
		out := make(map[string]any, n)
		for range n {
			out[randomName(r)] = Random(r, depth-1)
		}
		return out
	}
}

// siblings returns an array of maps that share their names (as decoded
// records do), now and then with one name replaced, dropped or added, so
// that walks which reuse a sibling's member order meet both hits and
// near misses.
func siblings(r *rand.Rand, depth int) []any {
	n := 2 + r.IntN(5)
	set := make([]string, n)
	for i := range set {
		set[i] = randomName(r)
	}
	out := make([]any, 1+r.IntN(6))
	for i := range out {
		m := make(map[string]any, n+1)
		for _, k := range set {
			m[k] = Random(r, depth-2)
		}
		switch r.IntN(6) {
		case 0:
			delete(m, set[r.IntN(n)])
			m[randomName(r)] = nil
		case 1:
			delete(m, set[r.IntN(n)])
		case 2:
			m[randomName(r)] = true
		}
		out[i] = m
	}
	return out
}

// Plain is Random restricted to what encoding/json marshals: no NaN, no
// invalid strings, no values outside the domain.
func Plain(r *rand.Rand, depth int) any {
	switch k := r.IntN(8); {
	case k == 0:
		return nil
	case k == 1:
		return r.IntN(3) == 0
	case k == 2:
		return []float64{0, -2, 0.1, 1e300, 5e-324, 1<<53 - 1, 12345}[r.IntN(7)]
	case k == 3 || depth <= 0:
		return strings.ToValidUTF8(randomString(r), "?")
	case k < 6:
		out := make([]any, r.IntN(5))
		for i := range out {
			out[i] = Plain(r, depth-1)
		}
		return out
	default:
		out := map[string]any{}
		for range r.IntN(6) {
			out[strings.ToValidUTF8(randomName(r), "?")] = Plain(r, depth-1)
		}
		return out
	}
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(5) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	if r.IntN(8) == 0 { // now and then past the identity encoder's memo size
		b.WriteString(strings.Repeat("w", r.IntN(90)))
	}
	return b.String()
}

func randomName(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		return randomString(r)
	}
	return names[r.IntN(len(names))]
}

func randomScalarText(r *rand.Rand) any {
	return []any{"short", 3.0, true, "a longer string with an escape\n", 42.0}[r.IntN(5)]
}

// WireNumbers spans encoding/json's float64 spellings: both exponent
// thresholds, the one-digit exponent clean-up, subnormals, the safe-integer
// edge and long fractions.
var WireNumbers = []float64{0, 1, -1, 0.1, -2.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 5e-324, 1e20, 1e21, 9.99e20,
	-1e21, 1e300, 123456789012345680000, 1<<53 - 1, -(1<<53 - 1), 0.30000000000000004, 1e-300, 2.5e-10, 1e-100}

// WireStrings holds every escape class: quotes, backslashes, the short
// control escapes, other controls, HTML characters, U+2028/U+2029, multibyte
// text and astral characters.
var WireStrings = []string{"", "plain", `q"uo\te`, "\b\f\n\r\t", "\x00\x01\x1f\x7f", "<a href=\"x\">&amp;</a>",
	"line\u2028sep\u2029", "é ü 中文", "😀 \U0010ffff", "\ue000", "a/b", "\u00a0\u200b\ufeff"}

// Wire is a random value of the strictjson domain built from
// WireNumbers, WireStrings and Plain.
func Wire(r *rand.Rand, depth int) any {
	switch k := r.IntN(9); {
	case k == 0:
		return WireNumbers[r.IntN(len(WireNumbers))]
	case k == 1:
		return WireStrings[r.IntN(len(WireStrings))] + WireStrings[r.IntN(len(WireStrings))]
	case k == 2 || depth <= 0:
		return Plain(r, 2)
	case k < 5:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = Wire(r, depth-1)
		}
		return out
	default:
		out := map[string]any{}
		for range r.IntN(6) {
			name := WireStrings[r.IntN(len(WireStrings))]
			if r.IntN(3) == 0 {
				name = []string{"0", "10", "2", "-1", "01", "4294967295", "b", "a", "B"}[r.IntN(9)]
			}
			out[name] = Wire(r, depth-1)
		}
		return out
	}
}
