// Package identity implements the purra.json-identity/v1 digest
// shared with purra-mcp 1.0.0: SHA-256 over the ASCII profile name, a LF and
// a typed, length-prefixed encoding of a strictjson value, written as 64
// lowercase hex characters.
//
// The encoding: null n; true t; false f; number d + 16 hex digits of
// the big-endian binary64 bits (−0 as +0); string s<UTF-8 length>:<hex
// bytes>; array a<count>: + elements; object o<count>: + (key, value) pairs
// with keys in code-point order, which for valid UTF-8 is byte order.
package identity

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"strconv"

	"purra.dev/purramcp/internal/strictjson"
)

// Profile is the name hashed, followed by a LF, in front of every encoding.
const Profile = "purra.json-identity/v1"

// Digest returns the identity digest of v, which must be a value produced
// by strictjson (Parse or Snapshot): the caller has already applied the
// domain rules (valid UTF-8, finite numbers, safe integers, unique keys)
// and limits.
func Digest(v any) string {
	e := newEncoder(nil)
	strictjson.Emit(v, strictjson.SortedOrder, e)
	return e.sum()
}

// DigestOf applies the domain rules and limits of Digest to a decoded Go value
// (strictjson.Snapshot's domain) and returns its digest in one pass, without
// building a copy. It fails exactly when strictjson.Snapshot(v, lim) fails.
func DigestOf(v any, lim strictjson.Limits) (string, error) {
	e := newEncoder(nil)
	if err := strictjson.Walk(v, lim, strictjson.SortedOrder, e); err != nil {
		return "", err
	}
	return e.sum(), nil
}

// PreImage returns the exact bytes Digest hashes. It exists for tests and
// benchmarks that compare against a plain SHA-256 of the same bytes.
func PreImage(v any) []byte {
	var out []byte
	e := newEncoder(func(b []byte) { out = append(out, b...) })
	strictjson.Emit(v, strictjson.SortedOrder, e)
	e.flush()
	return out
}

// bufferSize is the encoder's buffer: large enough that SHA-256 takes the
// pre-image in long blocks, small enough that a catalog's pre-image is never
// held whole.
const bufferSize = 8192

// encoder streams the pre-image into the hash (or sink) through a fixed
// buffer. It is the strictjson.Visitor of the walk; keys arrive sorted.
type encoder struct {
	h    hash.Hash
	sink func([]byte)
	buf  []byte
	mem  [bufferSize]byte
	// memos is the room MemoKey carves memos from: memoMem first, then
	// chunks of memoChunk bytes.
	memos   []byte
	memoMem [memoChunk]byte
}

// memoChunk is the room for memos taken at a time: the names of a record
// or two.
const memoChunk = 512

func newEncoder(sink func([]byte)) *encoder {
	e := &encoder{sink: sink}
	if sink == nil {
		e.h = sha256.New()
	}
	e.buf = e.mem[:0]
	e.memos = e.memoMem[:0]
	e.raw(Profile + "\n")
	return e
}

// sum flushes the buffer and returns the digest in lowercase hex.
func (e *encoder) sum() string {
	e.flush()
	var d [sha256.Size]byte
	return hex.EncodeToString(e.h.Sum(d[:0]))
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

// room makes room for n more bytes, n ≤ bufferSize.
func (e *encoder) room(n int) {
	if len(e.buf)+n > cap(e.buf) {
		e.flush()
	}
}

func (e *encoder) raw(s string) {
	e.room(len(s))
	e.buf = append(e.buf, s...)
}

// Null writes n.
func (e *encoder) Null() { e.room(1); e.buf = append(e.buf, 'n') }

// Bool writes t or f.
func (e *encoder) Bool(b bool) {
	c := byte('f')
	if b {
		c = 't'
	}
	e.room(1)
	e.buf = append(e.buf, c)
}

// Number writes d and the 16 hex digits of the big-endian binary64 bits;
// −0 encodes as +0.
func (e *encoder) Number(f float64) {
	if f == 0 {
		f = 0
	}
	bits := math.Float64bits(f)
	e.room(17)
	n := len(e.buf)
	e.buf = e.buf[:n+17]
	e.buf[n] = 'd'
	binary.BigEndian.PutUint64(e.buf[n+1:], hex8(uint32(bits>>32)))
	binary.BigEndian.PutUint64(e.buf[n+9:], hex8(uint32(bits)))
}

// String writes s, its byte length and its bytes in hex.
func (e *encoder) String(s string) { e.str(s) }

// BeginArray writes the array header.
func (e *encoder) BeginArray(n int) { e.header('a', n) }

// BeginObject writes the object header.
func (e *encoder) BeginObject(n int) { e.header('o', n) }

// Key writes a member name as a string.
func (e *encoder) Key(k string) { e.str(k) }

// memoMax is the longest name MemoKey keeps a memo of: its encoding, at most
// 2·memoMax+4 bytes, is written whole after one room check.
const memoMax = 64

// MemoKey writes a member name as Key does, from memo when memo holds its
// encoding; an empty memo gets it (the walk's memoVisitor). Names longer
// than memoMax are written afresh each time. A memo keeps its room when the
// walk resets it, so memos take at most 2·memoMax+4 bytes per name the walk
// remembers, however often a hostile value changes its names.
func (e *encoder) MemoKey(k string, memo *[]byte) {
	if len(*memo) > 0 {
		e.room(len(*memo))
		e.buf = append(e.buf, *memo...)
		return
	}
	if len(k) > memoMax {
		e.str(k)
		return
	}
	e.room(2*memoMax + 4 + 16) // str then never flushes: the encoding stays in buf
	start := len(e.buf)
	e.str(k)
	enc := e.buf[start:]
	if cap(*memo) >= len(enc) { // a memo reset by the walk keeps its room
		*memo = append((*memo)[:0], enc...)
		return
	}
	if cap(e.memos)-len(e.memos) < len(enc) {
		e.memos = make([]byte, 0, memoChunk)
	}
	n := len(e.memos)
	e.memos = append(e.memos, enc...)
	*memo = e.memos[n:len(e.memos):len(e.memos)]
}

// header writes tag, n in decimal and a colon; one- and two-digit counts,
// most of them, without strconv.
func (e *encoder) header(tag byte, n int) {
	e.room(24)
	switch {
	case n < 10:
		e.buf = append(e.buf, tag, byte('0'+n), ':')
	case n < 100:
		e.buf = append(e.buf, tag, byte('0'+n/10), byte('0'+n%10), ':')
	default:
		e.buf = append(e.buf, tag)
		e.buf = strconv.AppendInt(e.buf, int64(n), 10)
		e.buf = append(e.buf, ':')
	}
}

// hex8 returns the eight lowercase hex digits of x, first digit in the top
// byte, computed in one register: each input byte is spread into its own
// 16-bit lane, split into its two nibbles, and every nibble n becomes
// '0'+n, plus 39 more ('a'−'0'−10) when n > 9.
func hex8(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	v = (v | v<<8) & 0x00ff00ff00ff00ff
	v = (v<<4 | v) & 0x0f0f0f0f0f0f0f0f
	letters := (v + 0x0606060606060606) >> 4 & 0x0101010101010101
	return v + 0x3030303030303030 + letters*39
}

// word returns the first min(len(s), 8) bytes of s as a big-endian word,
// zero-padded below: at most two loads of four bytes, which overlap for
// five to seven bytes (OR-ing a byte into its own place twice is harmless).
func word(s string) uint64 {
	n := len(s)
	if n >= 4 {
		n = min(n, 8)
		return uint64(be32(s))<<32 | uint64(be32(s[n-4:]))<<((64-8*n)&63)
	}
	var w uint64
	if n > 0 {
		w = uint64(s[0]) << 56
	}
	if n > 1 {
		w |= uint64(s[1]) << 48
	}
	if n > 2 {
		w |= uint64(s[2]) << 40
	}
	return w
}

// be32 returns the first four bytes of s as a big-endian integer.
func be32(s string) uint32 {
	_ = s[3]
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// str writes s as s<length>:<hex bytes>, eight bytes per step; the last
// one to seven bytes (or all of a string of at most eight) are zero-padded
// into one more step whose extra digits are cut off again.
func (e *encoder) str(s string) {
	if len(s) <= 8 { // most names and many values: one padded word, no loop
		e.room(3 + 16)
		n := len(e.buf)
		b := e.buf[n : n+3+16]
		b[0], b[1], b[2] = 's', byte('0'+len(s)), ':'
		w := word(s)
		binary.BigEndian.PutUint64(b[3:], hex8(uint32(w>>32)))
		binary.BigEndian.PutUint64(b[11:], hex8(uint32(w)))
		e.buf = e.buf[:n+3+2*len(s)]
		return
	}
	e.header('s', len(s))
	for len(s) > 0 {
		e.room(32)
		n := min((cap(e.buf)-len(e.buf)-16)/2, len(s))
		start := len(e.buf)
		dst := e.buf[start : start+2*n+16]
		i := 0
		for ; i+8 <= n; i += 8 {
			binary.BigEndian.PutUint64(dst[2*i:], hex8(be32(s[i:])))
			binary.BigEndian.PutUint64(dst[2*i+8:], hex8(be32(s[i+4:])))
		}
		if i < n {
			w := word(s[i:n])
			binary.BigEndian.PutUint64(dst[2*i:], hex8(uint32(w>>32)))
			binary.BigEndian.PutUint64(dst[2*i+8:], hex8(uint32(w)))
		}
		e.buf = e.buf[:start+2*n]
		s = s[n:]
	}
}

const hexDigits = "0123456789abcdef"
