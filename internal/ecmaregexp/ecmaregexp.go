// Package ecmaregexp translates ECMA-262 regular expressions, as JSON Schema's
// "pattern" specifies them (the u flag, no other flag, applied unanchored),
// into Go's regexp, and refuses every pattern whose translation would not
// match exactly the same strings.
//
// The input domain is valid UTF-8, which is all a strictjson value can hold:
// a JSON string with a lone surrogate never reaches a matcher (strictjson
// rejects it), so a u-flag pattern and Go's regexp both see the same sequence
// of code points, and a translation that agrees on code points agrees on
// every input.
//
// Translated exactly: literals (every one emitted as \x{...}), the u-flag
// escapes \t \n \v \f \r \0 \cX \xHH \uHHHH (surrogate pairs joined) \u{H...}
// and the identity escapes of syntax characters and "/"; "." as every code
// point except the line terminators \n \r U+2028 U+2029; \d [0-9], \w
// [A-Za-z0-9_], \s ECMA-262's WhiteSpace and LineTerminator set (U+0009–U+000D,
// U+0020, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000, U+FEFF) and their complements, each as an explicit class; classes
// with ranges, negation and the u-flag "-" rules, computed as explicit sets
// ([] matches nothing, [^] everything); ^ and $ as whole-input anchors (\A,
// \z: no m flag); \b (ASCII word characters in both); groups,
// non-capturing groups and named groups with ASCII names (captures never
// change whether a string matches); alternation; and the quantifiers * + ?
// {n} {n,} {n,m}, greedy or lazy (laziness never changes whether a string
// matches), with bounds up to 1000, Go's limit.
//
// Lookaheads are translated in one position only: right after a leading ^
// in a pattern without a top-level "|" (^(?!\.)(?=.*\d)R), where each is an
// independent test at the start of the input (see translate); the pattern
// then compiles to several Go regexps that must all agree.
//
// Refused as unsupported although valid ECMA-262: every other lookahead,
// lookbehind,
// backreferences (\1, \k<name>), \B (V8 also tests it between the halves of
// an astral character), \p{...} and \P{...} (Unicode versions may differ), lone surrogate escapes, named groups with non-ASCII names,
// repetition bounds over 1000, patterns over MaxPatternBytes or whose Go
// program exceeds MaxProgram instructions. Refused as syntax errors, as the
// u flag makes them: lone ] { }, a quantifier with nothing to repeat or after
// an assertion, unknown escapes (\a, \-, \z, ...), incomplete \x \u \c, \0
// followed by a digit, a class range with a class escape or out of order, an
// unterminated group or class, and duplicate group names.
package ecmaregexp

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on what Compile accepts.
const (
	// MaxPatternBytes is the longest pattern source accepted.
	MaxPatternBytes = 1024
	// MaxProgram bounds the instructions of the compiled Go program, which
	// bounds the work of one match to O(len(input) × MaxProgram).
	MaxProgram = 20000
	// maxRepeat is Go's repetition limit.
	maxRepeat = 1000
	// maxNesting bounds group nesting.
	maxNesting = 200
	// CostUnit is the number of (input byte × program instruction) units one
	// work step pays for (see Cost).
	CostUnit = 16
)

var (
	// ErrSyntax is a pattern that is not a valid ECMA-262 pattern under the u flag.
	ErrSyntax = errors.New("ecmaregexp: invalid ECMA-262 pattern (u flag)")
	// ErrUnsupported is a valid pattern without an exact Go translation.
	ErrUnsupported = errors.New("ecmaregexp: pattern has no exact Go translation")
)

// A Regexp is a compiled pattern. It is immutable and safe for concurrent use.
type Regexp struct {
	parts []part
	size  int
}

// part is one Go regexp that must match (want) or must not match the input.
// A plain pattern is one part; "^" followed by lookaheads adds one part per
// lookahead, anchored at the start of the input.
type part struct {
	re   *regexp.Regexp
	want bool
}

// Compile translates pattern; the error is ErrSyntax or ErrUnsupported.
func Compile(pattern string) (*Regexp, error) {
	main, looks, err := translate(pattern)
	if err != nil {
		return nil, err
	}
	r := &Regexp{}
	for _, l := range append(looks, look{src: main, want: true}) {
		parsed, err := syntax.Parse(l.src, syntax.Perl)
		if err != nil {
			return nil, ErrUnsupported
		}
		prog, err := syntax.Compile(parsed.Simplify())
		if err != nil {
			return nil, ErrUnsupported
		}
		re, err := regexp.Compile(l.src)
		if err != nil {
			return nil, ErrUnsupported
		}
		r.size += len(prog.Inst)
		r.parts = append(r.parts, part{re: re, want: l.want})
	}
	if r.size > MaxProgram {
		return nil, ErrUnsupported
	}
	return r, nil
}

// MatchString reports whether s contains a match, as ECMA-262's
// RegExp.prototype.test with the u flag does. s must be valid UTF-8.
func (r *Regexp) MatchString(s string) bool {
	for _, p := range r.parts {
		if p.re.MatchString(s) != p.want {
			return false
		}
	}
	return true
}

// Cost is the work, in steps, that matching s is charged:
// 1 + (len(s)+1) × program size / CostUnit, rounded down, where the program
// size counts the instructions of every part. Go's matcher runs in time
// linear in that product.
func (r *Regexp) Cost(s string) int { return 1 + (len(s)+1)*r.size/CostUnit }

// String returns the Go syntax of the translation: the parts joined by
// " && ", a refused lookahead as "!(...)".
func (r *Regexp) String() string {
	var b []string
	for _, p := range r.parts {
		if p.want {
			b = append(b, p.re.String())
		} else {
			b = append(b, "!("+p.re.String()+")")
		}
	}
	return strings.Join(b, " && ")
}

// Translate returns the Go regexp syntax (syntax.Perl) that matches exactly
// what pattern matches, or ErrSyntax or ErrUnsupported. A pattern that needs
// more than one Go regexp (leading lookaheads) is ErrUnsupported here; use
// Compile.
func Translate(pattern string) (string, error) {
	main, looks, err := translate(pattern)
	if err != nil {
		return "", err
	}
	if len(looks) > 0 {
		return "", ErrUnsupported
	}
	return main, nil
}

// look is one translated lookahead: the Go syntax of its body anchored at
// the input's start, and whether it must match ((?=) or must not ((?!).
type look struct {
	src  string
	want bool
}

// translate parses pattern. A pattern of the form ^(?=A)(?!B)...R, with no
// "|" at its top level, is the conjunction "A matches at 0, B does not, and
// ^R matches": "^" holds only at 0, so every lookahead is tested there, and
// a lookahead is atomic and, without backreferences, independent of R. The
// lookaheads are returned apart; their bodies may not hold lookarounds.
func translate(pattern string) (string, []look, error) {
	if len(pattern) > MaxPatternBytes || !utf8.ValidString(pattern) {
		return "", nil, ErrUnsupported
	}
	p := &parser{src: []rune(pattern), names: map[string]bool{}}
	var looks []look
	if strings.HasPrefix(pattern, "^(?=") || strings.HasPrefix(pattern, "^(?!") {
		p.pos = 1
		for strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+3)]), "(?=") ||
			strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+3)]), "(?!") {
			want := p.src[p.pos+2] == '='
			p.pos += 3
			p.out.WriteString(`\A(?:`)
			if err := p.disjunction(1); err != nil {
				return "", nil, err
			}
			if r, ok := p.peek(0); !ok || r != ')' {
				return "", nil, ErrSyntax
			}
			p.pos++
			p.out.WriteByte(')')
			if err := p.noQuantifier(); err != nil {
				return "", nil, err
			}
			looks = append(looks, look{src: p.out.String(), want: want})
			p.out.Reset()
		}
		p.out.WriteString(`\A`)
		if err := p.alternative(0); err != nil {
			return "", nil, err
		}
		if p.pos != len(p.src) {
			if p.src[p.pos] == '|' {
				return "", nil, ErrUnsupported // the lookaheads belong to the first alternative only
			}
			return "", nil, ErrSyntax
		}
		return p.out.String(), looks, nil
	}
	if err := p.disjunction(0); err != nil {
		return "", nil, err
	}
	if p.pos != len(p.src) { // a ")" with no group open
		return "", nil, ErrSyntax
	}
	return p.out.String(), nil, nil
}

type parser struct {
	src   []rune
	pos   int
	out   strings.Builder
	names map[string]bool
	// size estimates the instructions of the Go program emitted so far: one
	// per atom and assertion, two per group, one per "|" and per quantifier,
	// an atom repeated n times (the larger bound, or the lower one plus one
	// when unbounded) counted n times. Go's parser expands repeats before it
	// can refuse a large program, so the estimate refuses it first.
	size int
}

func (p *parser) peek(off int) (rune, bool) {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off], true
	}
	return 0, false
}

func (p *parser) more() bool { return p.pos < len(p.src) }

// disjunction parses Alternative ('|' Alternative)* up to a ")" or the end.
func (p *parser) disjunction(depth int) error {
	if depth > maxNesting {
		return ErrUnsupported
	}
	for {
		if err := p.alternative(depth); err != nil {
			return err
		}
		if r, ok := p.peek(0); ok && r == '|' {
			p.pos++
			p.size++
			p.out.WriteByte('|')
			continue
		}
		return nil
	}
}

func (p *parser) alternative(depth int) error {
	for p.more() {
		r := p.src[p.pos]
		if r == '|' || r == ')' {
			return nil
		}
		if err := p.term(depth); err != nil {
			return err
		}
	}
	return nil
}

// term parses one assertion, or one atom with an optional quantifier.
func (p *parser) term(depth int) error {
	r := p.src[p.pos]
	before := p.size
	p.size++
	switch r {
	case '^', '$':
		p.pos++
		if r == '^' {
			p.out.WriteString(`\A`)
		} else {
			p.out.WriteString(`\z`)
		}
		return p.noQuantifier()
	case '\\':
		if n, ok := p.peek(1); ok && n == 'b' {
			p.pos += 2
			p.out.WriteString(`\b`)
			return p.noQuantifier()
		}
		if n, ok := p.peek(1); ok && n == 'B' {
			// V8 also tests \B between the two halves of an astral character
			// (both non-word), so it can match where no code-point position does.
			return ErrUnsupported
		}
	case '(':
		if p.lookaround() {
			return ErrUnsupported
		}
	case '*', '+', '?', '{', '}', ']':
		return ErrSyntax // nothing to repeat, or a lone bracket (u flag)
	}
	if err := p.atom(depth); err != nil {
		return err
	}
	return p.quantifier(before)
}

// lookaround reports whether a lookahead or lookbehind starts here.
func (p *parser) lookaround() bool {
	rest := string(p.src[p.pos:min(len(p.src), p.pos+4)])
	return strings.HasPrefix(rest, "(?=") || strings.HasPrefix(rest, "(?!") ||
		strings.HasPrefix(rest, "(?<=") || strings.HasPrefix(rest, "(?<!")
}

// noQuantifier fails when a quantifier follows an assertion (u flag).
func (p *parser) noQuantifier() error {
	if r, ok := p.peek(0); ok && (r == '*' || r == '+' || r == '?' || r == '{') {
		return ErrSyntax
	}
	return nil
}

func (p *parser) atom(depth int) error {
	r := p.src[p.pos]
	switch r {
	case '.':
		p.pos++
		p.out.WriteString(dotSet.class())
		return nil
	case '[':
		set, err := p.class()
		if err != nil {
			return err
		}
		p.out.WriteString(set.class())
		return nil
	case '(':
		return p.group(depth)
	case '\\':
		return p.atomEscape()
	}
	p.pos++
	writeLiteral(&p.out, r)
	return nil
}

func (p *parser) group(depth int) error {
	p.pos++ // (
	if r, ok := p.peek(0); ok && r == '?' {
		n, _ := p.peek(1)
		switch n {
		case ':':
			p.pos += 2
		case '<':
			p.pos += 2
			if err := p.groupName(); err != nil {
				return err
			}
		default:
			return ErrSyntax // (?i) and other modifiers: not in ECMA-262 as Node 20 runs it
		}
	}
	p.size += 2
	p.out.WriteString("(?:")
	if err := p.disjunction(depth + 1); err != nil {
		return err
	}
	if r, ok := p.peek(0); !ok || r != ')' {
		return ErrSyntax
	}
	p.pos++
	p.out.WriteByte(')')
	return nil
}

// groupName reads "name>" of a named group: an ASCII identifier
// ([A-Za-z_$][A-Za-z0-9_$]*), each name once.
func (p *parser) groupName() error {
	start := p.pos
	for p.more() && p.src[p.pos] != '>' {
		c := p.src[p.pos]
		ascii := c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			p.pos > start && c >= '0' && c <= '9'
		if !ascii {
			if c == '\\' || c > 0x7f {
				return ErrUnsupported // escapes and Unicode identifiers: not translated
			}
			return ErrSyntax
		}
		p.pos++
	}
	if !p.more() || p.pos == start {
		return ErrSyntax
	}
	name := string(p.src[start:p.pos])
	p.pos++ // >
	if p.names[name] {
		return ErrSyntax
	}
	p.names[name] = true
	return nil
}

// quantifier parses an optional quantifier after an atom that started when
// the size estimate was before, emits it and updates the estimate.
func (p *parser) quantifier(before int) error {
	if p.size > MaxProgram {
		return ErrUnsupported
	}
	r, ok := p.peek(0)
	if !ok {
		return nil
	}
	atom := p.size - before
	switch r {
	case '*', '+', '?':
		p.pos++
		p.size++
		p.out.WriteRune(r)
	case '{':
		lo, hi, err := p.braces()
		if err != nil {
			return err
		}
		p.size = before + atom*max(lo+1, hi) + 1
		if p.size > MaxProgram {
			return ErrUnsupported
		}
		switch {
		case hi == lo:
			p.out.WriteString("{" + strconv.Itoa(lo) + "}")
		case hi < 0:
			p.out.WriteString("{" + strconv.Itoa(lo) + ",}")
		default:
			p.out.WriteString("{" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + "}")
		}
	default:
		return nil
	}
	if r, ok := p.peek(0); ok && r == '?' {
		p.pos++ // lazy: the same strings match
	}
	if r, ok := p.peek(0); ok && (r == '*' || r == '+' || r == '?' || r == '{') {
		return ErrSyntax // nothing to repeat
	}
	return nil
}

// braces parses {n}, {n,} or {n,m}; hi is -1 for {n,}. Under the u flag any
// other "{" is a syntax error.
func (p *parser) braces() (lo, hi int, err error) {
	p.pos++ // {
	lo, okLo, bigLo := p.number()
	if !okLo {
		return 0, 0, ErrSyntax
	}
	hi, bigHi := lo, bigLo
	if r, ok := p.peek(0); ok && r == ',' {
		p.pos++
		var okHi bool
		hi, okHi, bigHi = p.number()
		if !okHi {
			hi, bigHi = -1, false
		}
	}
	if r, ok := p.peek(0); !ok || r != '}' {
		return 0, 0, ErrSyntax
	}
	p.pos++
	if !bigLo && !bigHi && hi >= 0 && lo > hi {
		return 0, 0, ErrSyntax
	}
	if bigLo && !bigHi && hi >= 0 {
		return 0, 0, ErrSyntax // lo is huge, hi is not: out of order
	}
	if bigLo || bigHi || lo > maxRepeat || hi > maxRepeat {
		return 0, 0, ErrUnsupported
	}
	return lo, hi, nil
}

// number reads decimal digits; big reports a value over maxRepeat (the
// exact value then does not matter, except for order with the other bound,
// which braces checks when both are small).
func (p *parser) number() (n int, ok, big bool) {
	start := p.pos
	for p.more() && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		if !big {
			n = n*10 + int(p.src[p.pos]-'0')
			if n > maxRepeat {
				big = true
			}
		}
		p.pos++
	}
	return n, p.pos > start, big
}

// atomEscape parses an escape outside a class.
func (p *parser) atomEscape() error {
	n, ok := p.peek(1)
	if !ok {
		return ErrSyntax // a trailing backslash
	}
	switch {
	case n >= '1' && n <= '9', n == 'k':
		return ErrUnsupported // backreferences (or, without such a group, a syntax error; refused either way)
	case n == 'p' || n == 'P':
		return ErrUnsupported
	}
	if set, ok := classEscape(n); ok {
		p.pos += 2
		p.out.WriteString(set.class())
		return nil
	}
	r, err := p.characterEscape()
	if err != nil {
		return err
	}
	writeLiteral(&p.out, r)
	return nil
}

// characterEscape parses the CharacterEscape at p.pos ("\" included) and
// returns its code point.
func (p *parser) characterEscape() (rune, error) {
	n := p.src[p.pos+1]
	p.pos += 2
	switch n {
	case 't':
		return '\t', nil
	case 'n':
		return '\n', nil
	case 'v':
		return '\v', nil
	case 'f':
		return '\f', nil
	case 'r':
		return '\r', nil
	case 'c':
		c, ok := p.peek(0)
		if !ok || !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return 0, ErrSyntax
		}
		p.pos++
		return c % 32, nil
	case '0':
		if d, ok := p.peek(0); ok && d >= '0' && d <= '9' {
			return 0, ErrSyntax
		}
		return 0, nil
	case 'x':
		v, ok := p.hex(2)
		if !ok {
			return 0, ErrSyntax
		}
		return v, nil
	case 'u':
		return p.unicodeEscape()
	}
	if strings.ContainsRune(`^$\.*+?()[]{}|/`, n) {
		return n, nil
	}
	return 0, ErrSyntax // no identity escape of other characters under the u flag
}

// unicodeEscape parses what follows "\u": HHHH (a surrogate pair written as
// two escapes is one code point) or {H...} up to U+10FFFF.
func (p *parser) unicodeEscape() (rune, error) {
	if r, ok := p.peek(0); ok && r == '{' {
		p.pos++
		var v rune
		digits := 0
		for p.more() && p.src[p.pos] != '}' {
			d, ok := hexValue(p.src[p.pos])
			if !ok {
				return 0, ErrSyntax
			}
			v = v*16 + d
			if v > utf8.MaxRune {
				return 0, ErrSyntax
			}
			digits++
			p.pos++
		}
		if !p.more() || digits == 0 {
			return 0, ErrSyntax
		}
		p.pos++ // }
		if v >= 0xD800 && v <= 0xDFFF {
			return 0, ErrUnsupported
		}
		return v, nil
	}
	v, ok := p.hex(4)
	if !ok {
		return 0, ErrSyntax
	}
	if v >= 0xD800 && v <= 0xDBFF && p.pos+6 <= len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
		save := p.pos
		p.pos += 2
		if lo, ok := p.hex(4); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00), nil
		}
		p.pos = save
	}
	if v >= 0xD800 && v <= 0xDFFF {
		return 0, ErrUnsupported // a lone surrogate: no such code point in valid UTF-8
	}
	return v, nil
}

func (p *parser) hex(n int) (rune, bool) {
	if p.pos+n > len(p.src) {
		return 0, false
	}
	var v rune
	for i := range n {
		d, ok := hexValue(p.src[p.pos+i])
		if !ok {
			return 0, false
		}
		v = v*16 + d
	}
	p.pos += n
	return v, true
}

func hexValue(r rune) (rune, bool) {
	switch {
	case r >= '0' && r <= '9':
		return r - '0', true
	case r >= 'a' && r <= 'f':
		return r - 'a' + 10, true
	case r >= 'A' && r <= 'F':
		return r - 'A' + 10, true
	}
	return 0, false
}

// class parses a character class from "[" and returns its exact set.
func (p *parser) class() (set, error) {
	p.pos++ // [
	negate := false
	if r, ok := p.peek(0); ok && r == '^' {
		negate = true
		p.pos++
	}
	var s set
	for {
		r, ok := p.peek(0)
		if !ok {
			return nil, ErrSyntax
		}
		if r == ']' {
			p.pos++
			break
		}
		a, aClass, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if d, ok := p.peek(0); ok && d == '-' {
			if e, ok := p.peek(1); ok && e != ']' {
				p.pos++ // -
				b, bClass, err := p.classAtom()
				if err != nil {
					return nil, err
				}
				if aClass || bClass || a[0].lo > b[0].lo {
					return nil, ErrSyntax
				}
				s = append(s, rng{a[0].lo, b[0].lo})
				continue
			}
		}
		s = append(s, a...)
	}
	s = s.normalize()
	if negate {
		s = s.complement()
	}
	return s, nil
}

// classAtom parses one class atom: its set, and whether it is a class
// escape (\d, \s, \w and complements), which cannot bound a range.
func (p *parser) classAtom() (set, bool, error) {
	r := p.src[p.pos]
	if r != '\\' {
		p.pos++
		return set{{r, r}}, false, nil
	}
	n, ok := p.peek(1)
	if !ok {
		return nil, false, ErrSyntax
	}
	switch {
	case n == 'b':
		p.pos += 2
		return set{{'\b', '\b'}}, false, nil
	case n == '-':
		p.pos += 2
		return set{{'-', '-'}}, false, nil
	case n == 'p' || n == 'P':
		return nil, false, ErrUnsupported
	case n >= '1' && n <= '9', n == 'B', n == 'k':
		return nil, false, ErrSyntax
	}
	if s, ok := classEscape(n); ok {
		p.pos += 2
		return s, true, nil
	}
	c, err := p.characterEscape()
	if err != nil {
		return nil, false, err
	}
	return set{{c, c}}, false, nil
}

// writeLiteral emits r as itself when it is an ASCII letter or digit, else
// as \x{...}, which Go's syntax reads as that code point wherever it stands.
func writeLiteral(b *strings.Builder, r rune) {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
		b.WriteRune(r)
		return
	}
	b.WriteString(`\x{` + strconv.FormatInt(int64(r), 16) + `}`)
}
