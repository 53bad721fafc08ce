// Package jssize measures a Go value as JavaScript measures it: the UTF-8
// length of JSON.stringify of the decoded value, which is how the
// TypeScript package counts bytes. Besides the standard library it imports
// only strictjson, whose StringCost is the one JSON-string length of the
// module.
//
// The value is marshaled with encoding/json (HTML escaping off), then every
// \uXXXX escape in a string is recounted at the length JavaScript writes for
// that code unit: Go escapes U+2028, U+2029, invalid UTF-8 (as \ufffd) and,
// inside nested MarshalJSON output, <, > and &, all of which JSON.stringify
// writes raw. Go's float formatting matches ECMAScript Number::toString except
// for negative zero, which Go writes "-0" and JavaScript "0".
//
// Decoded JSON values (nil, bool, float64, string, map[string]any, []any, the
// shapes go-sdk decodes into) are measured directly, without marshaling,
// by rules that give the same count (see valueSize); anything else takes the
// encoding/json path above. Placeholder lets a caller measure a struct that
// holds large decoded values through the fast path.
package jssize

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"purra.dev/purramcp/internal/strictjson"
)

// Placeholder is a one-byte JSON value a caller may put in place of a large
// decoded value inside a struct, so that
//
//	Size(v) == Size(v with the value replaced by Placeholder) - 1 + Size(value)
//
// measures the struct with encoding/json and the value without it.
var Placeholder = json.RawMessage("0")

// Size returns the UTF-8 length of JSON.stringify of v, as JavaScript would
// write the decoded value. It fails when encoding/json cannot marshal v (for
// example NaN or an unsupported type). A json.Number or json.RawMessage is
// counted as its compact spelling.
func Size(v any) (int, error) {
	if n, ok := valueSize(v, 0); ok {
		return n, nil
	}
	return marshalSize(v)
}

// marshalSize is Size by encoding/json and escapeSavings.
func marshalSize(v any) (int, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return 0, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	return len(b) - escapeSavings(b), nil
}

// maxFastDepth bounds valueSize's recursion; deeper values (or a cyclic one,
// which only a host can build) take the encoding/json path, which detects
// cycles. go-sdk decodes at most 1000 levels.
const maxFastDepth = 1000

// valueSize measures a decoded JSON value without marshaling it, by the rules
// Size applies to encoding/json's output: compact separators, a string as
// stringSize, a number as floatSize. ok is false for any other type
// anywhere inside v, for NaN and infinities, and past maxFastDepth; the
// caller then marshals.
func valueSize(v any, depth int) (n int, ok bool) {
	if depth > maxFastDepth {
		return 0, false
	}
	switch x := v.(type) {
	case nil:
		return len("null"), true
	case bool:
		if x {
			return len("true"), true
		}
		return len("false"), true
	case float64:
		return floatSize(x)
	case string:
		return stringSize(x), true
	case []any:
		n = 2 + max(len(x)-1, 0) // brackets and commas
		for _, item := range x {
			m, ok := valueSize(item, depth+1)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	case map[string]any:
		n = 2 + max(len(x)-1, 0) + len(x) // braces, commas and colons
		for k, item := range x {
			m, ok := valueSize(item, depth+1)
			if !ok {
				return 0, false
			}
			n += stringSize(k) + m
		}
		return n, true
	}
	return 0, false
}

// floatSize is the length of encoding/json's spelling of f (shortest
// round-trip digits, exponent form below 1e-6 and from 1e21, the exponent
// without leading zeros), which is ECMAScript's, except that negative zero
// counts as "0".
func floatSize(f float64) (int, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false // encoding/json fails
	}
	if f == 0 {
		return 1, true
	}
	if a := math.Abs(f); a < 1<<53 && a == math.Trunc(a) {
		// A safe integer is spelled as its decimal digits, with a sign.
		n := intDigits(uint64(a))
		if f < 0 {
			n++
		}
		return n, true
	}
	var buf [32]byte
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	n := len(b)
	if format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		n-- // e-07 is written e-7
	}
	return n, true
}

// intDigits is the number of decimal digits of u.
func intDigits(u uint64) int {
	n := 1
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

// stringSize is the length JSON.stringify writes for s: quotes, each valid
// rune at its unitLength (a surrogate pair's four bytes for a supplementary
// rune) and each byte of invalid UTF-8 as U+FFFD, three bytes, which is what
// Go's \ufffd escape is counted as.
func stringSize(s string) int {
	if n, ok := stringCost(s); ok {
		return n
	}
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n += unitLength(rune(c))
			i++
			continue
		}
		r, width := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && width == 1 {
			n += 3
		} else {
			n += width // U+2028, U+2029 and every other rune raw
		}
		i += width
	}
	return n
}

// escapeSavings scans compact JSON b and returns how many bytes shorter the
// JavaScript spelling of its \u escapes is.
func escapeSavings(b []byte) int {
	saved := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			switch {
			case c == '"':
				inString = true
			case c == '-' && negativeZeroAt(b, i):
				saved++ // JSON.stringify(-0) is "0"
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				n, width := jsLength(b, i)
				saved += width - n
				i += width - 1
			} else {
				i++ // a two-byte escape, the same in JavaScript
			}
		}
	}
	return saved
}

// negativeZeroAt reports whether the number token at b[i] is "-0" (how
// encoding/json writes a float64 negative zero).
func negativeZeroAt(b []byte, i int) bool {
	if i+1 >= len(b) || b[i+1] != '0' {
		return false
	}
	if i+2 == len(b) {
		return true
	}
	switch b[i+2] {
	case '.', 'e', 'E':
		return false
	}
	return b[i+2] < '0' || b[i+2] > '9'
}

// jsLength reads the \u escape at b[i] (and a following low surrogate escape
// when b[i] starts a pair). It returns the bytes JavaScript writes for it and
// the bytes the Go spelling spans.
func jsLength(b []byte, i int) (js, width int) {
	u, ok := hex4At(b, i+2)
	if !ok {
		return 6, 6 // unreachable: encoding/json writes only valid escapes
	}
	if u >= 0xD800 && u <= 0xDBFF {
		if lowSurrogateAt(b, i+6) {
			return 4, 12
		}
	}
	return unitLength(u), 6
}

// lowSurrogateAt reports whether b[i:] starts with a \u escape of a low surrogate.
func lowSurrogateAt(b []byte, i int) bool {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return false
	}
	u, ok := hex4At(b, i+2)
	return ok && u >= 0xDC00 && u <= 0xDFFF
}

// unitLength is the length JSON.stringify writes for one UTF-16 code unit
// that is not part of a surrogate pair.
func unitLength(u rune) int {
	switch {
	case u == '"' || u == '\\' || u == '\b' || u == '\f' || u == '\n' || u == '\r' || u == '\t':
		return 2
	case u < 0x20:
		return 6
	case u >= 0xD800 && u <= 0xDFFF:
		return 6 // a lone surrogate stays escaped (well-formed JSON.stringify)
	default:
		return utf8.RuneLen(u)
	}
}

// hex4At decodes the four hex digits at b[i:] with strictjson's one
// decoder.
func hex4At(b []byte, i int) (rune, bool) {
	if i > len(b) {
		return 0, false
	}
	return strictjson.Hex4(b[i:])
}
