package purramcp

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/bounding"
	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/wire"
)

// This file is one tools/call, top to bottom: the registration's Run
// (runner), its steps in the order ToolDefinition.Run documents (run), the
// arguments, the scope, the one bounded request, and the result back to its
// envelope (convert, under a resultValidator).

// callStats is what one Run measured for its Event, and the ctx its
// CallStart returned.
type callStats struct {
	requests int                 // tools/call requests sent (0 or 1)
	result   *mcp.CallToolResult // the result that arrived, or nil
	trace    context.Context     // CallStart's ctx, which the TracePropagator reads; nil means the Run's
}

// runner is the registration's Run: catalogTool.run, preceded by CallStart
// and followed by one Event when the catalog has an Observer.
func (c *Catalog) runner(t *catalogTool) func(context.Context, json.RawMessage, ToolContext) (ToolResult, error) {
	if c.observer == nil {
		return func(ctx context.Context, args json.RawMessage, call ToolContext) (ToolResult, error) {
			var st callStats
			return t.run(ctx, args, call, &st)
		}
	}
	return func(ctx context.Context, args json.RawMessage, call ToolContext) (ToolResult, error) {
		start := time.Now()
		var st callStats
		observed := ctx
		if c.callStart != nil {
			if sc := c.callStart(ctx, Event{Kind: EventCallStart, ServerID: c.serverID, RevisionDigest: c.digest,
				LocalName: t.binding.local, RemoteName: t.binding.remote, CallID: call.CallID, RunID: call.RunID,
				ProtocolVersion: c.protocol, Transport: c.transport, Start: start}); sc != nil {
				observed = sc
			}
			st.trace = observed
		}
		res, err := t.run(ctx, args, call, &st)
		code := OutcomeCode(res, err)
		resultBytes := 0
		if st.result != nil {
			// 0 for an unmeasurable one; counted to the end (no go-sdk
			// MarshalJSON: the answer already passed the bounding layer's cap).
			resultBytes, _ = wire.ResultSize(st.result, math.MaxInt)
		}
		c.observer(observed, Event{Kind: EventCall, ServerID: c.serverID, RevisionDigest: c.digest,
			LocalName: t.binding.local, RemoteName: t.binding.remote, CallID: call.CallID, RunID: call.RunID,
			Code: code, Requests: st.requests, ArgumentBytes: len(args), ResultBytes: resultBytes,
			Duration: time.Since(start), ProtocolVersion: c.protocol, Transport: c.transport, Start: start})
		return res, err
	}
}

// run is the registration's Run, in the order ToolDefinition.Run documents. Known
// failures are results with an ErrorCode and the empty envelope; the error is
// non-nil only for ErrCanceled or a host scope failure. st records the
// request sent and the result received, for the call's Event.
func (t *catalogTool) run(ctx context.Context, args json.RawMessage, call ToolContext, st *callStats) (ToolResult, error) {
	if err := t.monitor.Check(t.revision); err != nil {
		return FailedResult(CodeOf(err)), nil
	}
	value, wire, err := t.arguments(args)
	if err != nil {
		return FailedResult(CodeInvalidArguments), nil
	}
	if err := t.scopeOwned(ctx, value, call); err != nil { // value is not used again
		return scopeOutcome(ctx, err)
	}
	if err := t.monitor.Check(t.revision); err != nil {
		return FailedResult(CodeOf(err)), nil
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
		return FailedResult(CodeOf(err)), nil
	}
	envelope, err := t.convert(result)
	if err != nil {
		return FailedResult(CodeOf(err)), nil
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
	return parseArguments(t.input, text) // the wire form as json.Marshal(value) writes it
}

// parseArguments is c.Parse for Run's arguments: the validated value as a
// fresh map and, from the same parse, its compact wire form.
func parseArguments(c *Contract, text string) (map[string]any, []byte, error) {
	v, err := strictjson.Parse(text, c.outputLimits())
	if err != nil {
		return nil, nil, contractError(CodeInvalidJSON, "document", "$")
	}
	if err := c.validate(v); err != nil {
		return nil, nil, err
	}
	wire := wire.AppendJSON(make([]byte, 0, len(text)+16), v)
	return strictjson.Own(v).(map[string]any), wire, nil
}

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

// scopeOutcome turns a scope error into Run's outcome (see ScopeFunc). An
// *Error in err's chain that is nil or has no code (a typed nil returned as
// an error) fails mcp_scope_denied.
func scopeOutcome(ctx context.Context, err error) (ToolResult, error) {
	var e *Error
	switch {
	case ctx.Err() != nil || errors.Is(err, ErrCanceled):
		return ToolResult{}, ErrCanceled
	case isDenial(err):
		return FailedResult(CodeScopeDenied), nil
	case errors.As(err, &e):
		if e == nil || e.Code == "" {
			// A typed-nil or code-less *Error is a refusal that names no
			// code: it denies, it never allows and never panics.
			return FailedResult(CodeScopeDenied), nil
		}
		return FailedResult(e.Code), nil
	default:
		return ToolResult{}, err // a host failure, unchanged
	}
}

// bounded runs one request of m (a tools/list page or a tools/call) on the
// request path, under the adapter's timeout and with answer's cap on the
// bounding layer: bounding.Request's documentation states the goroutine
// contract. Its failure is one of the adapter's errors (see publicError).
func bounded[T any](ctx context.Context, timeout time.Duration, m *CatalogMonitor, answer bounding.Cap,
	request func(context.Context) (T, error)) (T, error) {
	value, err := bounding.Request(ctx, &m.bounding, (*monitorOwner)(m), timeout, answer, request)
	if err != nil {
		return value, publicError(err)
	}
	return value, nil
}

// publicError translates a failure of the request path into the adapter's
// error: bounding.ErrCanceled is ErrCanceled and a *bounding.Failure the
// *Error with its code, except a tools/list page over the bounding layer's
// cap (bounding.ToolsCap): the catalog-wide limit it passed, MaxTools or
// MaxCatalogBytes (catalogLimit).
func publicError(err error) error {
	var f *bounding.Failure
	switch {
	case errors.Is(err, bounding.ErrCanceled):
		return ErrCanceled
	case errors.As(err, &f) && f.Code == CodeCatalogLimitExceeded:
		if f.Items {
			return catalogLimit("MaxTools")
		}
		return catalogLimit("MaxCatalogBytes")
	case errors.As(err, &f):
		return fail(f.Code)
	}
	return err
}

// errorOutcome turns a mapped request error into Run's outcome.
func errorOutcome(err error) (ToolResult, error) {
	if errors.Is(err, ErrCanceled) {
		return ToolResult{}, ErrCanceled
	}
	return FailedResult(CodeOf(err)), nil
}

// convert turns a tools/call result into the envelope, in the order of
// ToolDefinition.Run (step 7). result is the one go-sdk decoded for this call, which
// nothing else reads once Run returns: the envelope may keep its structured
// content when that is already in the decoded form the envelope promises
// (resultValidator.validate).
//
// The size check comes before the block and envelope checks. For the
// common result, text blocks and structured content only, the envelope's
// walk runs first and its measure bounds the size (wire.SizeWithin); the
// exact count runs only when the bound does not settle it. Either way the
// first failure in that order decides the outcome.
func (t *catalogTool) convert(result *mcp.CallToolResult) (Envelope, error) {
	if result == nil {
		return Envelope{}, fail(CodeResultInvalid) // unreachable: go-sdk returns a value
	}
	if result.IsError {
		return Envelope{}, fail(CodeToolError) // remote text never echoed
	}
	if len(result.Content) > t.limits.MaxContentBlocks {
		return Envelope{}, fail(CodeResultTooLarge)
	}
	text, allText := textBlocks(result.Content)
	results := t.results()
	var walked map[string]any // the walked envelope, once its measure settled the size
	if allText && results.sharesLimits() {
		if envelope, ok := envelopeValue(text, result.StructuredContent); ok {
			v, m, err := results.walk(envelope)
			if err == nil && wire.SizeWithin(result, m, t.limits.MaxResultBytes) {
				walked = v
			}
		}
	}
	if walked == nil {
		if n, err := wire.ResultSize(result, t.limits.MaxResultBytes); err != nil {
			return Envelope{}, fail(CodeResultInvalid)
		} else if n > t.limits.MaxResultBytes {
			return Envelope{}, fail(CodeResultTooLarge)
		}
	}
	if !allText {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	// A result asking for more input (multi-round-trip) is not a result.
	if result.NeedsInput() || result.InputRequests != nil {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	if walked != nil {
		value, err := results.validateWalked(walked)
		if err != nil {
			return Envelope{}, fail(CodeResultInvalid)
		}
		return envelopeFromValue(value)
	}
	return t.envelopeOf(text, result.StructuredContent)
}

// textBlocks returns the texts of content, and false when a block is not a
// text block.
func textBlocks(content []mcp.Content) ([]any, bool) {
	text := make([]any, 0, len(content))
	for _, block := range content {
		tc, ok := block.(*mcp.TextContent)
		if !ok || tc == nil {
			return nil, false
		}
		text = append(text, tc.Text)
	}
	return text, true
}

// envelopeValue returns the value the envelope contract validates,
// {text, structured}, and false when structured is neither absent nor an
// object. Text that looks like JSON never counts as structured content.
func envelopeValue(text []any, structured any) (map[string]any, bool) {
	var object any // absent structured content is null
	if structured != nil {
		m, ok := structured.(map[string]any)
		if !ok {
			return nil, false
		}
		object = m
	}
	return map[string]any{"text": text, "structured": object}, true
}

// envelopeOf validates {text, structured} under the envelope contract and,
// when the tool has one, structured under its output contract.
func (t *catalogTool) envelopeOf(text []any, structured any) (Envelope, error) {
	envelope, ok := envelopeValue(text, structured)
	if !ok {
		return Envelope{}, fail(CodeResultInvalid)
	}
	// One walk serves the envelope and, when the tool has one, the output
	// contract (structured is required then: null fails its root type).
	value, err := t.results().validate(envelope)
	if err != nil {
		return Envelope{}, fail(CodeResultInvalid)
	}
	return envelopeFromValue(value)
}

// envelopeFromValue reads the validated envelope, a value the contract
// returned, into an Envelope.
func envelopeFromValue(value map[string]any) (Envelope, error) {
	items, ok := value["text"].([]any)
	if !ok {
		return Envelope{}, fail(CodeResultInvalid) // unreachable: built above
	}
	env := Envelope{Text: make([]string, len(items))}
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return Envelope{}, fail(CodeResultInvalid) // unreachable: built above
		}
		env.Text[i] = s
	}
	if s, ok := value["structured"].(map[string]any); ok {
		env.Structured = s
	}
	return env, nil
}

// results is the validator of t's results.
func (t *catalogTool) results() resultValidator {
	return resultValidator{envelope: t.envelope, output: t.output}
}

// A resultValidator validates a result's envelope value {text, structured}:
// the envelope contract over the whole and, when the tool has one, its
// output contract over structured.
type resultValidator struct {
	envelope *Contract
	output   *Contract // nil when the tool has no output schema
}

// validate is envelope.ValidateValue(value) followed, when output is not
// nil, by output.ValidateValue(value["structured"]) with one walk: a member
// of a value that fits the envelope's output limits fits the same limits on
// its own, so when both contracts share them the member's own walk could
// not fail. The two contracts' errors are returned as ValidateValue would
// return them. Unlike ValidateValue, the result may share containers with
// value (strictjson.Shared): value must be one nothing else holds or
// modifies, such as a result go-sdk decoded for this call.
func (r resultValidator) validate(value map[string]any) (map[string]any, error) {
	if !r.sharesLimits() {
		out, err := r.envelope.ValidateValue(value)
		if err == nil {
			_, err = r.output.ValidateValue(value["structured"])
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	v, _, err := r.walk(value)
	if err != nil {
		return nil, err
	}
	return r.validateWalked(v)
}

// sharesLimits reports whether output is nil or has the envelope's output
// limits, so that validate walks once.
func (r resultValidator) sharesLimits() bool {
	return r.output == nil || r.output.outputLimits() == r.envelope.outputLimits()
}

// walk is the walk of validate: strictjson.Shared of value under the
// envelope's output limits, and what it measured.
func (r resultValidator) walk(value map[string]any) (map[string]any, strictjson.Measure, error) {
	v, m, err := strictjson.Shared(value, r.envelope.outputLimits())
	if err != nil {
		return nil, strictjson.Measure{}, contractError(CodeInvalidJSON, "value", "$")
	}
	return v.(map[string]any), m, nil
}

// validateWalked is the rest of validate for v, which walk returned.
func (r resultValidator) validateWalked(v map[string]any) (map[string]any, error) {
	if err := r.envelope.validate(v); err != nil {
		return nil, err
	}
	if r.output != nil {
		if err := r.output.validate(v["structured"]); err != nil {
			return nil, err
		}
	}
	return v, nil
}
