package strictjson

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse reads exactly one RFC 8259 JSON value from text, optionally
// surrounded by JSON whitespace, and returns it as a
// value of this package's domain.
//
// It rejects invalid UTF-8, a BOM, trailing data, duplicate keys (compared
// after unescaping), lone surrogate escapes, raw control characters, leading
// zeros, NaN and Infinity, numbers that overflow binary64 and integral
// numbers beyond ±(2^53−1). The text length is checked against lim.Bytes
// before any work; nodes, depth and detached bytes are checked while
// parsing, so recursion never goes deeper than lim.Depth+1 frames.
func Parse(text string, lim Limits) (any, error) {
	if len(text) > lim.Bytes {
		return nil, &Error{Offset: 0, reason: "text exceeds byte limit"}
	}
	if !utf8.ValidString(text) {
		return nil, &Error{Offset: 0, reason: "invalid UTF-8"}
	}
	// One allocation holds the meter, the parser and the first buffers and
	// chunks, which serve a small document (a tool call's arguments)
	// without another one (an object of more than scanMembers members adds
	// its index). Values carved from the chunks keep it alive, as a
	// snapshot's chunks are kept.
	x := &struct {
		m       meter
		p       parser
		members [8]member
		items   [8]any
		objects [2]Object
		names   [8]string
		elems   [8]any
	}{m: meter{lim: lim}}
	x.p = parser{s: text, m: &x.m, members: x.members[:0], items: x.items[:0]}
	x.p.objects.seed(x.objects[:])
	x.p.names.seed(x.names[:])
	x.p.elems.seed(x.elems[:])
	return x.p.run(0)
}

// parseWith parses text as one value whose root sits at level, charging m.
func parseWith(text string, m *meter, level int) (any, error) {
	p := &parser{s: text, m: m}
	return p.run(level)
}

// run parses p's text as one value whose root sits at level.
func (p *parser) run(level int) (any, error) {
	v, err := p.value(level)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.fail("trailing data")
	}
	return v, nil
}

type parser struct {
	s string
	i int
	m *meter
	// members and items hold the members and elements of every container
	// being parsed, innermost last; a container copies its own out once it
	// is complete.
	members []member
	items   []any
	// The chunks complete containers are carved from, as a snapshot's are.
	objects chunk[Object]
	names   chunk[string]
	elems   chunk[any]
}

// smallObject is the member count up to which duplicate names are found by
// scanning the members parsed so far; a larger object indexes their
// positions as it goes, and the index becomes the object's own when the
// order does not change.
const smallObject = 16

func (p *parser) fail(reason string) error { return &Error{Offset: p.i, reason: reason} }

// space skips JSON whitespace: space, tab, LF and CR only.
func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(level int) (any, error) {
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

func (p *parser) literal(word string, v any) (any, error) {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return nil, p.fail("invalid literal")
	}
	p.i += len(word)
	if !p.m.add(scalarCost) {
		return nil, p.fail("byte limit exceeded")
	}
	return v, nil
}

func (p *parser) number() (any, error) {
	start := p.i
	end, ok := scanNumber(p.s, p.i)
	if !ok {
		return nil, p.fail("invalid number")
	}
	p.i = end
	f, ok := NumberValue(p.s[start:end])
	if !ok {
		return nil, &Error{Offset: start, reason: "number outside the interoperable range"}
	}
	if !p.m.add(numberCost) {
		return nil, p.fail("byte limit exceeded")
	}
	return f, nil
}

// scanNumber matches -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i and
// returns the end offset.
func scanNumber(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// NumberValue converts a JSON number literal to the nearest binary64
// (round half to even) and applies the domain's number rules: overflow to ±Inf and integral
// magnitudes above 2^53−1 are rejected, underflow to 0 or a subnormal is
// accepted, and −0 becomes +0. The literal must already match the grammar.
func NumberValue(lit string) (float64, bool) {
	if f, ok := shortInteger(lit); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && (math.IsInf(f, 0) || err.(*strconv.NumError).Err != strconv.ErrRange) {
		return 0, false
	}
	return normalize(f)
}

// shortInteger is NumberValue for a literal of at most 15 digits with no
// fraction or exponent, the common case, without strconv: such an integer is
// below 2^53, so its float64 is exact, and ParseFloat then normalize give the
// same value (−0 folds into +0). ok is false for any other literal.
func shortInteger(lit string) (float64, bool) {
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		c := digits[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if digits[0] == '0' && len(digits) > 1 {
		return 0, false // not a JSON literal: left to ParseFloat's caller
	}
	if len(digits) < len(lit) {
		n = -n
	}
	return float64(n), true
}

// ValidNumberLiteral reports whether lit is exactly one JSON number.
func ValidNumberLiteral(lit string) bool {
	end, ok := scanNumber(lit, 0)
	return ok && end == len(lit)
}

// normalize applies the finite and safe-integer rules and folds −0 into +0.
func normalize(f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if math.Abs(f) > MaxSafeInteger && f == math.Trunc(f) {
		return 0, false
	}
	if f == 0 {
		return 0, true
	}
	return f, true
}

func (p *parser) array(level int) (any, error) {
	p.i++ // '['
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return make([]any, 0), p.charge(0)
	}
	base := len(p.items)
	defer func() { p.items = p.items[:base] }()
	for {
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated array")
		}
		c := p.s[p.i]
		p.i++
		if c == ']' {
			items := p.items[base:]
			out := append(p.elems.carve(len(items), 16, 1024), items...)
			clear(items) // the stack keeps no reference to the array's values
			return out, p.charge(len(out))
		}
		if c != ',' {
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p *parser) object(level int) (any, error) {
	p.i++ // '{'
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return p.newObject(nil, nil), p.charge(0)
	}
	base := len(p.members)
	defer func() { p.members = p.members[:base] }()
	var index map[string]int // the members so far by position, once there are more than smallObject
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
		if p.duplicate(key, p.members[base:], index) {
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
		p.members = append(p.members, member{key, v})
		switch ms := p.members[base:]; {
		case index != nil:
			index[key] = len(ms) - 1
		case len(ms) > smallObject:
			index = make(map[string]int, 2*len(ms))
			for i, m := range ms {
				index[m.key] = i
			}
		}
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated object")
		}
		c := p.s[p.i]
		p.i++
		if c == '}' {
			ms := p.members[base:]
			obj := p.newObject(ms, index)
			clear(ms) // the stack keeps no reference to the object's values
			return obj, p.charge(len(obj.Keys))
		}
		if c != ',' {
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

// duplicate reports whether key names one of the object's members so far:
// ms, which index holds too once it is not nil.
func (p *parser) duplicate(key string, ms []member, index map[string]int) bool {
	if index != nil {
		_, dup := index[key]
		return dup
	}
	for _, m := range ms {
		if m.key == key {
			return true
		}
	}
	return false
}

// newObject returns the complete object of members ms (reordered in
// place into enumeration order); index, when not nil, already maps every
// member to its position in ms and becomes the object's index unless the
// order changed.
func (p *parser) newObject(ms []member, index map[string]int) *Object {
	reordered := enumerationOrder(ms, memberKey)
	obj := p.objects.next(4, 256)
	obj.Keys = p.names.carve(len(ms), 8, 1024)
	obj.Values = p.elems.carve(len(ms), 16, 1024)
	for _, m := range ms {
		obj.Keys = append(obj.Keys, m.key)
		obj.Values = append(obj.Values, m.value)
	}
	if index != nil && !reordered {
		obj.index = index
	} else {
		obj.seal()
	}
	return obj
}

// charge adds a container's cost once its children are counted.
func (p *parser) charge(children int) error {
	if !p.m.add(containerCost(children)) {
		return p.fail("byte limit exceeded")
	}
	return nil
}

// str reads a string literal starting at the opening quote. The text is
// already known to be valid UTF-8.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			s := p.s[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' {
			return p.escaped(start)
		}
		if c < 0x20 {
			return "", p.fail("control character in string")
		}
		p.i++
	}
	return "", p.fail("unterminated string")
}

// escaped finishes a string that contains at least one escape.
func (p *parser) escaped(start int) (string, error) {
	buf := []byte(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			break
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("invalid escape")
		}
	}
	return "", p.fail("unterminated string")
}

// unicodeEscape decodes the hex digits after `\u`, joining a surrogate pair
// written as two escapes; any lone surrogate is rejected.
func (p *parser) unicodeEscape() (rune, error) {
	r, ok := p.hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if r >= 0xDC00 || len(p.s)-p.i < 6 || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
		return 0, p.fail("lone surrogate")
	}
	p.i += 2
	lo, ok := p.hex4()
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return 0, p.fail("lone surrogate")
	}
	return utf16.DecodeRune(r, lo), nil
}

func (p *parser) hex4() (rune, bool) {
	r, ok := Hex4(p.s[p.i:])
	if ok {
		p.i += 4
	}
	return r, ok
}

// Hex4 decodes the four hex digits, of either case, that s starts with: the
// XXXX of a \uXXXX escape. It reports false when s is shorter or any of
// the four is not a hex digit.
func Hex4[T string | []byte](s T) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
