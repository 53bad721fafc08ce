package strictjson

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/testvalues"
)

// fuzzTight is small enough that fuzzed inputs cross every limit.
var fuzzTight = Limits{Depth: 3, Nodes: 12, Bytes: 160}

// fuzzVectorSeeds returns every string and every object or array, as its
// raw text, found in the pinned vector files: all case texts and schemas,
// the approval intent and the MCP tools, arguments and results.
func fuzzVectorSeeds(t testing.TB) []string {
	t.Helper()
	seeds, err := testvalues.VectorTexts(filepath.Join("..", "..", "testdata"))
	require.NoError(t, err)
	return seeds
}

// fuzzEncode writes v in the canonical detached form: members in
// Keys order, no whitespace, only '"', '\\' and U+0000–U+001F escaped, and
// numbers in the shortest form that reads back to the same binary64.
func fuzzEncode(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		return fuzzEncodeString(b, x)
	case []any:
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = fuzzEncode(b, item)
		}
		return append(b, ']')
	case *Object:
		b = append(b, '{')
		for i, k := range x.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = fuzzEncodeString(b, k)
			b = append(b, ':')
			b = fuzzEncode(b, memberOf(x, k))
		}
		return append(b, '}')
	}
	panic("fuzz: value outside the strictjson domain")
}

func fuzzEncodeString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// fuzzMeasure recomputes the measures for a parsed value: nodes (keys
// included), the deepest level, and detached bytes, a string costing the
// length of its canonical literal.
func fuzzMeasure(v any, level int) (nodes, depth, bytes int) {
	nodes, depth = 1, level
	add := func(n, d, b int) {
		nodes, depth, bytes = nodes+n, max(depth, d), bytes+b
	}
	switch x := v.(type) {
	case nil, bool:
		bytes = 5
	case float64:
		bytes = 24
	case string:
		bytes = len(fuzzEncodeString(nil, x))
	case []any:
		for _, item := range x {
			add(fuzzMeasure(item, level+1))
		}
		bytes += 2 + 2*len(x)
	case *Object:
		for _, k := range x.Keys {
			add(fuzzMeasure(k, level+1))
			add(fuzzMeasure(memberOf(x, k), level+1))
		}
		bytes += 2 + 2*len(x.Keys)
	}
	return nodes, depth, bytes
}

// FuzzParse checks Parse against its contract: on error a nil
// value and an offset inside the text; on success the limits hold by an
// independent count, the text is RFC 8259 for encoding/json too and decodes
// there to the same value, the canonical re-encoding parses back to an
// equal value under the same limits and is stable, a tighter limit never
// accepts what a looser one rejects, and a json.RawMessage snapshot agrees.
func FuzzParse(f *testing.F) {
	seeds := fuzzVectorSeeds(f)
	seeds = append(seeds, "", "1e-400", "-0", "[[[[[]]]]]", `{"2":1,"10":2,"a":3,"1":4}`,
		`"\ud83d\ude00\u0000\"\\\/"`, "9007199254740991", "-9007199254740991.0", `{"a":{"a":{"a":1}}}`)
	require.GreaterOrEqual(f, len(seeds), 62+10, "vector seeds: every case text and schema at least")
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		roomyValue, roomyErr := fuzzParseChecked(t, text, roomy)
		tightValue, tightErr := fuzzParseChecked(t, text, fuzzTight)
		if tightErr == nil {
			require.NoError(t, roomyErr, "accepted under %+v but not under %+v: %q", fuzzTight, roomy, text)
			require.Equal(t, roomyValue, tightValue, "limits changed the value of %q", text)
		}
		raw, rawErr := Snapshot(json.RawMessage(text), roomy)
		require.Equal(t, roomyErr == nil, rawErr == nil, "Parse and Snapshot(json.RawMessage) disagree on %q: %v vs %v", text, roomyErr, rawErr)
		require.Equal(t, roomyValue, raw, "Parse and Snapshot(json.RawMessage) values for %q", text)
	})
}

// fuzzParseChecked parses text under lim and asserts every property that
// holds for one limit set.
func fuzzParseChecked(t *testing.T, text string, lim Limits) (any, error) {
	v, err := Parse(text, lim)
	if err != nil {
		require.Nil(t, v, "Parse(%q, %+v) failed but returned a value", text, lim)
		var e *Error
		require.True(t, errors.As(err, &e), "Parse(%q) error type %T", text, err)
		require.True(t, e.Offset >= 0 && e.Offset <= len(text), "Parse(%q) offset %d", text, e.Offset)
		require.True(t, strings.HasPrefix(err.Error(), "strictjson: "), "Parse(%q) error text %q", text, err)
		return nil, err
	}
	nodes, depth, bytes := fuzzMeasure(v, 0)
	require.LessOrEqual(t, nodes, lim.Nodes, "Parse(%q, %+v) nodes", text, lim)
	require.LessOrEqual(t, depth, lim.Depth, "Parse(%q, %+v) depth", text, lim)
	require.LessOrEqual(t, bytes, lim.Bytes, "Parse(%q, %+v) detached bytes", text, lim)
	require.True(t, json.Valid([]byte(text)), "strict parse accepted what encoding/json rejects: %q", text)

	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var std any
	require.NoError(t, dec.Decode(&std), "encoding/json decode of %q", text)
	stdValue, err := Snapshot(std, roomy)
	require.NoError(t, err, "snapshot of the encoding/json value of %q", text)
	assert.Equal(t, ToGo(stdValue), ToGo(v), "encoding/json and strictjson values of %q", text)

	enc := fuzzEncode(nil, v)
	require.LessOrEqual(t, len(enc), bytes, "canonical form of %q longer than its detached bytes", text)
	again, err := Parse(string(enc), lim)
	require.NoError(t, err, "Parse of the re-encoding %q of %q", enc, text)
	require.Equal(t, v, again, "re-encoding %q of %q parses to another value", enc, text)
	require.Equal(t, string(enc), string(fuzzEncode(nil, again)), "re-encoding of %q is not stable", text)
	return v, nil
}
