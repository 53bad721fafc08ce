package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// streams are where a subcommand writes: its result on out, progress and
// errors on err. outColour and errColour are set only for a stream that is
// a terminal, and only while NO_COLOR is unset or empty, so that a file, a
// pipe or a CI log never gets escape sequences.
type streams struct {
	out, err             io.Writer
	outColour, errColour bool
	// browse, when set, replaces opening the browser at login and is
	// called even with --no-browser: it plays the user (tests follow the
	// authorization URL with it); its error ends the login.
	browse func(ctx context.Context, url string) error
}

// newStreams returns streams over out and err, with colour on each that
// is a terminal.
func newStreams(out, err *os.File) *streams {
	colour := os.Getenv("NO_COLOR") == ""
	return &streams{out: out, err: err, outColour: colour && isTerminal(out), errColour: colour && isTerminal(err)}
}

// isTerminal reports whether f is a character device, as a terminal is.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// ANSI colours of the progress and error lines.
const (
	red    = "31"
	green  = "32"
	yellow = "33"
)

// paint wraps text in the ANSI colour when on.
func paint(on bool, colour, text string) string {
	if !on {
		return text
	}
	return "\x1b[" + colour + "m" + text + "\x1b[0m"
}

// errorf writes one error line to s.err, prefixed with the subcommand.
func (s *streams) errorf(cmd, format string, args ...any) {
	fmt.Fprintf(s.err, "purramcp %s: %s\n", cmd, fmt.Sprintf(format, args...))
}

// writeJSON writes v to w as indented JSON, the --json form of every
// subcommand.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// maxShown bounds how much of one remote string (a tool name, a schema
// path, a line of a child's stderr) is printed.
const maxShown = 200

// shown returns remote text fit for a terminal: unchanged when it is short
// printable UTF-8 without spaces at its ends, else Go-quoted with every
// non-ASCII and control character escaped, cut to maxShown bytes first, so
// that a server cannot move the cursor, clear the screen or forge a line.
func shown(s string) string {
	cut := s
	if len(cut) > maxShown {
		cut = strings.ToValidUTF8(cut[:maxShown], "") + "..."
	}
	if cut == s && s != "" && plain(s) {
		return s
	}
	return strconv.QuoteToASCII(cut)
}

// plain reports whether s is valid UTF-8 of printable characters with no
// space at either end (so that it cannot hide in a column).
func plain(s string) bool {
	if !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// orDash returns s, or "-" when it is empty, for table cells.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
