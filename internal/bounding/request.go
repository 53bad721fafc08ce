package bounding

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeTransportRejected is go-sdk's JSON-RPC code for a request the
// transport refused (for example an unreachable HTTP server).
const codeTransportRejected = -32005

// Request runs one request (a tools/list page or a tools/call) of s's
// monitor, owner, and returns its result, or its failure mapped by
// MapError. It is the request path of DiscoverTools and Run and implements
// the goroutine contract the root package's CatalogMonitor.Transport
// documents:
//
//   - The request runs under ctx with the adapter's deadline (timeout from
//     now); its ctx carries the request's frameBudget for the bounding
//     layer (budgetContext).
//   - go-sdk checks ctx only before it writes; a write still in progress at
//     the adapter's deadline severs the session (one timer per request,
//     stopped when it returns; a caller that abandons a request mid-write
//     leaves one timer up to the deadline).
//   - With s.Inline the request runs on the caller's goroutine; otherwise
//     on one goroutine of its own that the caller abandons when the
//     request's ctx ends, and while a request abandoned more than
//     abandonedGrace ago still runs (holding go-sdk's write lock), every
//     new request fails mcp_transport_error at once.
//
// answer is the cap the bounding layer holds the answer to.
func Request[T any](ctx context.Context, s *Session, owner Owner, timeout time.Duration, answer Cap,
	request func(context.Context) (T, error)) (T, error) {
	var zero T
	deadline := time.Now().Add(timeout) // the adapter's own, whatever ctx says
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rctx := &budgetContext{Context: dctx, budget: frameBudget{Cap: answer, deadline: deadline}}
	budget := &rctx.budget
	// The adapter's deadline ends the request's ctx first (the timer waits
	// for it), so that a write the sever fails maps to mcp_timeout.
	timer := time.AfterFunc(timeout, func() {
		<-dctx.Done()
		budget.end(owner)
	})
	defer timer.Stop() // before cancel: a request that returned ends nothing more

	if s.Inline() {
		value, err := request(rctx)
		budget.release()
		if err == nil && rctx.Err() != nil {
			err = rctx.Err() // a late result is dropped, as on a goroutine of its own
		}
		return result(ctx, rctx, s, budget, value, err)
	}
	if !s.abandoned.admit(rctx) {
		if err := rctx.Err(); err != nil {
			return zero, MapError(ctx, rctx, err)
		}
		return zero, fail(CodeTransportError) // the session's write is wedged: one abandoned goroutine is the most a session keeps
	}
	o := &outcome[T]{done: make(chan struct{})}
	go o.run(rctx, request)
	select {
	case <-o.done:
		return result(ctx, rctx, s, budget, o.value, o.err)
	case <-rctx.Done():
		s.abandoned.add(o.done)
		// Wait for what the end of the request's ctx does (end runs once):
		// at the adapter's deadline, a caller who looks finds the session
		// severed when the write was still in progress.
		budget.end(owner)
		return zero, MapError(ctx, rctx, rctx.Err())
	}
}

// budgetContext is a request's ctx: context.WithValue's, with the
// request's frameBudget (budgetOf) stored inline rather than apart, one
// allocation less on every request. Deadline, Done and Err are its
// Context's (context.WithDeadline's).
type budgetContext struct {
	context.Context
	budget frameBudget
}

// Value answers budgetKey with the request's budget, any other key as its
// Context does.
func (c *budgetContext) Value(key any) any {
	if key == (budgetKey{}) {
		return &c.budget
	}
	return c.Context.Value(key)
}

// An outcome is the result of a request that runs on a goroutine of its
// own; done is closed once value and err are set.
type outcome[T any] struct {
	value T
	err   error
	done  chan struct{}
}

// run runs request under rctx, then drops its pending answer and closes done.
func (o *outcome[T]) run(rctx *budgetContext, request func(context.Context) (T, error)) {
	defer close(o.done)
	o.value, o.err = request(rctx)
	rctx.budget.release()
}

// result is the outcome of the finished request of s, run under rctx for
// a caller whose ctx is ctx: what the bounding layer observed (a rejected
// answer, a broken connection) decides a failure before MapError does,
// unless a ctx ended. A failure MapError cannot place (mcp_result_invalid)
// on a session whose HTTP connection the layer knows to be lost is
// mcp_transport_error: go-sdk fails the requests of a failed connection
// with errors that carry no sentinel.
func result[T any](ctx, rctx context.Context, s *Session, budget *frameBudget, value T, err error) (T, error) {
	var zero T
	if err == nil {
		return value, nil
	}
	if ctx.Err() == nil && rctx.Err() == nil {
		if err := budget.outcome(err); err != nil {
			return zero, err
		}
	}
	err = MapError(ctx, rctx, err)
	if f, ok := err.(*Failure); ok && f.Code == CodeResultInvalid && s.lost() {
		return zero, fail(CodeTransportError)
	}
	return zero, err
}

// end runs once when the request has not returned at the adapter's
// deadline, or when its caller abandons it; a second call waits for the
// first. It drops the pending answer now, not when the request returns (a
// goroutine's wedged write may never return where the layer cannot end
// it), and severs owner's session when the write is still in progress at the
// adapter's deadline.
func (b *frameBudget) end(owner Owner) {
	b.ended.Do(func() {
		b.release()
		if b.writing() {
			severIfStillWriting(owner, b)
		}
	})
}

// severIfStillWriting severs owner's session when budget's write is still in
// progress at budget's deadline, the adapter's own: at once when that has
// passed (a peer that stopped reading for the whole Timeout), else by a
// timer that checks again then. A caller that gives up mid-write does not
// sever a healthy session whose write was about to finish (the peer had
// read the request and the write had not yet returned); a write still
// blocked at the deadline is wedged either way. The timer is no goroutine
// until it fires.
func severIfStillWriting(owner Owner, budget *frameBudget) {
	wait := time.Until(budget.deadline)
	if wait <= 0 {
		owner.Sever()
		return
	}
	time.AfterFunc(wait, func() {
		if budget.writing() {
			owner.Sever()
		}
	})
}

// abandonedRequests are the requests of one session whose callers gave up
// while they still ran on a goroutine of their own (Request).
type abandonedRequests struct {
	mu      sync.Mutex
	running []abandonedRequest
}

// abandonedRequest is a request its caller gave up at since, still running
// until done is closed.
type abandonedRequest struct {
	done  <-chan struct{}
	since time.Time
}

// abandonedGrace is how long after its caller gave up an abandoned request
// may still be running before the session's new requests are refused: a
// request abandoned while it awaited its answer ends at once (its ctx
// ended); one still running past this is blocked in its write.
const abandonedGrace = 20 * time.Millisecond

// add records that the caller of the request that closes done gave up
// while it still ran.
func (a *abandonedRequests) add(done <-chan struct{}) {
	a.mu.Lock()
	a.running = append(a.running, abandonedRequest{done: done, since: time.Now()})
	a.mu.Unlock()
}

// admit lets a new request start only when no abandoned request of the
// session still runs: it waits for one abandoned less than abandonedGrace
// ago (or until ctx ends) and refuses at once (false) while an older one
// runs. A write to a peer that stopped reading holds go-sdk's write lock,
// so a new request would only queue behind it on one more goroutine.
func (a *abandonedRequests) admit(ctx context.Context) bool {
	for {
		a.mu.Lock()
		a.running = slices.DeleteFunc(a.running, func(r abandonedRequest) bool {
			select {
			case <-r.done:
				return true
			default:
				return false
			}
		})
		var oldest abandonedRequest
		if len(a.running) > 0 {
			oldest = a.running[0]
		}
		a.mu.Unlock()
		if oldest.done == nil {
			return true
		}
		wait := abandonedGrace - time.Since(oldest.since)
		if wait <= 0 {
			return false
		}
		timer := time.NewTimer(wait)
		select {
		case <-oldest.done:
			timer.Stop()
		case <-timer.C:
			return false
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
}

// MapError is the one translation point from a failed request to the
// adapter's failures, for tools/list and tools/call alike: ErrCanceled or a
// *Failure. ctx is the caller's context and callCtx the request's, which
// carries the adapter's deadline. No SDK error or remote text survives it.
func MapError(ctx, callCtx context.Context, err error) error {
	var rpc *jsonrpc.Error
	var rejected *frameRejected
	switch {
	case ctx.Err() != nil:
		return ErrCanceled // checked first: the caller's end wins
	case callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fail(CodeTimeout)
	case errors.As(err, &rejected):
		return fail(rejected.code) // the bounding layer rejected the answer unread
	case isUnauthorized(err):
		return fail(CodeUnauthorized) // the transport's 401: the request was not answered
	case brokenConnection(err):
		return fail(CodeTransportError)
	case errors.As(err, &rpc):
		if rpc.Code == codeTransportRejected {
			return fail(CodeTransportError)
		}
		return fail(CodeProtocolError)
	default:
		// What remains are go-sdk decode failures (unknown content type, wrong
		// field types, bad base64), which carry no sentinel.
		return fail(CodeResultInvalid)
	}
}

// brokenConnection reports errors that mean the connection is closed or
// broken: a read or write failure of a bounded connection, go-sdk's ErrConnectionClosed, an in-flight EOF, closed pipes, files
// and network connections, and network errors. A custom transport's other
// write errors carry no sentinel and fall through to mcp_result_invalid.
func brokenConnection(err error) bool {
	var netErr net.Error
	var broken *connBroken
	return errors.As(err, &broken) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) || errors.Is(err, fs.ErrClosed) ||
		brokenErrno(err) || errors.As(err, &netErr)
}
