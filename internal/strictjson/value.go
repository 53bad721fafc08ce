// Package strictjson implements the JSON value domain shared by the
// purra.output-schema/v1 profile and the purra.json-identity/v1 digest
// that purramcp shares with purra-mcp 1.0.0: a strict RFC 8259 parser and a snapshot of
// decoded Go values, both bounded by depth, node and detached-byte limits
// while they work.
//
// A value produced here is one of nil, bool, float64 (finite, |x| ≤ 2^53−1
// when integral, never −0), string (valid UTF-8), []any or *Object, and is
// never shared with the input.
package strictjson

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxSafeInteger is 2^53−1, the largest integer every JSON peer represents
// exactly; integral numbers beyond it are rejected.
const MaxSafeInteger = 1<<53 - 1

// Limits bounds one snapshot or parse. Every field must be positive.
type Limits struct {
	// Depth is the deepest level a node may sit at; the root is level 0 and
	// object keys sit at the level of their values.
	Depth int
	// Nodes caps the number of visited items: values and object keys.
	Nodes int
	// Bytes caps the detached-byte measure (see StringCost and the costs
	// below) and, for Parse, the
	// UTF-8 length of the text.
	Bytes int
}

// Object is a JSON object. Keys holds every member name exactly once, in
// JavaScript enumeration order: array-index names in ascending
// numeric order first, then the others in document order (Parse) or byte
// order (Snapshot of a Go map). Values[i] is the member named Keys[i].
//
// An Object is immutable once made (a walk trusts the measure SnapshotDecoded
// gives the objects it makes); make one with NewObject, which indexes
// a large one so that Get stays O(1) (a small one is scanned: for the few
// members of most objects that is faster than a map and costs nothing to
// build).
type Object struct {
	Keys   []string
	Values []any
	index  map[string]int // Keys[i] → i when len(Keys) > scanMembers, else nil
	// measure is the subtree's measure when SnapshotDecoded made the
	// object, whose every value it checked; zero for any other object.
	measure subtree
}

// subtree is the measure of an object whose every value was checked: the
// nodes a walk counts in it (values and member names, the object itself
// included), their detached bytes, and how many levels below the
// object its deepest node sits. A walk charges it at once (walker.checked).
type subtree struct{ nodes, bytes, depth int }

// scanMembers is the most members an Object looks up by scanning Keys.
const scanMembers = 8

// NewObject returns the object of the members named keys with values
// (the same length, names distinct, in enumeration order). The object
// takes both slices, which the caller must not change afterwards.
func NewObject(keys []string, values []any) *Object {
	o := &Object{Keys: keys, Values: values}
	o.seal()
	return o
}

// seal indexes a complete object whose members exceed scanMembers.
func (o *Object) seal() {
	if len(o.Keys) <= scanMembers {
		return
	}
	o.index = make(map[string]int, len(o.Keys))
	for i, k := range o.Keys {
		o.index[k] = i
	}
}

// Get returns the member named key and whether it exists.
func (o *Object) Get(key string) (any, bool) {
	if i := o.IndexOf(key); i >= 0 {
		return o.Values[i], true
	}
	return nil, false
}

// IndexOf returns the position in Keys of the member named key, or -1.
func (o *Object) IndexOf(key string) int {
	if o.index != nil {
		if i, ok := o.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range o.Keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Len returns the number of members.
func (o *Object) Len() int { return len(o.Keys) }

// Error is the single error type of this package. It never carries input text.
type Error struct {
	// Offset is the byte offset in the parsed text, or -1 for a Go value.
	Offset int
	reason string
}

// Error names the failure and, for text, its byte offset; never the text.
func (e *Error) Error() string {
	if e.Offset < 0 {
		return "strictjson: " + e.reason
	}
	return "strictjson: " + e.reason + " at offset " + strconv.Itoa(e.Offset)
}

// meter enforces Limits while a value is visited: depth, nodes and
// detached bytes.
type meter struct {
	lim   Limits
	nodes int
	bytes int
}

// enter counts one item at the given level.
func (m *meter) enter(level int) bool {
	m.nodes++
	return m.nodes <= m.lim.Nodes && level <= m.lim.Depth
}

// add charges detached bytes.
func (m *meter) add(n int) bool {
	m.bytes += n
	return m.bytes <= m.lim.Bytes
}

// Detached-byte costs, purra-mcp 1.0.0's conservative allocation measure
// (not the length of any serialization): a string or key costs StringCost,
// null and booleans 5, numbers 24, and a container, charged after its
// children, 2 plus 2 per child.
const (
	scalarCost = 5  // null, true, false
	numberCost = 24 // any number
)

// containerCost is charged after a container's children: 2 + 2 per child.
func containerCost(children int) int { return 2 + 2*children }

// StringCost returns the UTF-8 length of s written as a JSON string literal
// with only '"', '\\' and U+0000–U+001F escaped. s must be valid UTF-8.
func StringCost(s string) int {
	n := 2 + len(s)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if !mayEscape(w) {
			continue // the common case: eight bytes that cost one each
		}
		for j := i; j < i+8; j++ {
			n += int(escapeExtra[s[j]])
		}
	}
	for ; i < len(s); i++ {
		n += int(escapeExtra[s[i]])
	}
	return n
}

// mayEscape reports whether any of the eight bytes in w may need an escape:
// a byte below 0x20, '"' or '\\'. It may report true for bytes that do not
// (the exact count is then taken byte by byte), never false for one that does.
func mayEscape(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte x of y = w^c is zero exactly when x = c; (y−ones)&^y flags it.
	q, b := w^(ones*'"'), w^(ones*'\\')
	return ((w-ones*0x20)&^w|(q-ones)&^q|(b-ones)&^b)&highs != 0
}

// escapeExtra is how many bytes past one each byte costs in a JSON string
// literal: 1 for the two-character escapes, 5 for \u00XX, else 0.
var escapeExtra = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = 5
	}
	for _, c := range []byte{'"', '\\', '\b', '\f', '\n', '\r', '\t'} {
		t[c] = 1
	}
	return t
}()

// checkedStringCost is StringCost fused with the check that s holds
// only Unicode scalar values, in one pass: Go's UTF-8 decoder rejects
// encoded surrogates, so a lone surrogate smuggled in as CESU-8 bytes fails
// here. ok is false for invalid UTF-8, and the cost is then meaningless.
func checkedStringCost(s string) (cost int, ok bool) {
	const highs = 0x8080808080808080
	n := 2 + len(s)
	if len(s) <= 8 && len(s) > 0 { // most names and many values: one word
		if w := span(s); w&highs == 0 && !mayEscape(w) {
			return n, true
		}
	}
	for i := 0; i < len(s); {
		var w uint64
		if i+8 <= len(s) {
			w = uint64(le32(s[i:])) | uint64(le32(s[i+4:]))<<32
		} else {
			w = span(s[i:])
		}
		if w&highs == 0 { // the next one to eight bytes are ASCII
			step := min(8, len(s)-i)
			if mayEscape(w) {
				for j := i; j < i+step; j++ {
					n += int(escapeExtra[s[j]])
				}
			}
			i += step
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			n += int(escapeExtra[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, false
		}
		i += size // a multi-byte sequence costs its own length, already counted
	}
	return n, true
}

// span returns a word made only of the first min(len(s), 8) bytes of s,
// len(s) > 0, every one of them present at least once: tests on every byte
// of the word (ASCII, mayEscape) then hold for every byte of that span. Five
// to seven bytes take two overlapping four-byte loads; one to three take
// bytes 0, n/2 and n−1, repeated.
func span(s string) uint64 {
	switch n := len(s); {
	case n >= 8:
		return uint64(le32(s)) | uint64(le32(s[4:]))<<32
	case n >= 4:
		return uint64(le32(s)) | uint64(le32(s[n-4:]))<<32
	default:
		x := uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16
		return x | x<<24 | x<<48
	}
}

// le32 returns the first four bytes of s as a little-endian integer.
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// CheckedStringCost is StringCost(s) and utf8.ValidString(s) in one pass:
// ok is false exactly when s is not valid UTF-8, and the cost is then
// meaningless.
func CheckedStringCost(s string) (cost int, ok bool) { return checkedStringCost(s) }

// arrayIndex reports whether key is a canonical array index in the sense of
// ECMAScript (0 … 2^32−2), the names JavaScript enumerates first.
func arrayIndex(key string) (uint64, bool) {
	if len(key) == 0 || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n <= 1<<32-2
}

// enumerationOrder reorders items in place into JavaScript enumeration
// order of their names: array indexes ascending, then the rest in their
// given order. It reports whether any name is an array index (only then
// can the order change).
func enumerationOrder[T any](items []T, name func(T) string) bool {
	first := 0
	for _, it := range items {
		if _, ok := arrayIndex(name(it)); ok {
			first++
		}
	}
	if first == 0 {
		return false
	}
	idx := make([]T, 0, first)
	rest := make([]T, 0, len(items)-first)
	for _, it := range items {
		if _, ok := arrayIndex(name(it)); ok {
			idx = append(idx, it)
		} else {
			rest = append(rest, it)
		}
	}
	// For canonical spellings, a shorter index string is a smaller number.
	slices.SortFunc(idx, func(a, b T) int {
		x, y := name(a), name(b)
		if len(x) != len(y) {
			return len(x) - len(y)
		}
		return strings.Compare(x, y)
	})
	copy(items, idx)
	copy(items[len(idx):], rest)
	return true
}
