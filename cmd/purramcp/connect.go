package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// An endpoint is how to reach one server: exactly one of command, url and
// dial is set.
type endpoint struct {
	command string            // a stdio server's program
	args    []string          // its arguments
	env     map[string]string // added to this process's environment
	cwd     string            // its working directory; "" is ours
	url     string            // a streamable HTTP server's endpoint
	headers map[string]string // sent with every HTTP request
	// dial returns an in-memory transport (a saved catalog, or a server
	// built in Go) and a function that stops its server.
	dial func(context.Context) (mcp.Transport, func(), error)
	// legacy also accepts MCP 2024-11-05 and 2025-03-26 (legacyProtocols).
	legacy bool
	// hidden are more values no output may show, such as a URL's query.
	hidden []string
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
	for _, m := range []map[string]string{ep.env, ep.headers} {
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
	stderr  *tail     // the child's stderr; nil for other transports
	cmd     *exec.Cmd // the child; nil for other transports
	stop    func()    // stops an in-memory server; nil otherwise
}

// stderrTailBytes is how much of a child's stderr is kept: its last 4 KiB.
const stderrTailBytes = 4 << 10

// terminateAfter is how long closing waits for a child to exit after its
// stdin closes before signalling it.
const terminateAfter = 2 * time.Second

// A connectError is a connection that failed: the handshake did not
// finish within the --connect-timeout, or the transport or handshake
// failed. stderr holds the child's last lines, if any.
type connectError struct {
	timeout time.Duration // set when the handshake did not finish in time
	exit    int           // set when the child exited with this status
	offered string        // set when the server negotiated a version not accepted
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
// bounding layer (CatalogMonitor.Connect), waiting at most timeout for the
// handshake. The caller closes the returned conn.
func dial(ctx context.Context, ep endpoint, timeout time.Duration) (*conn, error) {
	c := &conn{monitor: purramcp.NewCatalogMonitor()}
	var transport mcp.Transport
	switch {
	case ep.command != "":
		c.cmd = exec.Command(ep.command, ep.args...)
		c.cmd.Dir = ep.cwd
		c.cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(ep.env)) {
			c.cmd.Env = append(c.cmd.Env, k+"="+ep.env[k])
		}
		c.stderr = newTail(stderrTailBytes, ep.secrets())
		c.cmd.Stderr = c.stderr
		c.cmd.WaitDelay = time.Second // a grandchild holding stderr open cannot stall Wait
		setProcessGroup(c.cmd)
		transport = &mcp.CommandTransport{Command: c.cmd, TerminateDuration: terminateAfter}
	case ep.url != "":
		client := &http.Client{}
		if len(ep.headers) > 0 {
			client.Transport = headerTransport{base: http.DefaultTransport, headers: ep.headers}
		}
		transport = &mcp.StreamableClientTransport{Endpoint: ep.url, HTTPClient: client}
	case ep.dial != nil:
		t, stop, err := ep.dial(ctx)
		if err != nil {
			return nil, &connectError{err: err}
		}
		transport, c.stop = t, stop
	default:
		return nil, &connectError{err: errors.New("no command, url or server")}
	}
	if ep.legacy {
		c.monitor.AcceptLegacyProtocols()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "purramcp", Version: moduleVersion()}, c.monitor.ClientOptions(nil))
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	session, err := c.monitor.Connect(cctx, client, transport, nil)
	if err != nil {
		c.close()
		ce := &connectError{err: err, stderr: c.stderrLines(), secrets: ep.secrets()}
		switch {
		case ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
			ce.timeout = timeout
		case purramcp.CodeOf(err) == purramcp.CodeProtocolUnsupported:
			ce.offered = c.monitor.OfferedVersion()
		case c.cmd != nil && c.cmd.ProcessState != nil && c.cmd.ProcessState.ExitCode() > 0:
			// The child exited on its own with an error: say so rather
			// than go-sdk's "client is closing: EOF".
			ce.exit = c.cmd.ProcessState.ExitCode()
		}
		return nil, ce
	}
	c.session = session
	return c, nil
}

// close ends the session, the child's whole process group (a server
// started through npx or sh has children of its own) and an in-memory
// server. It is safe to call more than once.
func (c *conn) close() {
	if c.session != nil {
		_ = c.session.Close()
	}
	if c.cmd != nil && c.cmd.Process != nil {
		killProcessGroup(c.cmd)
	}
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

// stderrLines returns the child's last stderr lines, at most ten.
func (c *conn) stderrLines() []string {
	if c.stderr == nil {
		return nil
	}
	return c.stderr.lines(10)
}

// headerTransport adds a config's headers to every HTTP request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip sends a copy of req with the headers set.
func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// A tail keeps the last max bytes written to it, such as a child's stderr.
// It is safe for concurrent use.
type tail struct {
	max     int
	secrets []string

	mu  sync.Mutex // guards buf
	buf []byte
}

// newTail returns a tail of max bytes whose lines show each of secrets as
// "***".
func newTail(max int, secrets []string) *tail { return &tail{max: max, secrets: secrets} }

// Write keeps the end of p; it never fails.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lines returns the last n non-empty lines, secrets replaced by "***" and
// control characters by '?'.
func (t *tail) lines(n int) []string {
	t.mu.Lock()
	text := string(t.buf)
	t.mu.Unlock()
	text = redact(text, t.secrets)
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
