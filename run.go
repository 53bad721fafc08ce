package purramcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/bounding"
	"purra.dev/purramcp/internal/strictjson"
)

// scope is the registration's Scope: the monitor, then ctx, then the host's
// ScopeFunc with a copy of args (see ScopeFunc).
func (t *catalogTool) scope(ctx context.Context, args map[string]any, call ToolContext) error {
	return t.scopeOwned(ctx, strictjson.CloneObject(args), call)
}

// scopeOwned is scope for args nothing else holds or uses afterwards (Run's
// freshly validated value), which the host's ScopeFunc gets without a copy.
func (t *catalogTool) scopeOwned(ctx context.Context, args map[string]any, call ToolContext) error {
	if err := t.monitor.Check(t.revision); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ErrCanceled
	}
	return t.binding.scope(ctx, args, call)
}

// run is the registration's Run, in the order ToolDefinition.Run documents. Known
// failures are results with an ErrorCode and the empty envelope; the error is
// non-nil only for ErrCanceled or a host scope failure. st records the
// request sent and the result received, for the call's Event.
func (t *catalogTool) run(ctx context.Context, args json.RawMessage, call ToolContext, st *callStats) (ToolResult, error) {
	if err := t.monitor.Check(t.revision); err != nil {
		return failedResult(CodeOf(err)), nil
	}
	value, wire, err := t.arguments(args)
	if err != nil {
		return failedResult(CodeInvalidArguments), nil
	}
	if err := t.scopeOwned(ctx, value, call); err != nil { // value is not used again
		return scopeOutcome(ctx, err)
	}
	if err := t.monitor.Check(t.revision); err != nil {
		return failedResult(CodeOf(err)), nil
	}
	if ctx.Err() != nil {
		return ToolResult{}, ErrCanceled // no request is sent once ctx has ended
	}
	st.requests = 1
	traced := st.trace // not st itself: the closure escapes, st need not
	var token string
	if fn := progressFrom(ctx); fn != nil {
		var end func()
		token, end = t.monitor.progress.register(fn)
		defer end() // fn is never called once Run has returned
	}
	result, err := bounded(ctx, t.limits.Timeout, t.monitor, bounding.ResultCap(t.limits.MaxResultBytes, t.limits.MaxContentBlocks), func(ctx context.Context) (*mcp.CallToolResult, error) {
		tc := traced
		if tc == nil {
			tc = ctx
		}
		meta := traceMeta(tc, t.propagator)
		if token != "" {
			meta = withProgressToken(meta, token)
		}
		return t.session.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: t.binding.remote, Arguments: wire})
	})
	if err != nil {
		return errorOutcome(err)
	}
	st.result = result
	// A list change meanwhile discards the result.
	if err := t.monitor.Check(t.revision); err != nil {
		return failedResult(CodeOf(err)), nil
	}
	envelope, err := t.convert(result)
	if err != nil {
		return failedResult(CodeOf(err)), nil
	}
	return ToolResult{Content: envelope, EffectState: effectNotStarted}, nil
}

// arguments parses args as strict JSON under the input contract and
// re-encodes the validated value compactly for the wire. Empty
// (nil or zero-length) args mean {}.
func (t *catalogTool) arguments(args json.RawMessage) (map[string]any, json.RawMessage, error) {
	text := string(args)
	if len(args) == 0 {
		text = "{}"
	}
	return t.input.parseArguments(text) // the wire form as json.Marshal(value) writes it
}

// scopeOutcome turns a scope error into Run's outcome (see ScopeFunc). An
// *Error in err's chain that is nil or has no code (a typed nil returned as
// an error) fails mcp_scope_denied.
func scopeOutcome(ctx context.Context, err error) (ToolResult, error) {
	var e *Error
	switch {
	case ctx.Err() != nil || errors.Is(err, ErrCanceled):
		return ToolResult{}, ErrCanceled
	case isDenial(err):
		return failedResult(CodeScopeDenied), nil
	case errors.As(err, &e):
		if e == nil || e.Code == "" {
			// A typed-nil or code-less *Error is a refusal that names no
			// code: it denies, it never allows and never panics.
			return failedResult(CodeScopeDenied), nil
		}
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
