package wire

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"purra.dev/purramcp/internal/strictjson"
)

// AppendJSON appends v, a value of the strictjson domain (nil, bool,
// float64, string, []any, *strictjson.Object), as exactly the bytes
// encoding/json.Marshal writes for its Go form (strictjson.ToGo(v)): members
// in byte order of their names, strings with encoding/json's escapes
// (including <, >, &, U+2028 and U+2029), numbers in its float64 spelling.
// Run sends validated arguments this way instead of copying them into Go
// maps and marshaling those; TestWireJSON_SameAsMarshal checks it.
func AppendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return appendNumber(b, x)
	case string:
		return appendString(b, x)
	case []any:
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSON(b, item)
		}
		return append(b, ']')
	case *strictjson.Object:
		keys, sorted := x.Keys, slices.IsSorted(x.Keys)
		if !sorted {
			var buf [16]string // most argument objects sort without allocating
			keys = append(buf[:0], x.Keys...)
			slices.Sort(keys)
		}
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			v := x.Values[i]
			if !sorted {
				v, _ = x.Get(k)
			}
			b = AppendJSON(b, v)
		}
		return append(b, '}')
	}
	panic("purramcp: internal error: AppendJSON of a value outside the domain")
}

// appendNumber writes f as encoding/json writes a float64: the shortest
// decimal, in exponent form below 1e-6 and from 1e21 on, with a one-digit
// negative exponent unpadded. f is finite (the domain has no NaN or Inf).
func appendNumber(b []byte, f float64) []byte {
	// An integer below 10^15 in magnitude (−0 aside) is exactly its
	// digits in the 'f' format: neighbouring float64s are at most 1/8
	// apart there, so its shortest spelling is the integer itself.
	if i := int64(f); float64(i) == f && i > -1e15 && i < 1e15 && (i != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, i, 10)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const lowerHex = "0123456789abcdef"

// appendString writes s as encoding/json writes a string with HTML
// escaping on: ", \ and the short control escapes (\b \f \n \r \t), other
// bytes below 0x20 and <, >, & as \u00XX, U+2028 and U+2029 escaped, and an
// invalid byte as \ufffd (unreachable for domain strings, which are valid
// UTF-8).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
