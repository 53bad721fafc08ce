package jssize

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestScannerItems: the elements of the arrays a Path names are counted,
// whatever the key's spelling, and nothing else is.
func TestScannerItems(t *testing.T) {
	path := []string{"result", "tools"}
	for _, tc := range []struct {
		name, text string
		items      int
		first      bool
	}{
		{"three", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b","x":[1,2,3]},{}]}}`, 3, true},
		{"empty", `{"result":{"tools":[]}}`, 0, true},
		{"spaced", "{ \"result\" : { \"tools\" : [ 1 , \"a,b\" , [ 2 , 3 ] , null ] } }", 4, true},
		{"escaped key", `{"res\u0075lt":{"tool\u0073":[1,2]}}`, 2, true},
		{"escaped slash is not a key char", `{"result":{"to\/ols":[1,2]}}`, 0, true},
		{"duplicates add up", `{"result":{"tools":[1,2],"tools":[3]}}`, 3, true},
		{"case matters", `{"result":{"Tools":[1,2]}}`, 0, true},
		{"nested deeper", `{"result":{"x":{"tools":[1,2]}}}`, 0, true},
		{"key as value", `{"result":{"a":"tools","b":[1]}}`, 0, true},
		{"not a result", `{"error":{"tools":[1,2]}}`, 0, false},
		{"top-level array", `[{"result":{"tools":[1,2]}}]`, 0, false},
		{"tools not an array", `{"result":{"tools":{"a":[1,2]}}}`, 0, true},
		{"strings with brackets", `{"result":{"t":"]}{","tools":["[",",","]"]}}`, 3, true},
		{"escaped quote in key", `{"result":{"a\"":[1],"tools":[1]}}`, 1, true},
		{"long key", `{"result":{"` + strings.Repeat("x", 100) + `":[1],"tools":[1,2]}}`, 2, true},
	} {
		s := Scanner{Path: path, MaxItems: 1 << 30}
		s.Write([]byte(tc.text), 1<<30)
		if s.Items() != tc.items || s.FirstKey() != tc.first {
			t.Errorf("%s: items %d first %v, want %d %v", tc.name, s.Items(), s.FirstKey(), tc.items, tc.first)
		}
		// Byte by byte: the same.
		c := Scanner{Path: path, MaxItems: 1 << 30}
		for i := range len(tc.text) {
			c.Write([]byte(tc.text[i:i+1]), 1<<30)
		}
		if c.Items() != tc.items || c.Count() != s.Count() {
			t.Errorf("%s: byte by byte items %d count %d, want %d %d", tc.name, c.Items(), c.Count(), tc.items, s.Count())
		}
		// The count is the plain Scanner's.
		var plain Scanner
		if n := plain.Write([]byte(tc.text), 1<<30); n != s.Count() {
			t.Errorf("%s: count %d, plain %d", tc.name, s.Count(), n)
		}
	}
}

// TestScannerItemsStop: Write stops once the elements pass MaxItems.
func TestScannerItemsStop(t *testing.T) {
	text := `{"tools":[` + strings.Repeat(`{},`, 1000) + `{}]}`
	s := Scanner{Path: []string{"tools"}, MaxItems: 10}
	n := s.Write([]byte(text), 1<<30)
	if !s.Over(1<<30) || s.Items() != 11 || n > 50 {
		t.Fatalf("items %d count %d over %v", s.Items(), n, s.Over(1<<30))
	}
	if !RawOver([]byte(text), 1<<30, []string{"tools"}, 10) || RawOver([]byte(text), 1<<30, []string{"tools"}, 1001) {
		t.Fatal("RawOver")
	}
	if !RawOver([]byte(`{"tools":[1,2]}`), 100, []string{"tools"}, 1) || RawOver([]byte(`{"tools":[1,2]}`), 100, []string{"tools"}, 2) {
		t.Fatal("RawOver: two elements against one and two")
	}
}

// TestScannerID: the top-level id is captured as spelled, whatever follows
// it, and a method member is seen.
func TestScannerID(t *testing.T) {
	for _, tc := range []struct {
		text, id string
		method   bool
	}{
		{`{"jsonrpc":"2.0","id":12,"result":{}}`, `12`, false},
		{`{"result":{"id":5},"id" : "a\"b" }`, `"a\"b"`, false},
		{`{"id":{"x":1},"method":"m"}`, ``, true},
		{"{\"id\":7,\"result\":{\"content\":[{\"text\":\"\xff\xff\x80\x00\"}]}}", `7`, false},
		{`{"method":"notifications/x","params":{"id":3}}`, ``, true},
		{`{"id":` + strings.Repeat("1", 100) + `}`, ``, false},
		{`{"i\u0064":9}`, `9`, false},
	} {
		s := Scanner{Path: []string{"result"}, MaxItems: 1 << 30}
		s.Write([]byte(tc.text), 1<<30)
		if string(s.ID()) != tc.id || s.Method() != tc.method {
			t.Errorf("%s: id %q method %v, want %q %v", tc.text, s.ID(), s.Method(), tc.id, tc.method)
		}
	}
}

// TestItemsOverMatchesScanner: the walk that skips strings and the
// containers off the path counts the elements a Scanner counts.
func TestItemsOverMatchesScanner(t *testing.T) {
	for _, text := range []string{
		`{"tools":[{"name":"a\"],[","x":"\\"},{"d":"{[\\\\"},3,"s"]}`,
		`{"to\u006fls":["]",["]"],{"\"":1}],"tools":[1]}`,
		`{"a":"tools","tools":[` + strings.Repeat(`{"k":"v\\\"]"},`, 50) + `1]}`,
		`{"tools":["unterminated`,
		`{"x":{"tools":[1,2,3]},"y":[{"tools":[1]},[]],"tools":[{"tools":[1,2]},[[],{}],{"a":{"b":[{}]}}]}`,
		`{"tools":[{"a":"}]"},[1,[2,"]"],3],{}],"z":{"tools":[4,5]},"tools":[{"x":{}}]}`,
		`{"tools":[{"a":[1,{"b":2}]`,
		`[{"tools":[1,2]},{"tools":[3]}]`,
	} {
		checkItemsOver(t, text)
	}
}

// checkItemsOver checks ItemsOver against a Scanner's count of the
// elements of text's "tools" arrays.
func checkItemsOver(t *testing.T, text string) {
	t.Helper()
	s := Scanner{Path: []string{"tools"}, MaxItems: 1 << 30}
	s.Write([]byte(text), 1<<30)
	for _, max := range []int{0, 1, 2, 3, 50, 51, 52, 1000, s.Items() - 1, s.Items()} {
		if got, want := ItemsOver([]byte(text), []string{"tools"}, max), s.Items() > max; got != want {
			t.Errorf("%s: ItemsOver(%d) = %v, the scanner counts %d", text, max, got, s.Items())
		}
	}
}

// FuzzItemsOver runs checkItemsOver on fuzzed valid JSON text (on invalid
// text the two may differ; go-sdk's decoder rejects it whole).
func FuzzItemsOver(f *testing.F) {
	f.Add(`{"tools":[{"inputSchema":{"type":"object","properties":{"q":{"enum":["a]","b"]}}}},null,[1,[2]],"x"]}`)
	f.Add(`{"a":{"tools":[1]},"tools":[],"tools":[{},{}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		if json.Valid([]byte(text)) {
			checkItemsOver(t, text)
		}
	})
}

// BenchmarkRawOverPage is the element count of one benign tools/list page
// under its byte cap: eight tools with an input and an output schema (about
// 9 KB), against the fewest tools a discovery may still allow (8 + 64).
func BenchmarkRawOverPage(b *testing.B) {
	var page strings.Builder
	page.WriteString(`{"nextCursor":"c","tools":[`)
	for i := range 8 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"name":"docs.search_%03d","description":"Searches shard %03d of the document index.",`+
			`"inputSchema":{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":512},`+
			`"limit":{"type":"integer","minimum":1,"maximum":100},"tags":{"type":"array","items":{"type":"string",`+
			`"maxLength":64},"uniqueItems":true,"maxItems":16}},"required":["query"],"additionalProperties":false},`+
			`"outputSchema":{"type":"object","properties":{"count":{"type":"integer","minimum":0},"items":{"type":"array",`+
			`"maxItems":1000,"items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string",`+
			`"maxLength":200},"url":{"type":"string","pattern":"^https://[a-z.]+/[^\\s]*$"},"score":{"type":"number",`+
			`"minimum":0,"maximum":1},"tags":{"type":"array","items":{"type":"string"}},"updated":{"type":"integer"}},`+
			`"required":["id","title","score"],"additionalProperties":false}}},"required":["count","items"]}}`, i, i)
	}
	page.WriteString(`]}`)
	text, path := []byte(page.String()), []string{"tools"}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if RawOver(text, len(text)+4096, path, 8+64) {
			b.Fatal("a benign page counted over")
		}
	}
}

// capture fills its buffer, then marks the spelling too long for good.
func TestCapture(t *testing.T) {
	var buf [2]byte
	n := capture(buf[:], 0, 'a')
	n = capture(buf[:], n, 'b')
	if n != 2 || string(buf[:n]) != "ab" {
		t.Fatalf("captured %d %q, want 2 \"ab\"", n, buf[:n])
	}
	if n = capture(buf[:], n, 'c'); n != -1 {
		t.Fatalf("count %d past the buffer, want -1", n)
	}
	if n = capture(buf[:], n, 'd'); n != -1 {
		t.Fatalf("count %d after the buffer overflowed, want -1", n)
	}
}
