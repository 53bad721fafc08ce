package jssize

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"purra.dev/purramcp/internal/strictjson"
)

// floatSize counts a safe integer's digits directly and stringCost checks
// and counts a string in one pass; these tests hold both to the spellings
// they replace: strconv's for every number, utf8.ValidString with
// strictjson.StringCost for every string.

// refFloatSize is floatSize as it was: every number through strconv.
func refFloatSize(f float64) (int, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f == 0 {
		return 1, true
	}
	var buf [32]byte
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	n := len(b)
	if format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		n--
	}
	return n, true
}

func TestFloatSize_MatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 8))
	var fs []float64
	for e := range 64 {
		p := math.Ldexp(1, e)
		fs = append(fs, p, p-1, p+1, -p, -(p - 1), math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	for p := 1.0; p < 1e22; p *= 10 {
		fs = append(fs, p, p-1, p+1, -p, p/3, math.Trunc(p/3))
	}
	for range 100000 {
		fs = append(fs, float64(r.Int64N(1<<53))*float64(1-2*r.IntN(2)), r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)),
			math.Float64frombits(r.Uint64()), float64(r.IntN(100000)))
	}
	fs = append(fs, math.Copysign(0, -1), 1<<53, -(1 << 53), 1<<53-1, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.5, -0.5)
	for _, f := range fs {
		got, gotOK := floatSize(f)
		want, wantOK := refFloatSize(f)
		if got != want || gotOK != wantOK {
			t.Fatalf("floatSize(%v) = %d, %v; strconv %d, %v", f, got, gotOK, want, wantOK)
		}
	}
}

func TestStringCost_MatchesTwoPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 9))
	pieces := []string{"", "a", "abcdefgh", "\"", "\\", "\n", "\x00", "\x1f", "é", "😀", "\u2028", "\ufffd", "\xff", "\xc3",
		"\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\x7f", strings.Repeat("w", 17)}
	for range 100000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		got, ok := stringCost(s)
		if ok != utf8.ValidString(s) || ok && got != strictjson.StringCost(s) {
			t.Fatalf("stringCost(%q) = %d, %v; want %d, %v", s, got, ok, strictjson.StringCost(s), utf8.ValidString(s))
		}
	}
}
