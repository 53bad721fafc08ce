package purramcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeTransportRejected is go-sdk's JSON-RPC code for a request the
// transport refused (for example an unreachable HTTP server).
const codeTransportRejected = -32005

// Registrations returns one fresh ToolDefinition per binding, sorted by
// name. Changing the slice or its maps changes nothing in the catalog.
func (c *Catalog) Registrations() []ToolDefinition {
	defs := make([]ToolDefinition, len(c.tools))
	for i, t := range c.tools {
		description := t.entry.Description
		if description == "" {
			description = t.binding.policy.Title
		}
		defs[i] = ToolDefinition{
			Name:             t.entry.LocalName,
			Description:      description,
			InputSchema:      t.input.compiledSchema(),
			ArgumentContract: t.input,
			Policy:           t.binding.policy,
			ConcurrencySafe:  t.binding.concurrencySafe,
			Scope:            t.scope,
			Run:              t.run,
		}
	}
	return defs
}

// scope is the registration's Scope: the monitor, then ctx, then the host's
// ScopeFunc with a copy of args (adapter.md §4.3).
func (t *boundTool) scope(ctx context.Context, args map[string]any, call ToolContext) error {
	if err := t.monitor.Check(t.revision); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ErrCanceled
	}
	return t.binding.scope(ctx, cloneObject(args), call)
}

// run is the registration's Run, in the order of adapter.md §4. Known
// failures are results with an ErrorCode and the empty envelope; the error is
// non-nil only for ErrCanceled or a host scope failure.
func (t *boundTool) run(ctx context.Context, args json.RawMessage, call ToolContext) (ToolResult, error) {
	if err := t.monitor.Check(t.revision); err != nil {
		return failedResult(CodeOf(err)), nil
	}
	value, wire, err := t.arguments(args)
	if err != nil {
		return failedResult(CodeInvalidArguments), nil
	}
	if err := t.scope(ctx, value, call); err != nil {
		return scopeOutcome(ctx, err)
	}
	if err := t.monitor.Check(t.revision); err != nil {
		return failedResult(CodeOf(err)), nil
	}
	if ctx.Err() != nil {
		return ToolResult{}, ErrCanceled // adapter.md §4.4: no request sent
	}
	result, err := bounded(ctx, t.limits.Timeout, func(ctx context.Context) (*mcp.CallToolResult, error) {
		return t.session.CallTool(ctx, &mcp.CallToolParams{Name: t.entry.RemoteName, Arguments: wire})
	})
	if err != nil {
		return errorOutcome(err)
	}
	// adapter.md §4.6: a list change meanwhile discards the result.
	if err := t.monitor.Check(t.revision); err != nil {
		return failedResult(CodeOf(err)), nil
	}
	envelope, err := t.convert(result)
	if err != nil {
		return failedResult(CodeOf(err)), nil
	}
	return ToolResult{Content: envelope, EffectState: effectNotStarted}, nil
}

// arguments parses args as strict JSON under the input contract (adapter.md
// §4.2) and re-encodes the validated value compactly for the wire. Empty
// (nil or zero-length) args mean {}.
func (t *boundTool) arguments(args json.RawMessage) (map[string]any, json.RawMessage, error) {
	text := string(args)
	if len(args) == 0 {
		text = "{}"
	}
	value, err := t.input.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	wire, err := json.Marshal(value)
	if err != nil {
		return nil, nil, err // unreachable: the contract admits only JSON values
	}
	return value, wire, nil
}

// scopeOutcome turns a scope error into Run's outcome (adapter.md §4.3).
func scopeOutcome(ctx context.Context, err error) (ToolResult, error) {
	var e *Error
	switch {
	case ctx.Err() != nil || errors.Is(err, ErrCanceled):
		return ToolResult{}, ErrCanceled
	case isDenial(err):
		return failedResult(CodeScopeDenied), nil
	case errors.As(err, &e):
		return failedResult(e.Code), nil
	default:
		return ToolResult{}, err // a host failure, unchanged
	}
}

// errorOutcome turns a mapped request error into Run's outcome.
func errorOutcome(err error) (ToolResult, error) {
	if errors.Is(err, ErrCanceled) {
		return ToolResult{}, ErrCanceled
	}
	return failedResult(CodeOf(err)), nil
}

// outcome is what one bounded request produced.
type outcome[T any] struct {
	value T
	err   error
}

// bounded runs one request under timeout and returns its result or its error
// mapped by mapCallError. The request runs in its own goroutine so that the
// caller regains control at the deadline even when the transport write blocks
// (gosdk-notes §7: go-sdk checks ctx only before writing). adapter.md §8: that
// goroutine is the one allowed to outlive the call; it is abandoned at the
// deadline and ends when the write fails, at the latest when the session
// closes. Its late result is dropped.
func bounded[T any](ctx context.Context, timeout time.Duration, request func(context.Context) (T, error)) (T, error) {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan outcome[T], 1) // buffered: an abandoned request never blocks
	go func() {
		v, err := request(callCtx)
		done <- outcome[T]{v, err}
	}()
	var zero T
	select {
	case o := <-done:
		if o.err != nil {
			return zero, mapCallError(ctx, callCtx, o.err)
		}
		return o.value, nil
	case <-callCtx.Done():
		return zero, mapCallError(ctx, callCtx, callCtx.Err())
	}
}

// mapCallError is the one translation point from a failed request to the
// adapter's errors (adapter.md §4), for tools/list and tools/call alike. ctx
// is the caller's context and callCtx the request's, which carries the
// adapter's deadline. No SDK error or remote text survives it.
func mapCallError(ctx, callCtx context.Context, err error) error {
	var rpc *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return ErrCanceled // checked first: the caller's end wins
	case callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fail(CodeTimeout)
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
// broken: go-sdk's ErrConnectionClosed, an in-flight EOF, closed pipes, files
// and network connections, and network errors. A custom transport's other
// write errors carry no sentinel and fall through to mcp_result_invalid.
func brokenConnection(err error) bool {
	var netErr net.Error
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) || errors.Is(err, fs.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &netErr)
}
