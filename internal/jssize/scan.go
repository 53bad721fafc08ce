package jssize

// A Scanner measures JSON text as it streams in, before anything decodes
// it: the count is what JSON.stringify would write for the value the text
// spells, except that every member counts (a duplicate key or one a decoder
// drops too), whitespace counts nothing and a number counts as spelled. It
// never counts more than the text's length, so text no longer than a limit
// never passes it. Invalid UTF-8 counts one byte per byte (a decoder writes
// three for each), so the count may stay below the decoded size: a caller
// measures the decoded value again. A Scanner allocates nothing; the zero
// value is ready and starts outside any string.
type Scanner struct {
	n        int
	inString bool
	// esc is the escape state inside a string: 0 none, 1 after '\\', 2–5
	// reading the hex digits of \u (unit holds them).
	esc  int
	unit rune
	// high is a high surrogate waiting for its low half: it counts 6 alone
	// or, with a following \u low surrogate, 4 for the pair.
	high bool
	// afterHigh is 1 after a '\\' that follows a pending high surrogate.
	afterHigh bool

	// Path, when set, names the array whose elements the Scanner counts
	// (items.go); Write stops once they pass MaxItems.
	Path     []string
	MaxItems int
	path     pathState
}

// Count returns the bytes counted so far.
func (s *Scanner) Count() int { return s.n }

// Write feeds p and returns the count so far; it stops feeding as soon as the
// count passes limit, and then returns some n > limit. With a Path it also
// stops once the counted elements pass MaxItems (see Over).
func (s *Scanner) Write(p []byte, limit int) int {
	if s.Path != nil {
		return s.writePath(p, limit)
	}
	for _, c := range p {
		if s.n > limit {
			return s.n
		}
		if !s.inString {
			switch c {
			case ' ', '\t', '\n', '\r':
			case '"':
				s.inString = true
				s.n++
			default:
				s.n++
			}
			continue
		}
		s.str(c)
	}
	return s.n
}

// writePath is Write along a Path.
func (s *Scanner) writePath(p []byte, limit int) int {
	for _, c := range p {
		if s.n > limit || s.path.items > s.MaxItems {
			return s.n
		}
		if s.inString {
			s.str(c)
			if s.path.capturing {
				s.keyByte(c)
			} else if s.path.idOn {
				s.path.idByte(c)
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			s.inString = true
		}
		s.n++
		s.structure(c)
	}
	return s.n
}

// str feeds one byte inside a string.
func (s *Scanner) str(c byte) {
	switch s.esc {
	case 0:
		if s.high && !s.afterHigh {
			if c == '\\' {
				s.afterHigh = true
				return
			}
			s.n += 6 // a lone high surrogate stays escaped
			s.high = false
		}
		if s.afterHigh {
			s.afterHigh = false
			if c == 'u' {
				s.esc, s.unit = 2, 0 // maybe the low half
				return
			}
			s.n += 6
			s.high = false
			s.escaped(c)
			return
		}
		switch c {
		case '\\':
			s.esc = 1
		case '"':
			s.inString = false
			s.n++
		default:
			s.n++ // ASCII, or one byte of a UTF-8 sequence
		}
	case 1:
		s.esc = 0
		s.escaped(c)
	default: // hex digits of \u
		s.unit = s.unit<<4 | hexValue(c)
		s.esc++
		if s.esc < 6 {
			return
		}
		s.esc = 0
		u := s.unit
		switch {
		case s.high && u >= 0xDC00 && u <= 0xDFFF:
			s.n += 4 // a surrogate pair: one supplementary rune
			s.high = false
		case s.high:
			s.n += 6 // the pending high surrogate was lone
			s.high = false
			s.unitDone(u)
		default:
			s.unitDone(u)
		}
	}
}

// escaped counts the escape whose letter is c (after '\\').
func (s *Scanner) escaped(c byte) {
	switch c {
	case 'u':
		s.esc, s.unit = 2, 0
	case '/':
		s.n++ // written raw
	default:
		s.n += 2 // \" \\ \b \f \n \r \t stay two-character escapes
	}
}

// unitDone counts one \u code unit that is not the low half of a pair.
func (s *Scanner) unitDone(u rune) {
	if u >= 0xD800 && u <= 0xDBFF {
		s.high = true
		return
	}
	s.n += unitLength(u)
}

func hexValue(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return 0 // invalid JSON; the decoder rejects it
}

// RawWithin measures JSON text b as a Scanner does, stopping once the count
// passes limit. Text no longer than limit is not scanned.
func RawWithin(b []byte, limit int) int {
	if len(b) <= limit {
		return len(b) // an upper bound, at most limit: nothing to stop
	}
	var s Scanner
	return s.Write(b, limit)
}
