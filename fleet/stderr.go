package fleet

import (
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// redacted replaces a secret in a server's stderr.
const redacted = "***"

// stderrRing keeps the tail of a child's standard error with secrets
// redacted. It holds stderrBytes plus the longest secret's length, so any
// secret that overlaps the last stderrBytes is whole in it and redacted
// before the tail is cut.
type stderrRing struct {
	secrets []string // longest first
	keep    int
	// mu guards buf.
	mu  sync.Mutex
	buf []byte
}

// newStderrRing returns an empty ring redacting secrets.
func newStderrRing(secrets []string) *stderrRing {
	r := &stderrRing{secrets: slices.Clone(secrets), keep: stderrBytes}
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	if len(r.secrets) > 0 {
		r.keep += len(r.secrets[0])
	}
	return r
}

// Write keeps the tail of what was written. It never fails.
func (r *stderrRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if over := len(r.buf) - r.keep; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	return len(p), nil
}

// readFrom copies rd into the ring until it fails or ends.
func (r *stderrRing) readFrom(rd io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := rd.Read(buf)
		_, _ = r.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// String returns the last stderrBytes of the redacted text, starting at a
// rune boundary.
func (r *stderrRing) String() string {
	r.mu.Lock()
	s := string(r.buf)
	r.mu.Unlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	if len(s) > stderrBytes {
		s = s[len(s)-stderrBytes:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) { // Write or the cut above may have split a rune
		s = s[1:]
	}
	return s
}

// text is String for a ring that may be nil (a server without a child):
// "" then.
func (r *stderrRing) text() string {
	if r == nil {
		return ""
	}
	return r.String()
}
