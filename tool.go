package purramcp

import (
	"context"
	"encoding/json"
	"errors"
)

// ToolPolicy is the policy a Go PurrA core applies to a tool. Read bindings
// always normalize to {Mode: "read", Title: <trimmed title>, RiskLevel: "read"}.
type ToolPolicy struct {
	// Mode must be "read".
	Mode string `json:"mode"`
	// Title is shown to people; it must be non-blank and is stored trimmed
	// as JavaScript trim() does.
	Title string `json:"title"`
	// RiskLevel is "" or "read"; it is stored as "read".
	RiskLevel string `json:"riskLevel"`
}

// ToolContext describes one tool call as the host's agent core dispatches
// it. The adapter never interprets it: Run passes it unchanged to the
// binding's [ScopeFunc] (and to the audit observer), so a scope can decide by
// run, agent or lease. Every field may be empty.
type ToolContext struct {
	// CallID identifies this call, as the model or framework named it.
	CallID string
	// ToolName is the local name the call was dispatched to.
	ToolName string
	// RunID identifies the agent run the call belongs to.
	RunID string
	// RootRunID identifies the outermost run of a tree of runs.
	RootRunID string
	// AgentID identifies the agent making the call.
	AgentID string
	// ParentRunID identifies the run that started RunID, if any.
	ParentRunID string
	// LeaseOwnerID identifies the holder of the lease the call runs under.
	LeaseOwnerID string
	// LeaseEpoch is the epoch of that lease.
	LeaseEpoch int64
}

// A ScopeFunc is the host's authorization check: it decides whether a call
// whose arguments already passed the input contract may proceed. Run calls it
// at most once per call, after argument validation and before any request,
// with ctx the caller's context. It returns:
//
//   - nil to allow the call;
//   - an error from [Deny] (possibly wrapped) to deny it: Run then returns a
//     result with ErrorCode [CodeScopeDenied] and the reason never reaches
//     the model, the envelope or the code;
//   - any other error for a failure of the host itself, which Run returns
//     unchanged as its error (an agent framework shows [CodeHostFailure]).
//
// Two exceptions: when ctx has ended, Run returns [ErrCanceled] whatever the
// function returned; and an [*Error] (such as the mcp_catalog_stale one the
// registration's own Scope wrapper returns) becomes the result's ErrorCode;
// a nil *Error (a typed nil returned as error) or one with an empty Code
// carries no code and denies ([CodeScopeDenied]).
// args is a fresh copy the function may keep or change; nothing it does to
// args changes what is sent. A ScopeFunc must be safe for concurrent use
// when the host runs calls concurrently.
type ScopeFunc func(ctx context.Context, args map[string]any, call ToolContext) error

// Unscoped allows every call. A binding must name a scope; choosing Unscoped
// is the explicit opt-out.
var Unscoped ScopeFunc = func(context.Context, map[string]any, ToolContext) error { return nil }

// Deny returns a denial for a [ScopeFunc]. The reason is for the host's own
// logs: it never reaches the model, the envelope or the error code.
func Deny(reason string) error { return &denial{reason: reason} }

// denial is the error Deny returns.
type denial struct{ reason string }

// Error names the denial for the host's logs; it never reaches the model.
func (d *denial) Error() string { return "purramcp: scope denied: " + d.reason }

// isDenial reports whether err is, or wraps, a denial from Deny.
func isDenial(err error) bool {
	var d *denial
	return errors.As(err, &d)
}

// A ToolDefinition is one read-only tool registration, as a Go agent core
// consumes it. [Catalog.Registrations] returns fresh values; changing one
// (its maps included) changes nothing in the catalog. Scope and Run are safe
// for concurrent use.
type ToolDefinition struct {
	// Name is the binding's local name.
	Name string
	// Description is the remote description (remote text, bounded by
	// Limits.MaxDescriptionBytes), or the binding's title when it is empty.
	Description string
	// InputSchema is the compiled input schema (a root $schema removed; under
	// SchemaPolicy.ExtendedKeywords every $ref inlined and $defs removed, while
	// the snapshot keeps the schema as sent). Catalog.Registrations and
	// Catalog.Registration give each registration a fresh copy; a source
	// that hands out one copy to many callers (a fleet) documents that it
	// must not be modified. Arguments are validated by ArgumentContract,
	// never by this map.
	InputSchema map[string]any
	// ArgumentContract is the compiled input contract; it is immutable.
	ArgumentContract *Contract
	// Policy is the normalized read policy.
	Policy ToolPolicy
	// ConcurrencySafe records the host's declaration; it schedules nothing.
	ConcurrencySafe bool
	// Scope checks the catalog (a closed session or a list change since
	// discovery fails with that *Error) and ctx ([ErrCanceled]), then runs
	// the binding's ScopeFunc with a copy of args.
	Scope ScopeFunc
	// Run performs one call. args is the argument JSON text (nil or empty
	// means {}). In order, each step ending the call:
	//
	//  1. the catalog is checked: [CodeConnectionClosed] once the session
	//     ended, [CodeCatalogStale] after a tool list change;
	//  2. args is parsed as strict JSON (at most Limits.MaxResultBytes of
	//     text) and validated by ArgumentContract: [CodeInvalidArguments];
	//  3. Scope runs (see [ScopeFunc]): [CodeScopeDenied], a host error, or
	//     [ErrCanceled];
	//  4. the catalog is checked again, then ctx: no request is sent once
	//     ctx has ended ([ErrCanceled]);
	//  5. exactly one tools/call is sent, never retried, bounded by
	//     Limits.Timeout: [CodeTimeout], [CodeTransportError],
	//     [CodeProtocolError] (a JSON-RPC error answer) or
	//     [CodeResultInvalid] (an answer go-sdk cannot decode); under a
	//     ctx from [WithProgress] it carries a progress token and the
	//     server's progress reaches the ctx's ProgressFunc while it runs;
	//  6. the catalog is checked again: a list change meanwhile discards the
	//     result ([CodeCatalogStale]);
	//  7. the result is converted: isError gives [CodeToolError] (its text
	//     is never echoed); more than Limits.MaxContentBlocks blocks or more
	//     than Limits.MaxResultBytes of JSON give [CodeResultTooLarge]; a
	//     non-text block or a request for more input gives
	//     [CodeResultUnsupported]; structured content that is not an object,
	//     or that fails the output schema, gives [CodeResultInvalid].
	//
	// A known failure is a ToolResult with ErrorCode set, the empty envelope
	// and a nil error. The error is non-nil only for [ErrCanceled] (ctx
	// ended) and for a host failure returned by the ScopeFunc; the result is
	// then the zero ToolResult. Run never panics on remote input and holds
	// no lock while the request is in flight, so calls run concurrently.
	Run func(ctx context.Context, args json.RawMessage, call ToolContext) (ToolResult, error)
}

// ToolResult is the outcome of Run that is not a cancellation or host
// failure: a success (ErrorCode "") or a known failure.
type ToolResult struct {
	// Content is the envelope; empty ({"text":[],"structured":null}) on error.
	Content Envelope
	// EffectState is "not_started" for every read result.
	EffectState string
	// ErrorCode is "" on success, else an mcp_* code.
	ErrorCode string
}

// Envelope is the model-visible content of a result.
type Envelope struct {
	// Text holds every text block in order; never nil ([] when empty).
	Text []string `json:"text"`
	// Structured is the structured content, or nil (null) when absent: a
	// value validated under the tool's output schema, holding only nil,
	// bool, float64, string, []any and map[string]any. It belongs to the
	// caller; nothing in the adapter holds or reads it after Run returns.
	Structured map[string]any `json:"structured"`
}

// effectNotStarted is the effect state of every read result.
const effectNotStarted = "not_started"

// FailedResult returns the ToolResult of a known failure with code, as Run
// reports one: the empty envelope ({"text":[],"structured":null}) and
// EffectState "not_started". A host that wraps Run (the fleet's routing
// registrations) reports its own refusals with it.
func FailedResult(code string) ToolResult {
	return ToolResult{
		Content:     Envelope{Text: []string{}},
		EffectState: effectNotStarted,
		ErrorCode:   code,
	}
}

// Err returns nil when the result succeeded (ErrorCode ""), else a fresh
// [*Error] with its ErrorCode, so that one errors.Is covers both of Run's
// failure channels:
//
//	res, err := def.Run(ctx, args, call)
//	if err == nil {
//		err = res.Err()
//	}
//	if errors.Is(err, purramcp.ErrCatalogStale) { ... }
func (r ToolResult) Err() error {
	if r.ErrorCode == "" {
		return nil
	}
	return &Error{Code: r.ErrorCode}
}
