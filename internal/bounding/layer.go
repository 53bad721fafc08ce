package bounding

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/jssize"
)

// frameSlack is what a frame may carry past the limit it is checked against
// before decoding: members go-sdk drops or merges (unknown fields, duplicate
// keys) and the few bytes the decoded value spells differently. A frame over
// limit+frameSlack is rejected unread; one under it is decoded and measured
// exactly, as without the layer.
const frameSlack = 4096

// maxFrameBytes bounds a response to a request the adapter did not make
// (the handshake, the host's own calls): the largest limit a host may set
// (MaxCatalogBytes' default) plus frameSlack.
const maxFrameBytes = MaxCatalogBytes + frameSlack

// maxRequestParams bounds the params of a request or notification the
// server sends; larger params are dropped before go-sdk decodes them (a
// tools/list_changed notification still counts, with empty params).
const maxRequestParams = MaxResultBytes + frameSlack

// rawFrameBytes bounds the raw bytes of one HTTP frame the layer buffers (a
// JSON body, an SSE event) and go-sdk's MaxEventSize for server streams: the
// JSON spelling of a value may escape each character in six bytes, and
// pages and results are smaller than maxFrameBytes. (Over io transports
// go-sdk's own line cap, 16 MiB by default, ends the session past it.)
const rawFrameBytes = 6*MaxCatalogBytes + frameSlack

// methodProgress is the notification passed to the Owner as it is read.
const methodProgress = "notifications/progress"

// methodToolListChanged is the notification whose oversized params are
// replaced by empty ones (the change still counts) instead of dropped.
const methodToolListChanged = "notifications/tools/list_changed"

// itemSlack is what the counted array of an answer (a page's tools, a
// result's content blocks) may hold past its limit before decoding: elements
// go-sdk drops (null or invalid tools). An answer with more is rejected
// unread, with the code the decoded count would fail with.
const itemSlack = 64

// The arrays counted before decoding, in a result (io) and in a JSON-RPC
// frame (HTTP).
var (
	toolsPath, toolsFramePath     = []string{"tools"}, []string{"result", "tools"}
	contentPath, contentFramePath = []string{"content"}, []string{"result", "content"}
)

// A Cap is what Request tells the layer about one request's answer: the
// code past the cap, the count its JSON may reach and how many elements its
// counted array may hold (each plus its slack).
type Cap struct {
	code      string
	limit     int
	path      []string // the counted array in the result
	framePath []string // the same in a JSON-RPC frame
	items     int
}

// ToolsCap is the cap of a tools/list page: bytes left in the discovery,
// tools left under MaxTools.
func ToolsCap(bytes, tools int) Cap {
	return Cap{code: CodeCatalogLimitExceeded, limit: bytes, path: toolsPath, framePath: toolsFramePath, items: tools}
}

// ResultCap is the cap of a tools/call result.
func ResultCap(bytes, blocks int) Cap {
	return Cap{code: CodeResultTooLarge, limit: bytes, path: contentPath, framePath: contentFramePath, items: blocks}
}

// A frameBudget is what one adapter request tells the bounding layer, in its
// ctx: the count its answer may reach and the code it fails with past it.
// The layer reports back whether the request's write is in progress and
// whether it rejected or lost the answer.
type frameBudget struct {
	Cap
	deadline time.Time    // the adapter's own, for severIfStillWriting
	write    atomic.Int32 // a writeState
	ended    sync.Once    // end's
	rejected atomic.Bool  // the answer was over the budget
	// overItems is set with rejected when the answer held more elements
	// than the budget's items (see Failure.Items).
	overItems atomic.Bool
	broken    atomic.Bool // the connection failed while the answer was read
	// answered is set once the HTTP layer handed go-sdk a frame with a
	// result for the request: a later failure without a JSON-RPC error is
	// then the result's decoding, not the connection's.
	answered atomic.Bool
	// httpID is the JSON-RPC id of the request's POST, for the rejection
	// of an answer on a resumed stream (GET).
	httpID atomic.Pointer[json.RawMessage]

	// The request's pending answer on a bounded connection (track), which
	// Request drops once the request ends (release).
	mu      sync.Mutex
	conn    *layerConn
	id      jsonrpc.ID
	tracked bool
}

// track records that conn awaits the answer to the request id, for release;
// false when the budget already tracks a request (a ctx that carried two).
func (b *frameBudget) track(conn *layerConn, id jsonrpc.ID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tracked {
		return false
	}
	b.conn, b.id, b.tracked = conn, id, true
	return true
}

// release drops the tracked request's pending answer, if still pending: an
// answer after the call ended is nobody's. It may run more than once.
func (b *frameBudget) release() {
	b.mu.Lock()
	conn, id := b.conn, b.id
	b.conn = nil
	b.mu.Unlock()
	if conn != nil {
		conn.take(id)
	}
}

// writeState is where a request's write is (frameBudget.write).
type writeState int32

const (
	writeNotStarted writeState = iota // the transport has not been asked to write the request
	writeInProgress                   // the transport is writing it
	writeReturned                     // the transport's Write returned
)

// setWrite records the request's write state.
func (b *frameBudget) setWrite(s writeState) { b.write.Store(int32(s)) }

// writing reports whether the transport is writing the request.
func (b *frameBudget) writing() bool { return writeState(b.write.Load()) == writeInProgress }

type budgetKey struct{}

func budgetOf(ctx context.Context) *frameBudget {
	b, _ := ctx.Value(budgetKey{}).(*frameBudget)
	return b
}

// outcome is the failure the layer observed for the request that failed
// with err, if any: a rejected answer, a connection that failed while the
// answer was read, or, over HTTP, a request that failed with no JSON-RPC
// error before any result reached go-sdk. go-sdk retires the requests in
// flight with its own error, which carries no sentinel, when it fails the
// HTTP connection (a body it cannot read or decode, a stream it cannot
// resume); a result that reached it and failed is its decoding's failure.
func (b *frameBudget) outcome(err error) error {
	var rpc *jsonrpc.Error
	switch {
	case b == nil:
		return nil
	case b.rejected.Load():
		return &Failure{Code: b.code, Items: b.overItems.Load()}
	case b.broken.Load():
		return fail(CodeTransportError)
	case b.httpID.Load() != nil && !b.answered.Load() && !errors.As(err, &rpc):
		return fail(CodeTransportError)
	}
	return nil
}

// errorCount counts a JSON-RPC error answer as a Scanner counts its JSON
// ({"code":…,"message":…,"data":…}), stopping once it passes limit.
func errorCount(err error, limit int) int {
	e, ok := err.(*jsonrpc.Error)
	if !ok {
		return 0 // unreachable: go-sdk decodes wire errors as *jsonrpc.Error
	}
	n := len(`{"code":,"message":}`) + len(strconv.FormatInt(e.Code, 10))
	m, _ := jssize.Within(e.Message, limit) // a string never fails
	n += m
	if len(e.Data) > 0 {
		n += len(`,"data":`) + jssize.RawWithin(e.Data, limit)
	}
	return n
}

// frameRejected answers a request whose answer the layer rejected unread.
type frameRejected struct{ code string }

func (e *frameRejected) Error() string {
	return "purramcp: answer over the bounding layer's cap: " + e.code
}

// connBroken is a read or write error of a bounded connection: the
// connection is closed or broken, whatever the transport said.
type connBroken struct{ err error }

func (e *connBroken) Error() string { return "purramcp: connection broken: " + e.err.Error() }
func (e *connBroken) Unwrap() error { return e.err }

var (
	errSevered       = errors.New("purramcp: session severed after an abandoned write")
	errNoTransport   = errors.New("purramcp: Transport needs the host's transport")
	errTransportUsed = errors.New("purramcp: a monitor's transport connects one session")
)

// Transport wraps t, the host's transport, in the session's bounding layer
// (CatalogMonitor.Transport's documentation says what it does); owner is
// severed when a write outlives its request. The returned transport
// connects at most one session.
func (s *Session) Transport(t mcp.Transport, owner Owner) mcp.Transport {
	return &layerTransport{inner: t, session: s, owner: owner}
}

// layerTransport is the transport Transport returns.
type layerTransport struct {
	inner   mcp.Transport
	session *Session
	owner   Owner
}

// Connect connects the host's transport and bounds the connection.
func (t *layerTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if t.inner == nil || t.session == nil || t.owner == nil {
		return nil, errNoTransport
	}
	b := &layer{}
	if !t.session.claim(b) {
		return nil, errTransportUsed
	}
	inner := t.inner
	notifyBlocks := cancelNotifyBlocks(os.Getenv("MCPGODEBUG"))
	switch it := inner.(type) {
	case *mcp.StreamableClientTransport:
		c := *it
		c.HTTPClient = layerHTTPClient(it.HTTPClient, b, t.owner)
		if c.MaxEventSize <= 0 || c.MaxEventSize > rawFrameBytes {
			c.MaxEventSize = rawFrameBytes
		}
		conn, err := c.Connect(ctx)
		if err != nil {
			return nil, err
		}
		// go-sdk's HTTP connection needs its session updates (protocol
		// header, standalone stream), which only the unwrapped value gets;
		// the HTTP client bounds it instead, and an HTTP write never blocks
		// past its ctx.
		b.inline.Store(httpWritesEndWithCtx(it) && !notifyBlocks)
		b.connected.Store(true)
		return conn, nil
	}
	var filter *frameFilter
	if it, ok := inner.(*mcp.IOTransport); ok && it.Reader != nil {
		inner, filter = layerIOTransport(it) // frames counted before go-sdk's decoder (io.go)
	}
	conn, err := inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sever, cancel := context.WithCancel(context.Background())
	bc := &layerConn{inner: conn, layer: b, owner: t.owner, severCtx: sever, severNow: cancel, closed: make(chan struct{}),
		pending: map[jsonrpc.ID]pendingCall{}}
	if filter != nil {
		filter.conn.Store(bc)
	}
	b.conn = bc
	b.inline.Store(closeEndsWrites(inner) && !notifyBlocks)
	b.connected.Store(true)
	return bc, nil
}

// layer is a session's bounding layer once its transport started
// connecting.
type layer struct {
	connected atomic.Bool
	// inline is set when a write to the peer either ends with its ctx
	// (streamable HTTP) or fails once the connection is severed: requests
	// then run on their caller's goroutine (Request).
	inline atomic.Bool
	conn   *layerConn // nil over streamable HTTP
	// lost is set over streamable HTTP once the connection to the server
	// is known to be gone (layerRoundTripper).
	lost atomic.Bool
	// carried is the session of the first request the layer carried
	// marked with one (WithSession): the session it connected.
	carried atomic.Pointer[mcp.ClientSession]
}

// carry records the session ctx is marked with, if it is the first.
func (l *layer) carry(ctx context.Context) {
	if l.carried.Load() != nil {
		return
	}
	if cs, _ := ctx.Value(sessionMarkKey{}).(*mcp.ClientSession); cs != nil {
		l.carried.CompareAndSwap(nil, cs)
	}
}

// cancelNotifyBlocks reports whether the MCPGODEBUG setting env makes
// go-sdk send notifications/cancelled on the caller's goroutine
// (blockingcancelnotify=1, read by go-sdk at start-up): a request that
// timed out after its write would then write again on its caller's
// goroutine, with no deadline the layer can enforce, so requests keep
// running on goroutines of their own.
func cancelNotifyBlocks(env string) bool {
	for part := range strings.SplitSeq(env, ",") {
		k, v, _ := strings.Cut(part, "=")
		if strings.TrimSpace(k) == "blockingcancelnotify" && strings.TrimSpace(v) == "1" {
			return true
		}
	}
	return false
}

// httpWritesEndWithCtx reports whether a write over t is known to end with
// its ctx: the HTTP request goes through net/http's own transport and no
// OAuth handler of the host's runs inside the write (an authorization
// flow may wait on a user whatever its ctx says).
func httpWritesEndWithCtx(t *mcp.StreamableClientTransport) bool {
	if t.OAuthHandler != nil {
		return false
	}
	if t.HTTPClient == nil || t.HTTPClient.Transport == nil {
		return true
	}
	_, std := t.HTTPClient.Transport.(*http.Transport)
	return std
}

// closeEndsWrites reports whether closing t's connection is known to make a
// write blocked on it fail at once: go-sdk's in-memory transport (net.Pipe)
// and its command transport (whose Close first closes the child's stdin, an
// os.Pipe). A host's own transport, or an IOTransport over the host's
// streams, may not, so its requests keep running on goroutines of their
// own.
func closeEndsWrites(t mcp.Transport) bool {
	switch t.(type) {
	case *mcp.InMemoryTransport, *mcp.CommandTransport:
		return true
	}
	return false
}

// pendingCall is a request the connection wrote and awaits an answer to.
type pendingCall struct {
	budget *frameBudget // nil for a request the adapter did not make
	method string
	// stop unregisters the cleanup that runs when the request's ctx ends
	// unanswered; the answer stops it, so an answered request starts no
	// goroutine.
	stop func() bool
}

// layerConn is the connection of a bounded io, stdio or in-memory session.
type layerConn struct {
	inner    mcp.Connection
	layer    *layer
	owner    Owner           // severed when a write outlives its request
	severCtx context.Context // done once severed
	severNow context.CancelFunc
	once     sync.Once
	closed   chan struct{} // closed once the severing Close returned

	mu      sync.Mutex
	pending map[jsonrpc.ID]pendingCall

	// The reads' ctx (readContext): readCtx is readParent, the ctx go-sdk
	// reads with, ended also by a sever.
	readMu     sync.Mutex
	readParent context.Context
	readCtx    context.Context
	readCancel context.CancelFunc
	readStop   func() bool
}

func (c *layerConn) SessionID() string { return c.inner.SessionID() }

// sever marks the connection severed and closes the transport in one
// goroutine (its Close may wait, for a child process, TerminateDuration).
func (c *layerConn) sever() {
	c.once.Do(func() {
		c.severNow()
		go func() {
			defer close(c.closed)
			_ = c.inner.Close()
		}()
	})
}

// Close closes the transport, unless a sever already is closing it.
func (c *layerConn) Close() error {
	if c.severCtx.Err() != nil {
		return nil // the severing goroutine closes it
	}
	return c.inner.Close()
}

// Write records a request's budget, marks its write in progress and writes.
func (c *layerConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.severCtx.Err() != nil {
		return &connBroken{errSevered}
	}
	c.layer.carry(ctx)
	req, isCall := msg.(*jsonrpc.Request)
	isCall = isCall && req.IsCall()
	var b *frameBudget
	if isCall {
		b = budgetOf(ctx)
		if err := ctx.Err(); b != nil && err != nil {
			return err // the adapter's request ended unwritten, as go-sdk's transports end it
		}
		id := req.ID
		c.mu.Lock()
		c.pending[id] = pendingCall{budget: b, method: req.Method}
		c.mu.Unlock()
		// The adapter's request path ends what it tracks itself, when the
		// request's ctx ends or the request returns (Request); any other
		// request's ctx ends it here.
		if b == nil || !b.track(c, id) {
			stop := context.AfterFunc(ctx, func() {
				c.take(id) // an answer after the call ended is nobody's
				if b != nil && b.writing() {
					severIfStillWriting(c.owner, b) // ended mid-write
				}
			})
			c.mu.Lock()
			if p, ok := c.pending[id]; ok { // not yet answered or ended
				p.stop = stop
				c.pending[id] = p
			}
			c.mu.Unlock()
		}
		if b != nil {
			b.setWrite(writeInProgress)
		}
	}
	err := c.inner.Write(ctx, msg)
	if b != nil {
		b.setWrite(writeReturned)
	}
	if err != nil && c.severCtx.Err() != nil {
		err = &connBroken{err}
	}
	return err
}

// peek returns the pending call id, if any, leaving it pending.
func (c *layerConn) peek(id jsonrpc.ID) (pendingCall, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	return p, ok
}

// take removes and returns the pending call id, if any.
func (c *layerConn) take(id jsonrpc.ID) (pendingCall, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	delete(c.pending, id)
	return p, ok
}

// Read returns the next message, an oversized answer replaced by a
// rejection of its request and oversized params dropped, before go-sdk
// decodes either. Once severed, reads fail as a broken connection.
func (c *layerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.severCtx.Err() != nil {
		return nil, &connBroken{errSevered}
	}
	msg, err := c.inner.Read(c.readContext(ctx))
	if err != nil {
		if c.severCtx.Err() != nil {
			return nil, &connBroken{errSevered}
		}
		return nil, err // as go-sdk reports it: a malformed frame stays a decode failure
	}
	return c.check(msg), nil
}

// readContext returns ctx, the reader's, ended also by a sever, so that a
// read waiting for input returns at once. go-sdk reads with one ctx for the
// whole session, so the derived ctx is made once, not per read (a read
// with another ctx replaces it). It is never ended otherwise: a read that
// Close interrupts fails as the transport makes it fail, not as canceled.
func (c *layerConn) readContext(ctx context.Context) context.Context {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if ctx != c.readParent {
		if c.readStop != nil {
			c.readStop()
			c.readCancel() // the replaced ctx no read uses any more
		}
		c.readParent = ctx
		c.readCtx, c.readCancel = context.WithCancel(ctx)
		c.readStop = context.AfterFunc(c.severCtx, c.readCancel)
	}
	return c.readCtx
}

// check applies the caps to one incoming message.
func (c *layerConn) check(msg jsonrpc.Message) jsonrpc.Message {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		p, _ := c.take(m.ID)
		if p.stop != nil {
			p.stop()
		}
		code, limit := CodeResultTooLarge, maxFrameBytes
		if p.method == "tools/list" {
			code = CodeCatalogLimitExceeded
		}
		var path []string
		items := 0
		if b := p.budget; b != nil {
			code, limit, path, items = b.code, b.limit+frameSlack, b.path, b.items+itemSlack
		}
		// The README's rule: an answer over its cap fails with the cap's
		// code whatever it held, a JSON-RPC error too (as over HTTP).
		if m.Error != nil && errorCount(m.Error, limit) > limit || jssize.RawOver(m.Result, limit, path, items) {
			if p.budget != nil {
				p.budget.overItems.Store(path != nil && jssize.ItemsOver(m.Result, path, items))
				p.budget.rejected.Store(true)
			}
			return &jsonrpc.Response{ID: m.ID, Error: &frameRejected{code: code}}
		}
	case *jsonrpc.Request:
		if jssize.RawWithin(m.Params, maxRequestParams) > maxRequestParams {
			var params json.RawMessage
			if m.Method == methodToolListChanged {
				params = json.RawMessage(`{}`)
			}
			return &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: params}
		}
		if m.Method == methodProgress && !m.ID.IsValid() {
			c.owner.Progress(m.Params)
		}
	}
	return msg
}
