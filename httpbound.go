package purramcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"purra.dev/purramcp/internal/jssize"
)

// The bounding layer over streamable HTTP: the session's HTTP client checks
// every response body as it streams in, before go-sdk reads it. An answer
// over its request's budget is replaced by a JSON-RPC error for the same
// request id (the request then fails with the budget's code; the session
// stays usable), and a body that fails mid-read marks its request's
// connection broken (mcp_transport_error).

// boundHTTPClient returns a copy of c (nil: http.DefaultClient) whose
// transport bounds response bodies.
func boundHTTPClient(c *http.Client) *http.Client {
	var client http.Client
	if c != nil {
		client = *c
	}
	inner := client.Transport
	if inner == nil {
		inner = http.DefaultTransport
	}
	client.Transport = &boundRoundTripper{inner: inner}
	return &client
}

// boundRoundTripper is the bounding layer's http.RoundTripper.
type boundRoundTripper struct{ inner http.RoundTripper }

// RoundTrip sends req and bounds the JSON or SSE body of its response.
func (t *boundRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	if err != nil || resp.Body == nil || req.Method != http.MethodPost {
		return resp, err // GET streams carry server messages: go-sdk's MaxEventSize bounds them
	}
	budget := budgetOf(req.Context())
	limit := maxFrameBytes
	if budget != nil {
		limit = budget.limit + frameSlack
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	f := &bodyFilter{src: resp.Body, budget: budget, limit: limit, id: requestID(req)}
	switch media {
	case "application/json":
		f.read = f.readJSON
	case "text/event-stream":
		f.lines = bufio.NewReaderSize(resp.Body, 64<<10)
		f.read = f.readEvent
	default:
		return resp, nil
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
	lines  *bufio.Reader // SSE only
	budget *frameBudget
	limit  int
	id     json.RawMessage
	read   func() error // fills out, or fails (io.EOF at the end)
	out    bytes.Buffer
	err    error
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
	if err != io.EOF && f.budget != nil {
		f.budget.broken.Store(true)
	}
	return err
}

// reject records the rejection and answers the request with an error.
func (f *bodyFilter) reject() {
	if f.budget != nil {
		f.budget.rejected.Store(true)
	}
	f.out.Reset()
	f.out.Write(rejection(f.id))
}

// readJSON reads the whole JSON body, then hands it on or rejects it.
func (f *bodyFilter) readJSON() error {
	var s jssize.Scanner
	var buf [32 << 10]byte
	for {
		n, err := f.src.Read(buf[:])
		if n > 0 {
			if s.Write(buf[:n], f.limit) > f.limit || f.out.Len()+n > rawFrameBytes {
				f.reject()
				return io.EOF // the rest is never read
			}
			f.out.Write(buf[:n])
		}
		if err == io.EOF {
			if f.out.Len() == 0 {
				return io.EOF
			}
			f.read = func() error { return io.EOF }
			return nil
		}
		if err != nil {
			f.out.Reset()
			return f.failed(err)
		}
	}
}

// readEvent reads one SSE event (up to its blank line) and hands it on, or
// replaces it with a rejection when its data is over the budget.
func (f *bodyFilter) readEvent() error {
	var s jssize.Scanner
	over := false
	var event bytes.Buffer
	for {
		line, err := f.lines.ReadSlice('\n')
		if len(line) > 0 && !over {
			if payload, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				payload = bytes.TrimPrefix(payload, []byte(" "))
				over = s.Write(payload, f.limit) > f.limit
			}
			over = over || event.Len()+len(line) > rawFrameBytes
			if !over {
				event.Write(line)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue // a long line: the rest follows
		case err != nil:
			if err == io.EOF && !over && event.Len() > 0 {
				f.out.Write(event.Bytes())
				return nil
			}
			return f.failed(err)
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 { // the blank line ends the event
			if over {
				if f.budget != nil {
					f.budget.rejected.Store(true)
				}
				f.out.WriteString("data: ")
				f.out.Write(rejection(f.id))
				f.out.WriteString("\n\n")
				return nil
			}
			f.out.Write(event.Bytes())
			return nil
		}
	}
}
