package bounding

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// A lineReader hands out each line with its '\n', a longer line in pieces
// as its bytes arrive, the last bytes without one, then the source's error.
func TestLineReader(t *testing.T) {
	type piece struct {
		text string
		ends bool
	}
	long := strings.Repeat("x", 40<<10) // more than one chunk
	src := io.MultiReader(strings.NewReader("a\nbc\n\n"), iotest.OneByteReader(strings.NewReader("de\nf")),
		strings.NewReader(long+"\n"))
	var r lineReader
	var got []piece
	for {
		p, ends, err := r.next(src)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("error %v, want io.EOF", err)
			}
			break
		}
		if len(p) == 0 {
			t.Fatal("an empty piece")
		}
		got = append(got, piece{string(p), ends})
	}
	want := []piece{{"a\n", true}, {"bc\n", true}, {"\n", true}, {"d", false}, {"e", false}, {"\n", true},
		{"f", false}, {long[:32<<10], false}, {long[32<<10:] + "\n", true}}
	if len(got) != len(want) {
		t.Fatalf("%d pieces, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("piece %d: %q %v, want %q %v", i, got[i].text, got[i].ends, want[i].text, want[i].ends)
		}
	}

	// A Read that gives bytes and an error: the bytes first, then the error.
	r = lineReader{}
	src = iotest.DataErrReader(strings.NewReader("g\nh"))
	for _, w := range []piece{{"g\n", true}, {"h", false}} {
		p, ends, err := r.next(src)
		if err != nil || string(p) != w.text || ends != w.ends {
			t.Fatalf("got %q %v %v, want %q %v", p, ends, err, w.text, w.ends)
		}
	}
	if _, _, err := r.next(src); !errors.Is(err, io.EOF) {
		t.Fatalf("error %v, want io.EOF", err)
	}
}
