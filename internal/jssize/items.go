package jssize

import (
	"bytes"
	"math"
)

// Counting the elements of one array before anything decodes the text. A
// page of tens of thousands of one-letter tools, or a result of as many
// empty content blocks, is small in bytes but costs a decoder per element
// far more than its bytes: a Scanner given a Path counts the elements of the
// array that Path names, as the text streams in, and stops once they pass
// MaxItems.
//
// Path names the array by member keys from the top-level object:
// {"result","tools"} is the array of {"result":{"tools":[…]}}. Keys compare
// after their escapes are decoded and case-sensitively, as go-sdk's decoder
// matches them; every array the path reaches counts (a duplicate key too),
// and their elements add up. Text that is not shaped so counts nothing.

// maxKeyRaw is the longest key spelling captured: every path key is at most
// seven characters, each at most six bytes (\uXXXX) when escaped.
const maxKeyRaw = 48

// pathState is a Scanner's walk along its Path.
type pathState struct {
	depth  int // containers open
	onPath int // the outermost onPath containers are on the path
	// Inside the on-path object (depth == onPath <= len(Path)): expectKey
	// before a member's key, keyOK from a key equal to the path's next
	// one to its value, pending from the ':' to the value's first byte.
	expectKey, keyOK, pending bool
	// inItem is set inside an element of the counted array.
	inItem bool
	// Key capture: the raw bytes of the on-path object's current key.
	capturing bool
	keyLen    int // -1 once longer than maxKeyRaw
	key       [maxKeyRaw]byte
	items     int
	first     bool // the top-level object had a member named Path[0]

	// The top-level object's "id" (its raw scalar spelling, if short)
	// and whether it had a "method".
	method       bool
	idNext, idOn bool // the key was "id"; its value is being captured
	idLen        int  // -1 once not a short scalar
	id           [maxIDRaw]byte
}

// maxIDRaw is the longest id spelling captured.
const maxIDRaw = 64

// ID returns the raw spelling of the top-level object's "id" member once
// its value ended, if it was a scalar of at most 64 bytes (the last one, as
// a decoder keeps it).
func (s *Scanner) ID() []byte {
	if s.path.idLen <= 0 || s.path.idOn {
		return nil
	}
	return s.path.id[:s.path.idLen]
}

// Outside reports whether the text so far ends outside any string,
// object or array (a top-level value, if any, is complete).
func (s *Scanner) Outside() bool { return !s.inString && s.path.depth == 0 }

// Method reports whether the top-level object had a "method" member.
func (s *Scanner) Method() bool { return s.path.method }

// idByte captures one byte of the top-level "id" value.
func (p *pathState) idByte(c byte) { p.idLen = capture(p.id[:], p.idLen, c) }

// capture puts c at buf[n], where n bytes of a spelling are captured so
// far, and returns the new count: -1 once the spelling is longer than buf
// (and from then on).
func capture(buf []byte, n int, c byte) int {
	if n < 0 || n == len(buf) {
		return -1
	}
	buf[n] = c
	return n + 1
}

// Items returns the elements of the Path's arrays counted so far.
func (s *Scanner) Items() int { return s.path.items }

// FirstKey reports whether the top-level object had a member named Path[0]
// (for {"result",…}: the text answered with a result).
func (s *Scanner) FirstKey() bool { return s.path.first }

// Over reports whether the count passed limit or the elements MaxItems.
func (s *Scanner) Over(limit int) bool {
	return s.n > limit || s.Path != nil && s.path.items > s.MaxItems
}

// structure follows one byte outside strings (not whitespace) along Path.
func (s *Scanner) structure(c byte) {
	p := &s.path
	target := len(s.Path) + 1
	inObject := p.depth == p.onPath && p.onPath >= 1 && p.onPath < target
	if p.idOn && p.depth == 1 && (c == ',' || c == '}') {
		p.idOn = false
	}
	switch c {
	case '}', ']':
		if p.depth == p.onPath && p.onPath > 0 {
			p.onPath--
		}
		if p.depth > 0 {
			p.depth--
		}
		p.expectKey, p.pending, p.inItem = false, false, true
		return
	case ',':
		if inObject {
			p.expectKey = true
		}
		if p.depth == target && p.onPath == target {
			p.inItem = false
		}
		return
	case ':':
		if inObject {
			p.pending, p.keyOK = p.keyOK, false
		}
		if p.idNext && p.depth == 1 {
			p.idNext, p.idOn, p.idLen = false, true, 0
		}
		return
	}
	if p.idOn && p.depth == 1 {
		if c == '{' || c == '[' {
			p.idOn, p.idLen = false, -1 // not a scalar
		} else {
			p.idByte(c)
		}
	}
	// The first byte of a key or a value.
	if p.depth == target && p.onPath == target && !p.inItem {
		p.items++
		p.inItem = true
	}
	if inObject && c == '"' && p.expectKey {
		p.expectKey, p.capturing, p.keyLen = false, true, 0
		return
	}
	enters := false
	switch {
	case p.depth == 0 && p.onPath == 0 && c == '{':
		enters = true
	case inObject && p.pending:
		enters = c == '{' && p.onPath+1 < target || c == '[' && p.onPath+1 == target
	}
	if inObject {
		p.pending = false
	}
	if c == '{' || c == '[' {
		p.depth++
		if enters {
			p.onPath = p.depth
			p.expectKey, p.inItem = c == '{', false
		}
	}
}

// keyByte captures one byte of the on-path object's key, its closing quote
// included.
func (s *Scanner) keyByte(c byte) {
	p := &s.path
	if !s.inString { // the closing quote ended it
		p.capturing = false
		p.keyOK = p.keyLen >= 0 && keyEquals(p.key[:p.keyLen], s.Path[p.onPath-1])
		if p.onPath == 1 && p.depth == 1 {
			p.first = p.first || p.keyOK
			p.idNext = p.keyLen >= 0 && keyEquals(p.key[:p.keyLen], "id")
			p.method = p.method || p.keyLen >= 0 && keyEquals(p.key[:p.keyLen], "method")
		}
		return
	}
	p.keyLen = capture(p.key[:], p.keyLen, c)
}

// keyEquals reports whether raw, a key's spelling between its quotes,
// decodes to want (an ASCII name).
func keyEquals(raw []byte, want string) bool {
	i := 0
	for j := 0; j < len(raw); j++ {
		c := raw[j]
		if c == '\\' {
			if j+1 >= len(raw) {
				return false
			}
			j++
			switch raw[j] {
			case 'u':
				if j+4 >= len(raw) {
					return false
				}
				var u rune
				for _, h := range raw[j+1 : j+5] {
					u = u<<4 | hexValue(h)
				}
				j += 4
				if u >= 0x80 {
					return false // want is ASCII
				}
				c = byte(u)
			case '/', '"', '\\':
				c = raw[j]
			default:
				return false // a control escape: not in any path key
			}
		}
		if i >= len(want) || want[i] != c {
			return false
		}
		i++
	}
	return i == len(want)
}

// RawOver reports whether JSON text b counts over limit (as a Scanner
// counts it) or, when path is set, holds more than maxItems elements in the
// arrays path names. Text too short for either is not scanned; text no
// longer than limit is only walked for its elements, its strings and the
// containers off the path skipped whole.
func RawOver(b []byte, limit int, path []string, maxItems int) bool {
	if len(b) <= limit {
		return path != nil && len(b) >= 2*maxItems+3 && itemsOver(b, path, maxItems) // k elements take 2k+1 bytes
	}
	s := Scanner{Path: path, MaxItems: maxItems}
	s.Write(b, limit)
	return s.Over(limit)
}

// ItemsOver reports whether JSON text b holds more than maxItems elements
// in the arrays path names, as a Scanner counts them: after RawOver, whether
// the elements rather than the size passed.
func ItemsOver(b []byte, path []string, maxItems int) bool { return itemsOver(b, path, maxItems) }

// itemsOver reports whether b holds more than maxItems elements in the
// arrays path names, as a Scanner counts them, skipping every string but
// the keys the path is matched against, and every container the path does
// not lead into (each element of the counted array included) but its
// brackets: nothing inside one counts.
func itemsOver(b []byte, path []string, maxItems int) bool {
	s := Scanner{Path: path, MaxItems: maxItems}
	for i := 0; i < len(b) && s.path.items <= maxItems; i++ {
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			end := stringEnd(b, i+1)
			s.structure(c)
			if s.path.capturing { // a key matched against the path
				s.inString = true
				s.writePath(b[i+1:end], math.MaxInt)
			}
			i = end - 1
			continue
		}
		s.structure(c)
		if s.path.depth > s.path.onPath { // it opened a container off the path
			i = containerEnd(b, i+1) - 1 // its closing bracket is next
		}
	}
	return s.path.items > maxItems
}

// containerEnd returns the index of the bracket that closes the container
// whose contents start at b[from], or len(b); strings are skipped whole.
func containerEnd(b []byte, from int) int {
	depth := 0
	for i := from; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i+1) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return len(b)
}

// stringEnd returns the index just past the closing quote of the string
// whose contents start at b[from], or len(b).
func stringEnd(b []byte, from int) int {
	for i := from; ; {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b)
		}
		q := i + k
		slashes := 0
		for j := q - 1; j >= from && b[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}
