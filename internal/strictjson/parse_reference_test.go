package strictjson

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/testvalues"
)

// refParser is the parser's container handling before members and elements
// were collected on shared stacks and carved from chunks: every object
// growing its own names and map as it went, every array its own slice. The
// scalars and the meter are the parser's own.
type refParser struct{ *parser }

func refParse(text string, lim Limits) (any, error) {
	if len(text) > lim.Bytes {
		return nil, &Error{Offset: 0, reason: "text exceeds byte limit"}
	}
	if !utf8.ValidString(text) {
		return nil, &Error{Offset: 0, reason: "invalid UTF-8"}
	}
	p := refParser{&parser{s: text, m: &meter{lim: lim}}}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.fail("trailing data")
	}
	return v, nil
}

func (p refParser) value(level int) (any, error) {
	if !p.m.enter(level) {
		return nil, p.fail("node or depth limit exceeded")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.m.add(StringCost(s)) {
			return nil, p.fail("byte limit exceeded")
		}
		return s, nil
	case c == '{':
		return p.object(level)
	case c == '[':
		return p.array(level)
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.fail("unexpected character")
}

func (p refParser) array(level int) (any, error) {
	p.i++
	out := []any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, p.charge(0)
	}
	for {
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated array")
		}
		c := p.s[p.i]
		p.i++
		if c == ']' {
			return out, p.charge(len(out))
		}
		if c != ',' {
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p refParser) object(level int) (any, error) {
	p.i++
	members := map[string]any{}
	var keys []string
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return NewObject([]string{}, []any{}), p.charge(0)
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("expected a member name")
		}
		if !p.m.enter(level + 1) {
			return nil, p.fail("node or depth limit exceeded")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := members[key]; dup {
			return nil, p.fail("duplicate key")
		}
		if !p.m.add(StringCost(key)) {
			return nil, p.fail("byte limit exceeded")
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
		members[key] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated object")
		}
		c := p.s[p.i]
		p.i++
		if c == '}' {
			enumerationOrder(keys, func(k string) string { return k })
			values := make([]any, len(keys))
			for i, k := range keys {
				values[i] = members[k]
			}
			return NewObject(keys, values), p.charge(len(keys))
		}
		if c != ',' {
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

// parseTexts are the differential inputs: every vector text, random values
// encoded by encoding/json (some cut short or with a byte changed), and
// objects with duplicate names at every position around the scan-or-index
// threshold, nested and not.
func parseTexts(t *testing.T) []string {
	texts, err := testvalues.VectorTexts("../../testdata")
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(11, 12))
	for range 3000 {
		b, err := json.Marshal(testvalues.Plain(r, 4))
		if err != nil {
			continue
		}
		text := string(b)
		switch r.IntN(6) {
		case 0:
			text = text[:r.IntN(len(text)+1)]
		case 1:
			i := r.IntN(len(text))
			const bytes = "{}[],:\"0a "
			text = text[:i] + string(bytes[r.IntN(len(bytes))]) + text[i+1:]
		}
		texts = append(texts, text)
	}
	for _, n := range []int{1, 2, 15, 16, 17, 18, 40} {
		for _, dup := range []int{-1, 0, n / 2, n - 1} {
			var b strings.Builder
			b.WriteString(`{"outer":[`)
			b.WriteByte('{')
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"k` + strconv.Itoa(i) + `":[` + strconv.Itoa(i) + `]`)
			}
			if dup >= 0 {
				b.WriteString(`,"k` + strconv.Itoa(dup) + `":null`)
			}
			b.WriteString(`,"10":1,"2":{"a":[{}]}}]}`)
			texts = append(texts, b.String(), strings.TrimPrefix(strings.TrimSuffix(b.String(), "]}"), `{"outer":[`))
		}
	}
	return texts
}

// TestParse_MatchesReference: Parse returns what the container handling it
// replaced returned, value and error (offset and reason), under every limit
// setting of the walk tests.
func TestParse_MatchesReference(t *testing.T) {
	var ok, failed int
	for i, text := range parseTexts(t) {
		for _, lim := range walkLimits {
			want, wantErr := refParse(text, lim)
			got, err := Parse(text, lim)
			require.Equal(t, wantErr, err, "text %d %q under %+v", i, text, lim)
			require.Equal(t, want, got, "text %d %q under %+v", i, text, lim)
			if err == nil {
				ok++
			} else {
				failed++
			}
		}
	}
	require.Greater(t, ok, 2000)
	require.Greater(t, failed, 2000)
}

// FuzzParseReference holds Parse to the container handling it replaced on
// any text, under each limit setting of the walk tests.
func FuzzParseReference(f *testing.F) {
	for _, s := range fuzzVectorSeeds(f) {
		f.Add(s)
	}
	f.Add(`{"a":1,"b":[1,2,{"c":{}}],"a":2}`)
	f.Add(`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":0}`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, lim := range walkLimits {
			want, wantErr := refParse(text, lim)
			got, err := Parse(text, lim)
			require.Equal(t, wantErr, err, "%q under %+v", text, lim)
			require.Equal(t, want, got, "%q under %+v", text, lim)
		}
	})
}
