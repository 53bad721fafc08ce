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

// ToolContext describes one tool call as the core dispatches it.
type ToolContext struct {
	CallID, ToolName, RunID, RootRunID, AgentID, ParentRunID, LeaseOwnerID string
	LeaseEpoch                                                             int64
}

// A ScopeFunc decides whether a call with validated arguments may proceed.
// It returns nil to allow, an error from [Deny] to deny (the call then fails
// [ErrScopeDenied] and the reason never reaches the model), or any other error
// for a host failure, which Run returns unchanged. Two exceptions: when ctx
// has ended Run returns [ErrCanceled], and an *Error (such as the one the
// registration's own Scope wrapper returns for a stale catalog) becomes the
// result's ErrorCode. args is a copy the function may keep; changing it
// changes nothing that is sent.
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

// A ToolDefinition is one read-only tool registration, as a Go PurrA core
// consumes it. Catalog.Registrations returns fresh values; changing one
// changes nothing in the catalog. Scope and Run are safe for concurrent use.
type ToolDefinition struct {
	// Name is the binding's local name.
	Name string
	// Description is the remote description, or the binding title when empty.
	Description string
	// InputSchema is the compiled input schema (a root $schema removed; under
	// SchemaPolicy.ExtendedKeywords every $ref inlined and $defs removed, while
	// the snapshot keeps the schema as sent).
	InputSchema map[string]any
	// ArgumentContract is the compiled input contract; it is immutable.
	ArgumentContract *Contract
	// Policy is the normalized read policy.
	Policy ToolPolicy
	// ConcurrencySafe records the host's declaration; it schedules nothing.
	ConcurrencySafe bool
	// Scope checks the monitor and ctx, then runs the binding's ScopeFunc.
	Scope ScopeFunc
	// Run performs the call as adapter.md §4 describes.
	Run func(ctx context.Context, args json.RawMessage, call ToolContext) (ToolResult, error)
}

// ToolResult is the outcome of Run that is not a cancellation or host failure.
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
	// Structured is the structured content, or nil (null) when absent.
	Structured map[string]any `json:"structured"`
}

// effectNotStarted is the effect state of every read result.
const effectNotStarted = "not_started"

// failedResult is the result of a known failure: an empty envelope.
func failedResult(code string) ToolResult {
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
