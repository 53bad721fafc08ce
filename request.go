package purramcp

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeTransportRejected is go-sdk's JSON-RPC code for a request the
// transport refused (for example an unreachable HTTP server).
const codeTransportRejected = -32005

// A call is one bounded request. It is the request's ctx: the caller's
// ctx, ended also at the adapter's deadline, carrying the budget for the
// bounding layer. Its one timer ends it at the deadline (expire) and ends
// there, too, what the bounding layer holds for the request: a pending
// answer and a write still in progress. On a request worker (a job) it
// stores the outcome and then signals done; the caller reads the outcome
// only after done.
type call[T any] struct {
	context.Context // the caller's ctx under cancel
	cancel          context.CancelCauseFunc
	timer           *time.Timer
	monitor         *CatalogMonitor
	budget          frameBudget
	request         func(context.Context) (T, error)
	value           T
	err             error
	done            chan struct{} // closed once a worker's request returned
}

// Deadline is the adapter's deadline, or the caller's when that is earlier.
func (c *call[T]) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.budget.deadline) {
		return d, true
	}
	return c.budget.deadline, true
}

// Err is context.DeadlineExceeded once the call ended at a deadline (the
// adapter's or the caller's), context.Canceled once the caller canceled it,
// as a ctx of context.WithDeadline reports them. (A ctx derived from the
// call with a cancel of its own reports context.Canceled at the adapter's
// deadline: it ends with the call's inner ctx. go-sdk derives none on the
// request's path, and the adapter reads only the call's own Err.)
func (c *call[T]) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// Value answers budgetKey with the call's budget (budgetOf), any other key
// as the caller's ctx does.
func (c *call[T]) Value(key any) any {
	if key == (budgetKey{}) {
		return &c.budget
	}
	return c.Context.Value(key)
}

// expire ends the call at the adapter's deadline. A write still in
// progress then is wedged, and the session is severed (gosdk-notes §7)
// once the ctx ended, so that the write's failure maps to mcp_timeout. The
// pending answer is dropped now, not when the request returns: a worker's
// wedged write may never return where the layer cannot end it.
func (c *call[T]) expire() {
	c.cancel(context.DeadlineExceeded)
	if c.budget.writing.Load() == 1 {
		c.monitor.sever()
	}
	c.budget.release()
}

func (c *call[T]) run() {
	c.value, c.err = c.request(c)
	c.budget.release()
	close(c.done)
}

// result is the outcome of the finished request for a caller whose ctx is
// ctx: what the bounding layer observed (a rejected answer, a broken
// connection) decides a failure before mapCallError does, unless a ctx
// ended.
func (c *call[T]) result(ctx context.Context) (T, error) {
	var zero T
	if c.err == nil {
		return c.value, nil
	}
	if ctx.Err() == nil && c.Context.Err() == nil {
		if err := c.budget.outcome(c.err); err != nil {
			return zero, err
		}
	}
	return zero, mapCallError(ctx, c, c.err)
}

// bounded runs one request under timeout and returns its result or its error
// mapped by mapCallError; the budget (answer: code, counts) goes to the bounding
// layer in the request's ctx. gosdk-notes §7: go-sdk checks ctx only before
// writing, so a write to a peer that stopped reading would hold the request
// past any deadline. Where that would hold the caller, the request runs on
// one of m's request workers (requestworkers.go) and the caller regains
// control at the deadline: adapter.md §8, that worker is the one goroutine
// allowed to outlive the call, and its late result is dropped. Where the
// monitor's bounding layer can end such a write (m.inlineRequests), the
// request runs on the caller's goroutine, with no handoff: the call's timer
// severs the session when the write is still in progress at the deadline,
// which makes the write fail and the request return.
func bounded[T any](ctx context.Context, timeout time.Duration, m *CatalogMonitor, answer answerCap,
	request func(context.Context) (T, error)) (T, error) {
	inner, cancel := context.WithCancelCause(ctx)
	c := &call[T]{Context: inner, cancel: cancel, monitor: m, request: request}
	c.budget.answerCap = answer
	c.budget.deadline = time.Now().Add(timeout) // the adapter's own, whatever ctx says
	c.timer = time.AfterFunc(timeout, c.expire)
	defer func() {
		c.timer.Stop()
		cancel(context.Canceled)
	}()
	if m.inlineRequests() {
		c.value, c.err = request(c)
		c.budget.release()
		if c.err == nil && c.Err() != nil {
			c.err = c.Err() // a late result is dropped, as on a worker
		}
		return c.result(ctx)
	}
	if !m.workers.await(c) {
		var zero T
		if c.Err() != nil {
			return zero, mapCallError(ctx, c, c.Err())
		}
		return zero, fail(CodeTransportError) // the session's write is wedged: one abandoned goroutine is the most a session keeps
	}
	c.done = make(chan struct{})
	m.workers.start(c)
	select {
	case <-c.done:
		return c.result(ctx)
	case <-c.Done():
		m.workers.abandon(c.done)
		if c.budget.writing.Load() == 1 {
			// Mid-write. At the deadline the session is severed before
			// returning (expire may not have got there yet), so that a
			// caller who looks finds it severed; when the caller gave up
			// earlier, a timer severs it at the deadline if the write is
			// still in progress then (the call's own stops on return).
			severIfStillWriting(m, &c.budget)
		}
		var zero T
		return zero, mapCallError(ctx, c, c.Err())
	}
}

// severIfStillWriting severs m's session when budget's write is still in
// progress at budget's deadline, the adapter's own: at once when that has
// passed (a peer that stopped reading for the whole Timeout), else by a
// timer that checks again then. The bounding layer calls it when the
// request's ctx ends mid-write. A caller that gives up mid-write does not
// sever a healthy session whose write was about to finish (the peer had
// read the request and the write had not yet returned); a write still
// blocked at the deadline is wedged either way. The timer is no goroutine
// until it fires.
func severIfStillWriting(m *CatalogMonitor, budget *frameBudget) {
	wait := time.Until(budget.deadline)
	if wait <= 0 {
		m.sever()
		return
	}
	time.AfterFunc(wait, func() {
		if budget.writing.Load() == 1 {
			m.sever()
		}
	})
}

// mapCallError is the one translation point from a failed request to the
// adapter's errors (adapter.md §4), for tools/list and tools/call alike. ctx
// is the caller's context and callCtx the request's, which carries the
// adapter's deadline. No SDK error or remote text survives it.
func mapCallError(ctx, callCtx context.Context, err error) error {
	var rpc *jsonrpc.Error
	var rejected *frameRejected
	switch {
	case ctx.Err() != nil:
		return ErrCanceled // checked first: the caller's end wins
	case callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fail(CodeTimeout)
	case errors.As(err, &rejected):
		return fail(rejected.code) // the bounding layer rejected the answer unread
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
