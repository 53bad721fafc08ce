package ecmaregexp

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rng is an inclusive range of code points.
type rng struct{ lo, hi rune }

// set is a set of code points as ranges; normalize sorts and merges them.
type set []rng

func (s set) normalize() set {
	out := slices.Clone(s)
	slices.SortFunc(out, func(a, b rng) int { return int(a.lo - b.lo) })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && r.lo <= merged[n-1].hi+1 {
			merged[n-1].hi = max(merged[n-1].hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// complement is every code point up to U+10FFFF not in s (s normalized).
func (s set) complement() set {
	var out set
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, rng{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, rng{next, utf8.MaxRune})
	}
	return out
}

// class emits s (normalized) as a Go class of explicit ranges. Surrogates
// are left out: valid UTF-8 never holds one. An empty set is a class that
// matches nothing.
func (s set) class() string {
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	for _, r := range s {
		for _, part := range withoutSurrogates(r) {
			b.WriteString(`\x{` + strconv.FormatInt(int64(part.lo), 16) + `}`)
			if part.hi != part.lo {
				b.WriteString(`-\x{` + strconv.FormatInt(int64(part.hi), 16) + `}`)
			}
			n++
		}
	}
	if n == 0 {
		return `[^\x{0}-\x{10ffff}]`
	}
	b.WriteByte(']')
	return b.String()
}

func withoutSurrogates(r rng) []rng {
	const lo, hi = 0xD800, 0xDFFF
	if r.hi < lo || r.lo > hi {
		return []rng{r}
	}
	var out []rng
	if r.lo < lo {
		out = append(out, rng{r.lo, lo - 1})
	}
	if r.hi > hi {
		out = append(out, rng{hi + 1, r.hi})
	}
	return out
}

// The class escapes of ECMA-262 under the u flag without the i flag.
var (
	digitSet = set{{'0', '9'}}
	wordSet  = set{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// spaceSet is WhiteSpace (TAB, VT, FF, ZWNBSP U+FEFF and every Zs code
	// point, a set unchanged from Unicode 6.3 to 17.0) plus LineTerminator
	// (LF, CR, U+2028, U+2029).
	spaceSet = set{{0x09, 0x0D}, {0x20, 0x20}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
		{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}
	// dotSet is every code point but the line terminators.
	dotSet = set{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}.complement()
)

// classEscape returns the set of \d \D \s \S \w \W.
func classEscape(c rune) (set, bool) {
	switch c {
	case 'd':
		return digitSet, true
	case 'D':
		return digitSet.complement(), true
	case 's':
		return spaceSet, true
	case 'S':
		return spaceSet.complement(), true
	case 'w':
		return wordSet, true
	case 'W':
		return wordSet.complement(), true
	}
	return nil, false
}
