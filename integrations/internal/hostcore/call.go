package hostcore

import (
	"context"
	"encoding/json"
	"errors"

	"purra.dev/purramcp"
)

// CodeUnknownTool is what an integration that dispatches by name shows the
// model, as {"error":"unknown_tool"}, for a call naming no tool it serves.
// Like [purramcp.CodeHostFailure] it is outside the mcp_* set: the boundary
// never saw the call.
const CodeUnknownTool = "unknown_tool"

// ErrorJSON is the model-visible text of a failure with code:
// {"error":"<code>"}. Every code is a fixed ASCII word, so nothing needs
// escaping.
func ErrorJSON(code string) string { return `{"error":"` + code + `"}` }

// Hooks are the host's two hooks that every integration's Options carries;
// purraanthropic.Options and purraopenai.Options are this type.
type Hooks struct {
	// Call, when set, returns the ToolContext of one call of def; callID is
	// the framework's call id, "" where it has none. Whatever Call returns,
	// ToolName is set to def.Name, and CallID to callID when callID is not
	// empty ([Hooks.ToolContext]).
	Call func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext
	// OnHostError, when set, is told the tool's name and the host's own
	// error whenever Run fails with one (anything but
	// [purramcp.ErrCanceled]); it may be called concurrently.
	OnHostError func(ctx context.Context, tool string, err error)
}

// Options are the options of an integration that builds its framework's
// tool objects; purraadk.Options and purraeino.Options are this type, and
// each documents its framework's defaults.
type Options struct {
	// Call is [Hooks.Call].
	Call func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext
	// OnHostError is [Hooks.OnHostError].
	OnHostError func(ctx context.Context, tool string, err error)
	// Describe returns the description the model is sent for def, for hosts
	// that filter remote descriptions (invisible or control characters).
	// Nil sends def.Description unchanged.
	Describe func(def purramcp.ToolDefinition) string
}

// Hooks returns the options' Call and OnHostError.
func (o Options) Hooks() Hooks { return Hooks{Call: o.Call, OnHostError: o.OnHostError} }

// Description returns the description the model is sent for def:
// Describe's, or def.Description unchanged when Describe is nil.
func (o Options) Description(def purramcp.ToolDefinition) string {
	if o.Describe == nil {
		return def.Description
	}
	return o.Describe(def)
}

// ToolContext returns the ToolContext of one call: what Call returns (the
// zero value when Call is nil), with ToolName set to def.Name and CallID to
// callID when callID is not empty.
func (h Hooks) ToolContext(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext {
	var tc purramcp.ToolContext
	if h.Call != nil {
		tc = h.Call(ctx, callID, def)
	}
	if callID != "" {
		tc.CallID = callID
	}
	tc.ToolName = def.Name
	return tc
}

// An Outcome is what one call produced, other than a cancellation: Run's
// result, the host's own failure, or, for a call dispatched by name
// ([Box.Dispatch]), a name the box does not serve.
type Outcome struct {
	// Result is Run's result when HostErr is nil: a success (ErrorCode "")
	// or a known failure.
	Result purramcp.ToolResult
	// HostErr is the host's own error (a ScopeFunc failure), already
	// reported to Hooks.OnHostError. Only an integration whose framework
	// never shows a Go error's text to the model returns it.
	HostErr error
	// UnknownTool is set when the call named no tool served: nothing ran.
	UnknownTool bool
}

// Code returns "" on success, the mcp_* code of a known failure,
// [purramcp.CodeHostFailure] for a host failure and [CodeUnknownTool] for an
// unknown name.
func (o Outcome) Code() string {
	if o.UnknownTool {
		return CodeUnknownTool
	}
	return purramcp.OutcomeCode(o.Result, o.HostErr)
}

// JSON returns what a model reads as text: [purramcp.ToolResult.ModelJSON]
// for a result, {"error":"<code>"} for a host failure or an unknown name.
func (o Outcome) JSON() string {
	if o.HostErr != nil || o.UnknownTool {
		return ErrorJSON(o.Code())
	}
	return o.Result.ModelJSON()
}

// Model returns what a model reads as a value: [purramcp.ToolResult.Model]
// for a result, {"error":"<code>"} for a host failure or an unknown name.
func (o Outcome) Model() map[string]any {
	if o.HostErr != nil || o.UnknownTool {
		return map[string]any{"error": o.Code()}
	}
	return o.Result.Model()
}

// Call runs def once for one model tool call: it takes def's gate in g (see
// [Gates]), builds the ToolContext with h, and calls Run with args as the
// framework handed them (nil or empty means {}). Run sends at most one
// tools/call and nothing is retried. The only error is
// [purramcp.ErrCanceled] (ctx ended while waiting for the gate, or Run
// reported it); a host failure is reported to h.OnHostError and returned in
// the Outcome.
func Call(ctx context.Context, g *Gates, h Hooks, def purramcp.ToolDefinition, callID string, args json.RawMessage) (Outcome, error) {
	release, err := g.enter(ctx, def)
	if err != nil {
		return Outcome{}, err
	}
	defer release()
	res, err := def.Run(ctx, args, h.ToolContext(ctx, callID, def))
	switch {
	case err == nil:
		return Outcome{Result: res}, nil
	case errors.Is(err, purramcp.ErrCanceled):
		return Outcome{}, purramcp.ErrCanceled
	default:
		if h.OnHostError != nil {
			h.OnHostError(ctx, def.Name, err)
		}
		return Outcome{HostErr: err}, nil
	}
}
