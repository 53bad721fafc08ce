package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// An endpoint is how to reach one server: exactly one of command, url and
// dial is set.
type endpoint struct {
	// sc is the server as a config entry gives it: Command, URL or Dial,
	// and what reaching it takes.
	sc fleet.ServerConfig
	// dial, when set, is used instead of sc's own: an in-memory transport
	// (a saved catalog) and a function that stops its server.
	dial func(context.Context) (mcp.Transport, func(), error)
	// hidden are more values no output may show, such as a URL's query.
	hidden []string
	// pin is the protocol version the lock approved for the server, to
	// connect at while the server still speaks it
	// (fleet.ConnectOptions.ProtocolVersion); "" negotiates the newest.
	pin string
}

// secrets returns what no output may show: hidden, and the values of env
// and headers, where a config puts tokens. Values under 4 bytes are left
// out: blanking them would garble ordinary text.
func (ep endpoint) secrets() []string {
	var s []string
	add := func(v string) {
		if len(v) >= 4 {
			s = append(s, v)
		}
	}
	for _, v := range ep.hidden {
		add(v)
	}
	for _, m := range []map[string]string{ep.sc.Env, ep.sc.Headers} {
		for _, v := range m {
			add(v)
		}
	}
	return s
}

// A conn is one connected session, over the bounding layer, and what
// ending it takes.
type conn struct {
	session *mcp.ClientSession
	monitor *purramcp.CatalogMonitor
	fs      *fleet.Session // owns session: the child's process group, its stderr
	stop    func()         // stops an in-memory server; nil otherwise
}

// A connectError is a connection that failed: the handshake did not
// finish within the --connect-timeout, or the transport or handshake
// failed. stderr holds the child's last lines, if any.
type connectError struct {
	timeout time.Duration // set when the handshake did not finish in time
	exit    int           // set when the child exited with this status
	offered string        // set when the server negotiated a version not accepted
	auth    string        // the code of an OAuth server refusing the connection for want of a token
	err     error
	stderr  []string
	secrets []string // shown as "***" in the error text
}

// Error says what failed and, for a timeout or a refused version, what to
// do; secrets are shown as "***".
func (e *connectError) Error() string {
	if e.timeout > 0 {
		return fmt.Sprintf("no answer to the handshake within %s: raise --connect-timeout "+
			"(a first `npx -y` start installs the server and may take a minute)", e.timeout)
	}
	if e.offered != "" {
		return fmt.Sprintf("the server negotiated MCP %s, which purramcp accepts only with "+
			"\"legacyProtocols\": true in its config entry (or inspect --legacy-protocols)", shown(e.offered))
	}
	if e.exit > 0 {
		return fmt.Sprintf("the server exited with status %d before it answered the handshake", e.exit)
	}
	return "cannot connect: " + redact(clean(e.err.Error()), e.secrets)
}

// Unwrap returns the transport or handshake error.
func (e *connectError) Unwrap() error { return e.err }

// dial starts or reaches the server at ep and connects to it through the
// bounding layer, as the fleet connects (fleet.Connect), at ep.pin while
// the server speaks it, waiting at most timeout for the handshake. The caller closes the returned conn.
func dial(ctx context.Context, ep endpoint, timeout time.Duration) (*conn, error) {
	c := &conn{}
	sc := ep.sc
	if ep.dial != nil {
		sc.Dial = func(ctx context.Context) (mcp.Transport, error) {
			t, stop, err := ep.dial(ctx)
			// Connect calls Dial before it returns, twice when the server
			// refuses the pinned version: every server started is stopped.
			if prev := c.stop; prev != nil && stop != nil {
				c.stop = func() { prev(); stop() }
			} else if stop != nil {
				c.stop = stop
			}
			return t, err
		}
	}
	opts := fleet.ConnectOptions{Timeout: timeout, Secrets: ep.secrets(), ProtocolVersion: ep.pin,
		Client: &mcp.Implementation{Name: "purramcp", Version: moduleVersion()}}
	if store, err := tokenStore(); err == nil && sc.URL != "" {
		opts.TokenStore = store // what purramcp login stored; a server that never asks sees no token
	}
	fs, err := fleet.Connect(ctx, sc, opts)
	if err != nil {
		c.close()
		ce := &connectError{err: err, secrets: ep.secrets()}
		var fe *fleet.ConnectError
		if errors.As(err, &fe) {
			ce.err, ce.stderr, ce.auth = fe.Err, tailLines(fe.Stderr, 10), fe.Unauthorized
			switch {
			case fe.TimedOut:
				ce.timeout = timeout
			case fe.Offered != "":
				ce.offered = fe.Offered
			case fe.ExitCode > 0:
				// The child exited on its own with an error: say so rather
				// than go-sdk's "client is closing: EOF".
				ce.exit = fe.ExitCode
			}
		}
		return nil, ce
	}
	c.fs, c.session, c.monitor = fs, fs.ClientSession(), fs.Monitor()
	return c, nil
}

// close ends the session, the child's whole process group and an
// in-memory server. It is safe to call more than once.
func (c *conn) close() {
	if c.fs != nil {
		c.fs.Close()
	}
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

// stderrLines returns the child's last stderr lines, at most ten.
func (c *conn) stderrLines() []string { return tailLines(c.fs.Stderr(), 10) }

// tailLines returns the last n non-empty lines of text, control characters
// replaced by '?'.
func tailLines(text string, n int) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if line = strings.TrimRight(line, "\r \t"); line != "" {
			out = append(out, clean(line))
		}
	}
	return out[max(0, len(out)-n):]
}

// maxErrorText bounds the text of an error shown to the user, which may
// hold a server's own words.
const maxErrorText = 400

// clean replaces control characters (escape sequences included) and
// invalid UTF-8 in local or remote text with '?', so that it prints as one
// inert line, cut to maxErrorText bytes.
func clean(s string) string {
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "..."
	}
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r >= 0x7f && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

// redact replaces every secret in text with "***".
func redact(text string, secrets []string) string {
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, "***")
	}
	return text
}
