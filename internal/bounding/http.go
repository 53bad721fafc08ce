package bounding

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"purra.dev/purramcp/internal/jssize"
)

// The bounding layer over streamable HTTP: the session's HTTP client checks
// every response body as it streams in, before go-sdk reads it. An answer
// over its request's budget is replaced by a JSON-RPC error for the same
// request id (the request then fails with the budget's code; the session
// stays usable), and a body that fails mid-read marks its request's
// connection broken (mcp_transport_error). Such a failure of any body, a
// round trip that fails while its ctx is live, or a 404 to a request that
// names a session also marks the layer's connection lost: go-sdk then fails
// every later request with an error that carries no sentinel, which
// Request reports as mcp_transport_error.

// layerHTTPClient returns a copy of c (nil: http.DefaultClient) whose
// transport bounds response bodies.
func layerHTTPClient(c *http.Client, l *layer, owner Owner) *http.Client {
	var client http.Client
	if c != nil {
		client = *c
	}
	inner := client.Transport
	if inner == nil {
		inner = http.DefaultTransport
	}
	client.Transport = &layerRoundTripper{inner: inner, layer: l, owner: owner}
	return &client
}

// layerRoundTripper is the bounding layer's http.RoundTripper.
type layerRoundTripper struct {
	inner http.RoundTripper
	layer *layer // its lost is set once the session's HTTP connection is lost
	owner Owner  // tells a host transport's 401 from other errors
}

// RoundTrip sends req and bounds the JSON or SSE body of its response,
// whatever the method. A request of the adapter's (a POST, or the GET that
// resumes its stream after a priming event id, which go-sdk sends under the
// same ctx) is bounded by its budget, and an answer over it is replaced by a
// rejection for the POST's id. Any other body (the standalone stream, the
// host's own requests) is bounded by maxFrameBytes: over it, an answer to a
// POST is rejected and an event of a stream that answers no request is
// dropped.
func (t *layerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	t.layer.carry(req.Context())
	resp, err := t.inner.RoundTrip(req)
	switch {
	case err != nil:
		if t.owner != nil && t.owner.Unauthorized(err) {
			return nil, &unauthorized{host: err} // not answered; the session stands
		}
		if req.Context().Err() == nil {
			t.layer.lost.Store(true)
		}
		return resp, err
	case resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "":
		t.layer.lost.Store(true) // the server no longer knows the session
	}
	if resp.Body == nil {
		return resp, nil
	}
	budget := budgetOf(req.Context())
	f := &bodyFilter{src: resp.Body, budget: budget, limit: maxFrameBytes, lost: &t.layer.lost}
	if budget != nil {
		f.limit, f.path, f.items = budget.limit+frameSlack, budget.framePath, budget.items+itemSlack
	}
	switch {
	case req.Method == http.MethodPost:
		f.id = requestID(req)
		if budget != nil && f.id != nil {
			budget.httpID.Store(&f.id)
		}
	case budget != nil:
		if id := budget.httpID.Load(); id != nil {
			f.id = *id
		}
	default:
		f.drop = true
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "application/json":
		f.read = f.readJSON
	case "text/event-stream":
		f.read = f.readEvent
		f.newScan()
	default:
		return resp, nil // go-sdk reads no other body
	}
	resp.Body = f
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// requestID reads the JSON-RPC id of the request body go-sdk sent (its own
// small request), or nil.
func requestID(req *http.Request) json.RawMessage {
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(io.LimitReader(body, maxFrameBytes)).Decode(&msg) != nil {
		return nil
	}
	return msg.ID
}

// rejection is the JSON-RPC answer that replaces an oversized one.
func rejection(id json.RawMessage) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":"purramcp: answer over the bounding layer's cap"}}`)
}

// bodyFilter is a bounded response body: it hands go-sdk only checked
// frames, each buffered (at most rawFrameBytes) until it is known to fit.
type bodyFilter struct {
	src    io.ReadCloser
	budget *frameBudget
	lost   *atomic.Bool // the layer's (layerRoundTripper)
	limit  int
	path   []string // the counted array in a frame
	items  int
	id     json.RawMessage
	drop   bool         // a stream that answers no request: drop an over-cap event
	read   func() error // fills out, or fails (io.EOF at the end)
	out    frameBuf
	err    error

	lines lineReader // the SSE body
	scan  jssize.Scanner
	event sseEvent
}

func (f *bodyFilter) Read(p []byte) (int, error) {
	for f.out.Len() == 0 && f.err == nil {
		f.err = f.read()
	}
	if f.out.Len() > 0 {
		return f.out.Read(p)
	}
	return 0, f.err
}

func (f *bodyFilter) Close() error { return f.src.Close() }

// failed records a read failure other than the end of the body.
func (f *bodyFilter) failed(err error) error {
	if err != io.EOF {
		if f.budget != nil {
			f.budget.broken.Store(true)
		}
		f.lost.Store(true)
	}
	return err
}

// over reports whether the frame scanned so far passed the budget.
func (f *bodyFilter) over() bool { return f.scan.Over(f.limit) }

// newScan starts the count of a frame.
func (f *bodyFilter) newScan() {
	f.scan = jssize.Scanner{Path: f.path, MaxItems: f.items}
}

// handed records that go-sdk gets a frame of the request's that held a
// result (see frameBudget.answered).
func (f *bodyFilter) handed() {
	if f.budget != nil && f.scan.FirstKey() {
		f.budget.answered.Store(true)
	}
}

// rejected records the rejection of the request's answer; the rest of the
// body is never read.
func (f *bodyFilter) rejected() {
	if f.budget != nil {
		f.budget.overItems.Store(f.scan.Path != nil && f.scan.Items() > f.scan.MaxItems)
		f.budget.rejected.Store(true)
	}
	f.read = func() error { return io.EOF }
}

// readJSON reads the whole JSON body, then hands it on or rejects it as
// soon as its count passes the budget.
func (f *bodyFilter) readJSON() error {
	f.newScan()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.src.Read(buf)
		if n > 0 {
			f.scan.Write(buf[:n], f.limit)
			if f.over() || f.out.Len()+n > rawFrameBytes {
				f.out.Reset()
				f.out.Write(rejection(f.id))
				f.rejected()
				return nil
			}
			f.out.Write(buf[:n])
		}
		if err == io.EOF {
			f.read = func() error { return io.EOF }
			if f.out.Len() == 0 {
				return io.EOF
			}
			f.handed()
			return nil
		}
		if err != nil {
			f.out.Reset()
			return f.failed(err)
		}
	}
}

// sseEvent is the SSE event a bodyFilter is reading: its lines (comments
// left out, as go-sdk ignores them) and the state of its current line.
// Lines end at '\n' and a line of nothing but '\r' ends the event, as
// go-sdk's reader frames them.
type sseEvent struct {
	raw     frameBuf
	content bool // a line other than a comment ended
	skip    bool // over the cap on a stream that answers no request
	meta    int  // bytes of lines other than data and comments

	// The current line: its first bytes until its kind is known, and
	// whether anything but '\r' was on it.
	head    [5]byte
	headLen int
	kind    lineKind
	nonCR   bool
}

type lineKind uint8

const (
	lineUnknown lineKind = iota
	lineData             // "data:", counted by the scanner
	lineComment          // ':', dropped
	lineOther            // id, event, retry or other fields
)

// readEvent reads the body until one SSE event ends and hands it on. Each
// data line is counted as its bytes arrive, however long the line and
// however slowly it comes: an event whose data passes the budget is
// replaced by a rejection at once (the rest of the body is never read), or,
// on a stream that answers no request, dropped up to its end.
func (f *bodyFilter) readEvent() error {
	for {
		seg, ends, err := f.lines.next(f.src)
		if err == nil {
			if f.segment(seg, ends) {
				return nil
			}
			continue
		}
		e := &f.event
		if err == io.EOF && !e.skip && (e.content || e.nonCR) {
			f.out, e.raw = e.raw, f.out // go-sdk ends the last event at the end of the body
			f.handed()
			f.read = func() error { return io.EOF }
			return nil
		}
		return f.failed(err)
	}
}

// segment takes one piece of a line (ends: with its '\n') and reports
// whether it completed something for go-sdk to read.
func (f *bodyFilter) segment(seg []byte, ends bool) bool {
	e := &f.event
	line := seg
	if ends {
		line = seg[:len(seg)-1]
	}
	if !e.nonCR {
		e.nonCR = len(bytes.Trim(line, "\r")) > 0
	}
	payload := line
	if e.kind == lineUnknown {
		k := copy(e.head[e.headLen:], line)
		e.headLen += k
		payload = line[k:]
		switch {
		case e.headLen > 0 && e.head[0] == ':':
			e.kind = lineComment
		case e.headLen == len(e.head):
			e.kind = lineOther
			if string(e.head[:]) == "data:" {
				e.kind = lineData
			}
		case ends:
			e.kind = lineOther
		}
	}
	if ends && !e.nonCR { // a blank line ends the event
		return f.endEvent(seg)
	}
	if !e.skip && e.kind != lineComment {
		switch e.kind {
		case lineData:
			f.scan.Write(payload, f.limit)
		case lineOther:
			e.meta += len(seg)
		}
		e.raw.Write(seg)
		if f.over() || e.meta > frameSlack || e.raw.Len() > rawFrameBytes {
			if !f.drop {
				f.out.WriteString("data: ")
				f.out.Write(rejection(f.id))
				f.out.WriteString("\n\n")
				f.rejected()
				return true
			}
			e.skip = true
			e.raw.Reset()
		}
	}
	if ends {
		e.content = e.content || e.kind != lineComment
		e.headLen, e.kind, e.nonCR = 0, lineUnknown, false
	}
	return false
}

// endEvent ends the event at its blank line blank: it hands it on unless
// it was dropped or held nothing.
func (f *bodyFilter) endEvent(blank []byte) bool {
	e := &f.event
	handed := !e.skip && e.content
	if handed { // out is empty: Read asks for an event only then
		f.out, e.raw = e.raw, f.out
		f.out.Write(blank)
		f.handed()
	}
	e.raw.Reset()
	e.content, e.skip, e.meta = false, false, 0
	e.headLen, e.kind, e.nonCR = 0, lineUnknown, false
	f.newScan()
	return handed
}

// frameBuf holds a frame as it is read, in pieces that grow with it (512
// bytes to 64 KiB), so that what it allocates stays near what it holds: a
// frame is never copied to grow, as a doubling buffer's would be. Reset
// keeps the first piece for the next frame.
type frameBuf struct {
	pieces [][]byte
	n      int // bytes held, from pieces[0][off:]
	off    int
}

func (b *frameBuf) Len() int { return b.n }

func (b *frameBuf) Write(p []byte) {
	for len(p) > 0 {
		last := len(b.pieces) - 1
		if last < 0 || len(b.pieces[last]) == cap(b.pieces[last]) {
			b.pieces = append(b.pieces, make([]byte, 0, min(max(b.n, 512), 64<<10)))
			last++
		}
		piece := b.pieces[last]
		k := min(len(p), cap(piece)-len(piece))
		b.pieces[last] = append(piece, p[:k]...)
		b.n += k
		p = p[k:]
	}
}

func (b *frameBuf) WriteString(s string) { b.Write([]byte(s)) }

func (b *frameBuf) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.n > 0 {
		k := copy(p[n:], b.pieces[0][b.off:])
		n += k
		b.off += k
		b.n -= k
		if b.off == len(b.pieces[0]) {
			b.dropFirst()
		}
	}
	return n, nil
}

// dropFirst drops the first piece, once read.
func (b *frameBuf) dropFirst() {
	if len(b.pieces) == 1 {
		b.pieces[0], b.off = b.pieces[0][:0], 0 // kept for the next frame
		return
	}
	b.pieces[0] = nil
	b.pieces, b.off = b.pieces[1:], 0
}

// Reset empties b, keeping its first piece.
func (b *frameBuf) Reset() {
	if len(b.pieces) > 0 {
		first := b.pieces[0][:0]
		clear(b.pieces)
		b.pieces = append(b.pieces[:0], first)
	}
	b.n, b.off = 0, 0
}
