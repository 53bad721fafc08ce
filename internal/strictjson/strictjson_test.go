package strictjson

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var roomy = Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20}

// TestParse_Grammar covers the RFC 8259 rules the vector file leaves out (literals,
// numbers, strings and structure), one row each.
func TestParse_Grammar(t *testing.T) {
	rejected := []string{
		"", " ", "+1", ".5", "1.", "1.e5", "1e", "1e+", "-", "--1", "-01", "00", "0x10",
		"-Infinity", "NaN", "'a'", `{'a':1}`, "/*c*/1", "1 //c", "[1,]", "[,1]", `{"a"}`,
		`{"a":}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, "[1 2]", "tru", "nul", "True",
		"\"a\x01\"", "\"\t\"", `"\x"`, `"\u12"`, `"\u12G4"`, `"\ud800"`, `"\udc00"`,
		`"\ud800\u0041"`, `"\ud800\\"`, `"\ud83d\ud83d"`, `"abc`, `[`, `{`, `{"a":1`,
		"\ufeff1", "1\ufeff", "\u00a01", "1\v", "[1]x", "1e309", "-1e309",
		"9007199254740992", "-9007199254740992", "1e16", "\xff", "\"\xed\xa0\x80\"",
	}
	for _, text := range rejected {
		v, err := Parse(text, roomy)
		assert.Error(t, err, "%q", text)
		assert.Nil(t, v, "%q", text)
	}
	accepted := map[string]any{
		" \t\r\n1 \t\r\n": 1.0, "-0": 0.0, "-0.0e5": 0.0, "1e-400": 0.0, "-1e-400": 0.0,
		"4.9e-324": math.SmallestNonzeroFloat64, "9007199254740991": float64(MaxSafeInteger),
		"-9007199254740991": -float64(MaxSafeInteger), "1E2": 100.0, "1e+2": 100.0,
		"0.1": 0.1, "123.456e-2": 1.23456,
		`"\u0000"`: "\x00", `"\/"`: "/", `"\ud83d\ude00"`: "😀", `"\uD83D\uDE00"`: "😀",
		"\"\ufeff\"": "\ufeff", "\"\u2028\"": "\u2028", `"\u00e9"`: "é", `"\b\f\n\r\t\"\\"`: "\b\f\n\r\t\"\\",
		"true": true, "false": false, "null": nil, "[]": []any{}, "[ ]": []any{},
	}
	for text, want := range accepted {
		v, err := Parse(text, roomy)
		if !assert.NoError(t, err, "%q", text) {
			continue
		}
		if f, ok := v.(float64); ok && f == 0 {
			assert.False(t, math.Signbit(f), "%q: -0 folds into +0", text)
		}
		assert.Equal(t, want, v, "%q", text)
	}
}

// TestParse_RoundedToUnsafe: 9007199254740992.5 rounds to 2^53, which is
// integral and beyond the safe range, so it is refused as an integer.
func TestParse_RoundedToUnsafe(t *testing.T) {
	_, err := Parse("9007199254740992.5", roomy)
	assert.Error(t, err)
}

func TestParse_DuplicateKeysAfterUnescaping(t *testing.T) {
	for _, text := range []string{`{"a":1,"a":1}`, `{"a":1,"\u0061":2}`, `{"é":1,"\u00e9":2}`,
		`{"x":[{"k":1,"k":2}]}`, `{"😀":1,"\ud83d\ude00":2}`} {
		_, err := Parse(text, roomy)
		assert.Error(t, err, "%q", text)
	}
	// Keys are compared exactly: NFC and NFD spellings are different keys.
	v, err := Parse(`{"é":1,"e\u0301":2}`, roomy)
	require.NoError(t, err)
	assert.Equal(t, 2, v.(*Object).Len())
}

// TestKeys_EnumerationOrder: array-index names first in numeric order, then
// the others in document order, as JavaScript enumerates them.
func TestKeys_EnumerationOrder(t *testing.T) {
	v, err := Parse(`{"b":1,"10":2,"a":3,"2":4,"01":5,"4294967295":6,"4294967294":7,"-1":8}`, roomy)
	require.NoError(t, err)
	assert.Equal(t, []string{"2", "10", "4294967294", "b", "a", "01", "4294967295", "-1"}, v.(*Object).Keys)

	s, err := Snapshot(map[string]any{"b": 1, "10": 2, "a": 3, "2": 4}, roomy)
	require.NoError(t, err)
	assert.Equal(t, []string{"2", "10", "a", "b"}, s.(*Object).Keys, "map names after indexes go in byte order")
}

// TestMeasure_DetachedBytes checks the detached-bytes measure (the length of the
// canonical text) with worked examples,
// exactly at the limit and one byte under.
func TestMeasure_DetachedBytes(t *testing.T) {
	cases := map[string]int{
		`{"type":"object"}`: 18,
		`{"a":1,"b":2}`:     60,
		`{"a":"abcdef"}`:    15,
		`{"type":"object","properties":{"label":{"type":"string"}},"required":["label"],"additionalProperties":false}`: 113,
		`"a\nb\"c"`: 9, `"😀"`: 6, `"\u0001"`: 8, `"\u007f"`: 3, `"\u2028"`: 5, `null`: 5, `[true,false]`: 16,
		`1`: 24, `[]`: 2, `{}`: 2, `[[]]`: 6,
	}
	for text, want := range cases {
		lim := Limits{Depth: 64, Nodes: 1000, Bytes: want}
		_, err := Parse(text, Limits{Depth: 64, Nodes: 1000, Bytes: 1 << 20})
		require.NoError(t, err, text)
		var decoded any
		require.NoError(t, json.Unmarshal([]byte(text), &decoded))
		_, err = Snapshot(decoded, lim)
		assert.NoError(t, err, "%s fits %d bytes", text, want)
		lim.Bytes = want - 1
		_, err = Snapshot(decoded, lim)
		assert.Error(t, err, "%s exceeds %d bytes", text, want-1)
		if len(text) <= want-1 {
			_, err = Parse(text, lim)
			assert.Error(t, err, "Parse %s exceeds %d bytes", text, want-1)
		}
	}
	assert.Equal(t, 9, StringCost("a\nb\"c"))
	assert.Equal(t, 6, StringCost("😀"))
}

// TestMeasure_NodesAndDepth: keys count as nodes and sit at their value's level.
func TestMeasure_NodesAndDepth(t *testing.T) {
	type row struct {
		text         string
		nodes, depth int
	}
	for _, r := range []row{
		{`{"type":"object"}`, 3, 1},
		{`{"a":1,"b":2}`, 5, 1},
		{`{"a":{"b":1}}`, 5, 2},
		{`[[[]]]`, 3, 2},
		{`{"type":"object","properties":{"label":{"type":"string"}},"required":["label"],"additionalProperties":false}`, 14, 3},
	} {
		var decoded any
		require.NoError(t, json.Unmarshal([]byte(r.text), &decoded))
		for _, exact := range []Limits{{Depth: r.depth, Nodes: r.nodes, Bytes: 1 << 20}} {
			_, err := Parse(r.text, exact)
			assert.NoError(t, err, "%s at nodes=%d depth=%d", r.text, r.nodes, r.depth)
			_, err = Snapshot(decoded, exact)
			assert.NoError(t, err, "%s snapshot", r.text)
		}
		for _, tight := range []Limits{{Depth: r.depth - 1, Nodes: r.nodes, Bytes: 1 << 20}, {Depth: r.depth, Nodes: r.nodes - 1, Bytes: 1 << 20}} {
			if tight.Depth < 0 {
				continue
			}
			_, err := Parse(r.text, tight)
			assert.Error(t, err, "%s at %+v", r.text, tight)
			_, err = Snapshot(decoded, tight)
			assert.Error(t, err, "%s snapshot at %+v", r.text, tight)
		}
	}
}

// TestParse_DeepNestingIsBounded: 100000 nested brackets fail at the depth
// limit without deep recursion.
func TestParse_DeepNestingIsBounded(t *testing.T) {
	for _, open := range []string{"[", `{"a":`} {
		_, err := Parse(strings.Repeat(open, 100000), roomy)
		assert.Error(t, err)
	}
	// 65 nested arrays put the innermost at level 64, the deepest allowed.
	_, err := Parse(strings.Repeat("[", 65)+strings.Repeat("]", 65), roomy)
	assert.NoError(t, err, "level 64 is allowed")
	_, err = Parse(strings.Repeat("[", 66)+strings.Repeat("]", 66), roomy)
	assert.Error(t, err, "level 65 is not")
}

func TestMeasure_GoValues(t *testing.T) {
	self := []any{nil}
	self[0] = self
	shared := map[string]any{"k": 1}
	rejected := []any{math.NaN(), math.Inf(-1), float32(math.Inf(1)), int64(MaxSafeInteger + 1),
		int64(-MaxSafeInteger - 1), uint64(MaxSafeInteger + 1), 1e300, -1e300, json.Number("1.0.0"),
		json.Number(""), json.Number("NaN"), json.Number("1e400"), "\xc0\x80", map[string]any{"\xed\xbf\xbf": 1},
		struct{}{}, []int{1}, map[string]string{}, new(int), self, (*Object)(nil)}
	for _, v := range rejected {
		out, err := Snapshot(v, roomy)
		assert.Error(t, err, "%#v", v)
		assert.Nil(t, out)
	}
	accepted := []any{nil, true, "", 0, int8(-8), uint16(9), int64(-MaxSafeInteger), uint64(MaxSafeInteger),
		float32(1.5), json.Number("-0"), []any(nil), map[string]any(nil), []any{shared, shared},
		json.RawMessage(`{"a":[1,2]}`), math.SmallestNonzeroFloat64, 0.1}
	for _, v := range accepted {
		_, err := Snapshot(v, roomy)
		assert.NoError(t, err, "%#v", v)
	}
	out, err := Snapshot(math.Copysign(0, -1), roomy)
	require.NoError(t, err)
	assert.False(t, math.Signbit(out.(float64)))
}

// TestSnapshot_IsDetached: the copy shares nothing with the input.
func TestSnapshot_IsDetached(t *testing.T) {
	in := map[string]any{"a": []any{1.0, map[string]any{"b": "c"}}}
	out, err := Snapshot(in, roomy)
	require.NoError(t, err)
	in["a"].([]any)[1].(map[string]any)["b"] = "changed"
	in["z"] = 1
	back := ToGo(out).(map[string]any)
	assert.Equal(t, map[string]any{"a": []any{1.0, map[string]any{"b": "c"}}}, back)
	back["a"].([]any)[0] = "mutated"
	assert.Equal(t, 1.0, memberOf(out, "a").([]any)[0])
}

// TestMeasure_RawMessageSharesBudget: a json.RawMessage inside a Go value is
// parsed at its own level and charged to the same limits.
func TestMeasure_RawMessageSharesBudget(t *testing.T) {
	v := map[string]any{"a": json.RawMessage(`{"b":1}`)}
	_, err := Snapshot(v, Limits{Depth: 2, Nodes: 5, Bytes: 1 << 20})
	assert.NoError(t, err)
	_, err = Snapshot(v, Limits{Depth: 1, Nodes: 5, Bytes: 1 << 20})
	assert.Error(t, err)
	_, err = Snapshot(v, Limits{Depth: 2, Nodes: 4, Bytes: 1 << 20})
	assert.Error(t, err)
}

func TestErrorText(t *testing.T) {
	_, err := Parse(`{"secret":01}`, roomy)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secret")
	assert.True(t, strings.HasPrefix(err.Error(), "strictjson: "))
}

// TestParse_RawTextLength: json.RawMessage text is bounded by its own length,
// whitespace included, as Parse bounds its text.
func TestParse_RawTextLength(t *testing.T) {
	lim := Limits{Depth: 64, Nodes: 100, Bytes: 100}
	text := strings.Repeat(" ", 99) + "1"
	_, err := Snapshot(json.RawMessage(text), lim)
	assert.NoError(t, err, "100 bytes fit")
	_, err = Snapshot(json.RawMessage(" "+text), lim)
	assert.Error(t, err, "101 bytes do not, though the value costs 24")
	_, err = Parse(" "+text, lim)
	assert.Error(t, err)
}

// TestStringCost_MatchesDefinition checks the word-at-a-time StringCost
// against the byte-by-byte definition of a string's canonical length on
// every byte value at every
// offset of a word, and on mixed text.
func TestStringCost_MatchesDefinition(t *testing.T) {
	naive := func(s string) int {
		n := 2
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
		}
		return n
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 19; pos++ {
			b := []byte(strings.Repeat("abcdefgh", 3)[:19])
			b[pos] = byte(c)
			assert.Equal(t, naive(string(b)), StringCost(string(b)), "byte %#x at %d", c, pos)
		}
	}
	for _, s := range []string{"", "a", "é😀\u2028", "\x1f\x20\x21\"\\\x7f\x80\xff", strings.Repeat("\t\"x", 100)} {
		assert.Equal(t, naive(s), StringCost(s), "%q", s)
	}
}

// TestNumberValue_ShortIntegersMatchParseFloat: NumberValue's integer fast
// path gives exactly what ParseFloat and normalize give, for every literal
// of up to 16 digits with either sign, the JSON spellings that leave the fast
// path (fraction, exponent, leading zeros) and texts that are no JSON
// number at all.
func TestNumberValue_ShortIntegersMatchParseFloat(t *testing.T) {
	reference := func(lit string) (float64, bool) {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && (math.IsInf(f, 0) || err.(*strconv.NumError).Err != strconv.ErrRange) {
			return 0, false
		}
		return normalize(f)
	}
	lits := []string{"0", "-0", "1", "-1", "9", "10", "999999999999999", "-999999999999999", "1000000000000000",
		"-1000000000000000", "9007199254740991", "9007199254740992", "-9007199254740993", "01", "-01", "00", "-",
		"", "+1", "1e3", "1E3", "1.5", "-0.0", "0x10", "1_0", "12a", " 1", "1 ", "١"}
	r := rand.New(rand.NewPCG(3, 1))
	for range 50000 {
		n := 1 + r.IntN(16)
		b := make([]byte, 0, n+1)
		if r.IntN(2) == 0 {
			b = append(b, '-')
		}
		for i := range n {
			d := byte('0' + r.IntN(10))
			if i == 0 && n > 1 && r.IntN(8) != 0 {
				d = byte('1' + r.IntN(9))
			}
			b = append(b, d)
		}
		lits = append(lits, string(b))
	}
	for _, lit := range lits {
		got, gotOK := NumberValue(lit)
		want, wantOK := reference(lit)
		if gotOK != wantOK || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("NumberValue(%q) = %v, %v; ParseFloat path %v, %v", lit, got, gotOK, want, wantOK)
		}
	}
}

// TestSortKeysFunc_AsSortKeys: SortKeysFunc orders items as SortKeys orders
// their names, on both sides of its insertion-sort threshold, with
// array-index names among them.
func TestSortKeysFunc_AsSortKeys(t *testing.T) {
	type item struct {
		name string
		at   int
	}
	pool := []string{"0", "1", "10", "2", "4294967294", "4294967295", "01", "-1", "a", "B", "b", "é", "", "ab", "a\x00"}
	r := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		names := slices.Clone(pool)
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		names = names[:r.IntN(len(names)+1)]
		for i := range r.IntN(12) {
			names = append(names, "n"+strconv.Itoa(i*7919%97))
		}
		slices.Sort(names)
		names = slices.Compact(names)
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		items := make([]item, len(names))
		for i, n := range names {
			items[i] = item{n, i}
		}
		SortKeysFunc(items, func(it item) string { return it.name })
		want := slices.Clone(names)
		SortKeys(want)
		for i, it := range items {
			if it.name != want[i] || names[it.at] != it.name {
				t.Fatalf("SortKeysFunc %v, SortKeys %v", items, want)
			}
		}
	}
}
