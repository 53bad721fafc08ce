package jssize

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

type inner struct {
	ResultType string `json:"resultType,omitempty"`
}

type Promoted struct {
	TTL   int    `json:"ttlMs"`
	Scope string `json:"cacheScope"`
}

type zeroer struct{ v int }

func (z zeroer) IsZero() bool { return z.v == 7 }

type tagged struct {
	inner
	Promoted
	Meta      map[string]any    `json:"_meta,omitempty"`
	Name      string            `json:"name"`
	Opt       string            `json:"opt,omitempty"`
	Ptr       *bool             `json:"ptr,omitempty"`
	Bytes     []byte            `json:"bytes"`
	Blob      []byte            `json:"blob,omitzero"`
	Any       any               `json:"any"`
	Nums      []float32         `json:"nums"`
	Ints      map[int]uint8     `json:"ints"`
	Array     [2]byte           `json:"array"`
	Skip      string            `json:"-"`
	Dash      string            `json:"-,"`
	NoTag     int64             // named by the field
	Z         zeroer            `json:"z,omitzero"`
	Priority  float64           `json:"priority,omitempty"`
	Raw       json.RawMessage   `json:"raw,omitempty"`
	Nested    *tagged           `json:"nested,omitempty"`
	Strings   map[string]string `json:"strings"`
	unexposed int
}

type conflict struct {
	A1
	A2
	Shadow string `json:"x"`
}

type A1 struct {
	X string `json:"x"`
	W string
}

type A2 struct {
	W string
}

type quoted struct {
	N int `json:"n,string"`
}

// withinCases are Go values whose encoding/json spelling exercises struct
// tags, promotion, omitempty/omitzero, base64, float32 and marshalers.
func withinCases() []any {
	yes := true
	t := tagged{inner: inner{"complete"}, Promoted: Promoted{5, "public<"}, Meta: map[string]any{"k": []any{1.0, "<&>"}},
		Name: "\u2028n\xff", Ptr: &yes, Bytes: []byte("hello"), Blob: []byte{}, Any: map[string]any{"x": math.Copysign(0, -1)},
		Nums: []float32{1.5, 1e-7, 3e21, float32(math.Copysign(0, -1))}, Ints: map[int]uint8{-3: 4, 10: 200},
		Array: [2]byte{1, 2}, Skip: "s", Dash: "d", NoTag: -99, Z: zeroer{3}, Priority: 0.25,
		Raw: json.RawMessage(` { "a" : "\u003c" } `), Strings: map[string]string{"<": ">"}, unexposed: 1}
	t2 := t
	t2.Nested = &tagged{Z: zeroer{7}}
	return []any{nil, true, 1, int8(-8), uint64(math.MaxUint64), float32(0.1), 1e21, "x", []string(nil), []int{},
		map[string]any(nil), t, &t2, conflict{A1{"a", "b"}, A2{"c"}, "s"}, quoted{3},
		[]any{time.Unix(0, 0).UTC(), json.Number("1.50")}, htmlMarshaler{}, []htmlMarshaler{{}, {}},
		map[string]any{"deep": []any{[]any{map[string]any{}}}}, strings.Repeat("猫<", 100)}
}

// TestWithinMatchesSize: with no limit, Within counts what Size's
// encoding/json path counts, for every case and every limit around it.
func TestWithinMatchesSize(t *testing.T) {
	for i, v := range withinCases() {
		want, err := marshalSize(v)
		if err != nil {
			t.Fatalf("case %d: marshalSize: %v", i, err)
		}
		if got, err := Within(v, math.MaxInt); err != nil || got != want {
			t.Errorf("case %d %#v: Within = %d, %v; want %d", i, v, got, err, want)
		}
		for _, limit := range []int{0, want / 2, want - 1, want, want + 1} {
			got, err := Within(v, limit)
			if err != nil {
				t.Errorf("case %d limit %d: %v", i, limit, err)
			}
			if want <= limit && got != want || want > limit && got <= limit {
				t.Errorf("case %d limit %d: Within = %d, size %d", i, limit, got, want)
			}
		}
	}
}

// TestWithinStopsEarly: a value far over the limit is not walked: a 12 MiB
// string of '<' and a million-item slice cost no allocation and stop with a
// count just past the limit.
func TestWithinStopsEarly(t *testing.T) {
	huge := strings.Repeat("<", 12<<20)
	many := make([]any, 1_000_000)
	obj := map[string]any{"text": huge}
	for name, v := range map[string]any{"string": huge, "slice": many, "object": obj} {
		var n int
		allocs := testing.AllocsPerRun(5, func() { n, _ = Within(v, 65536) })
		if n <= 65536 {
			t.Errorf("%s: Within = %d, want > 65536", name, n)
		}
		if allocs > 2 {
			t.Errorf("%s: %.0f allocations", name, allocs)
		}
	}
}

// TestWithinErrors: NaN and unsupported types fail as Size does.
func TestWithinErrors(t *testing.T) {
	for _, v := range []any{math.NaN(), []any{math.Inf(1)}, float32(math.Inf(-1)), make(chan int), func() {}} {
		if _, err := Within(v, math.MaxInt); err == nil {
			t.Errorf("Within(%T): no error", v)
		}
	}
}

// FuzzWithin checks Within against Size for fuzzed JSON decoded as go-sdk
// decodes it, at a fuzzed limit.
func FuzzWithin(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0,0.1,1e21,1e-7,"\u2028",null,true]}`, `"\ud800"`, `"<\u00e9>"`, `[[],{}]`} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, text string, limit int) {
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		want, err := Size(v)
		if err != nil {
			return
		}
		got, err := Within(v, limit)
		if err != nil || want <= limit && got != want || want > limit && got <= limit {
			t.Fatalf("Within(%s, %d) = %d, %v; Size %d", text, limit, got, err, want)
		}
	})
}

// TestScanner: the streaming count of Go's own (HTML-escaping) encoding of a
// decoded value is Size of the value; whitespace counts nothing; escapes
// count as JavaScript writes their characters; chunks give the same count as
// one write; the count never exceeds the text's length.
func TestScanner(t *testing.T) {
	for _, text := range []string{`{"a" : [1, "x\u003c\u2028", "\ud83d\ude00", "\ud800x", "\udc00", "\/\n\"\\"], "b\ud800\\":null}`,
		`"\ud800\u0041"`, `"\ud800\n"`, `"\ud800"`, `[ true , false , null ]`, `"猫\u00e9"`} {
		checkScanner(t, text)
	}
}

func checkScanner(t *testing.T, text string) {
	t.Helper()
	var v any
	if json.Unmarshal([]byte(text), &v) != nil || strings.Contains(text, "-0") {
		return
	}
	want, err := Size(v)
	if err != nil {
		return
	}
	for _, enc := range []string{text} {
		var s Scanner
		one := s.Write([]byte(enc), math.MaxInt)
		var c Scanner
		for i := range len(enc) {
			c.Write([]byte{enc[i]}, math.MaxInt)
		}
		if c.Count() != one {
			t.Fatalf("%q: chunked %d, whole %d", enc, c.Count(), one)
		}
		if one > len(enc) {
			t.Fatalf("%q: count %d over length %d", enc, one, len(enc))
		}
	}
	canonical, _ := json.Marshal(v) // HTML-escaped, as a Go server writes
	var s Scanner
	if got := s.Write(canonical, math.MaxInt); got != want {
		t.Fatalf("%s (from %q): scanner %d, Size %d", canonical, text, got, want)
	}
	if n := RawWithin(canonical, want-1); want > 0 && n <= want-1 {
		t.Fatalf("%s: RawWithin at %d = %d", canonical, want-1, n)
	}
}

// FuzzScanner runs checkScanner on fuzzed JSON text.
func FuzzScanner(f *testing.F) {
	f.Add(`{"a":[1,"\u003c",{"b":"\ud83d\ude00"}]}`)
	f.Fuzz(func(t *testing.T, text string) { checkScanner(t, text) })
}
