// Package identity implements the purra.json-identity/v1 digest
// (schema-profile.md Part B): SHA-256 over the ASCII profile name, a LF and
// a typed, length-prefixed encoding of a strictjson value, written as 64
// lowercase hex characters.
//
// Encoding E (B2.2): null n; true t; false f; number d + 16 hex digits of
// the big-endian binary64 bits (−0 as +0); string s<UTF-8 length>:<hex
// bytes>; array a<count>: + elements; object o<count>: + (key, value) pairs
// with keys in code-point order, which for valid UTF-8 is byte order (B3).
package identity

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"slices"
	"strconv"

	"purra.dev/purramcp/internal/strictjson"
)

// Profile is the name hashed in front of every encoding (B2.1).
const Profile = "purra.json-identity/v1"

// Digest returns the identity digest of v, which must be a value produced
// by strictjson (Parse or Snapshot): the caller has already applied the
// domain rules and limits of B1.
func Digest(v any) string {
	h := sha256.New()
	e := &encoder{h: h, buf: make([]byte, 0, 4096)}
	e.raw(Profile + "\n")
	e.value(v)
	e.flush()
	return hex.EncodeToString(h.Sum(nil))
}

// DigestOf applies the domain rules and limits of B1 to a decoded Go value
// (strictjson.Snapshot's domain) and returns its digest in one pass, without
// building a copy. It fails exactly when strictjson.Snapshot(v, lim) fails.
func DigestOf(v any, lim strictjson.Limits) (string, error) {
	h := sha256.New()
	e := &encoder{h: h, buf: make([]byte, 0, 8192)}
	e.raw(Profile + "\n")
	if err := strictjson.WalkSorted(v, lim, e); err != nil {
		return "", err
	}
	e.flush()
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PreImage returns the exact bytes Digest hashes. It exists for tests and
// benchmarks that compare against a plain SHA-256 of the same bytes.
func PreImage(v any) []byte {
	var out []byte
	e := &encoder{buf: make([]byte, 0, 4096), sink: func(b []byte) { out = append(out, b...) }}
	e.raw(Profile + "\n")
	e.value(v)
	e.flush()
	return out
}

// encoder streams the pre-image into the hash through a small buffer, so a
// large catalog never needs its whole pre-image in memory.
type encoder struct {
	h    hash.Hash
	sink func([]byte)
	buf  []byte
}

func (e *encoder) flush() {
	if len(e.buf) == 0 {
		return
	}
	if e.sink != nil {
		e.sink(e.buf)
	} else {
		e.h.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) room(n int) {
	if len(e.buf)+n > cap(e.buf) {
		e.flush()
	}
}

func (e *encoder) raw(s string) {
	e.room(len(s))
	e.buf = append(e.buf, s...)
}

func (e *encoder) value(v any) {
	switch x := v.(type) {
	case nil:
		e.raw("n")
	case bool:
		if x {
			e.raw("t")
		} else {
			e.raw("f")
		}
	case float64:
		e.number(x)
	case string:
		e.str(x)
	case []any:
		e.header('a', len(x))
		for _, item := range x {
			e.value(item)
		}
	case *strictjson.Object:
		keys := x.Keys
		if !slices.IsSorted(keys) {
			keys = slices.Sorted(slices.Values(keys))
		}
		e.header('o', len(keys))
		for _, k := range keys {
			e.str(k)
			e.value(x.Members[k])
		}
	default:
		panic("purramcp: internal error: identity of a value outside the strictjson domain")
	}
}

// Null, Bool, Number, String, BeginArray, BeginObject and Key make the
// encoder a strictjson.Visitor: the walk already sorts keys.
func (e *encoder) Null() { e.raw("n") }

// Bool writes t or f.
func (e *encoder) Bool(b bool) {
	if b {
		e.raw("t")
	} else {
		e.raw("f")
	}
}

// Number writes d and the bit pattern.
func (e *encoder) Number(f float64) { e.number(f) }

// String writes s, the length and the hex bytes.
func (e *encoder) String(s string) { e.str(s) }

// BeginArray writes the array header.
func (e *encoder) BeginArray(n int) { e.header('a', n) }

// BeginObject writes the object header.
func (e *encoder) BeginObject(n int) { e.header('o', n) }

// Key writes a member name as a string.
func (e *encoder) Key(k string) { e.str(k) }

func (e *encoder) header(tag byte, n int) {
	e.room(24)
	e.buf = append(e.buf, tag)
	e.buf = strconv.AppendInt(e.buf, int64(n), 10)
	e.buf = append(e.buf, ':')
}

func (e *encoder) number(f float64) {
	if f == 0 {
		f = 0 // −0 encodes as +0 (B2.2)
	}
	bits := math.Float64bits(f)
	e.room(17)
	e.buf = append(e.buf, 'd')
	for shift := 60; shift >= 0; shift -= 4 {
		e.buf = append(e.buf, hexDigits[(bits>>uint(shift))&0xf])
	}
}

const hexDigits = "0123456789abcdef"

// hexPairs maps a byte to its two lowercase hex digits, first digit high.
var hexPairs = func() (t [256]uint16) {
	for c := range t {
		t[c] = uint16(hexDigits[c>>4])<<8 | uint16(hexDigits[c&0xf])
	}
	return t
}()

func (e *encoder) str(s string) {
	e.header('s', len(s))
	for len(s) > 0 {
		e.room(2)
		n := min((cap(e.buf)-len(e.buf))/2, len(s))
		start := len(e.buf)
		e.buf = e.buf[:start+2*n]
		dst := e.buf[start:]
		i := 0
		for ; i+4 <= n; i += 4 { // four bytes, eight digits, one store
			binary.BigEndian.PutUint64(dst[2*i:], uint64(hexPairs[s[i]])<<48|uint64(hexPairs[s[i+1]])<<32|
				uint64(hexPairs[s[i+2]])<<16|uint64(hexPairs[s[i+3]]))
		}
		for ; i < n; i++ {
			binary.BigEndian.PutUint16(dst[2*i:], hexPairs[s[i]])
		}
		s = s[n:]
	}
}
