package purramcp

import (
	"context"
	"errors"
	"fmt"
	"io"

	"purra.dev/purramcp/internal/codes"
)

// Error codes, one per failure the adapter reports, from the one table in
// internal/codes (each comment names the value). Each is the Code of the
// [*Error] values that match its sentinel below, and the ErrorCode of a
// [ToolResult] that failed with it. They are part of the API: a code never
// changes meaning and never carries remote text; a host compares
// [ToolResult.ErrorCode] and [Event.Code] with them. CodeAnnotationConflict,
// CodeCatalogUnapproved, CodeEgressRefused, CodeUnauthorized and the
// CodeAuth* codes are purramcp additions with no purra-mcp 1.0.0 counterpart; they arise only
// from opt-in [DiscoveryOptions] fields, an OAuth-aware HTTP transport or
// the fleet's HTTP client.
const (
	// CodeAnnotationConflict, "mcp_annotation_conflict", is the code of
	// [ErrAnnotationConflict] (a purramcp addition).
	CodeAnnotationConflict = codes.AnnotationConflict
	// CodeAuthDenied, "mcp_auth_denied", is the code of [ErrAuthDenied] (a
	// purramcp addition, like every CodeAuth*).
	CodeAuthDenied = codes.AuthDenied
	// CodeAuthDiscoveryFailed, "mcp_auth_discovery_failed", is the code of
	// [ErrAuthDiscoveryFailed].
	CodeAuthDiscoveryFailed = codes.AuthDiscoveryFailed
	// CodeAuthExpired, "mcp_auth_expired", is the code of [ErrAuthExpired].
	CodeAuthExpired = codes.AuthExpired
	// CodeAuthRegistrationFailed, "mcp_auth_registration_failed", is the
	// code of [ErrAuthRegistrationFailed].
	CodeAuthRegistrationFailed = codes.AuthRegistrationFailed
	// CodeAuthRequired, "mcp_auth_required", is the code of [ErrAuthRequired].
	CodeAuthRequired = codes.AuthRequired
	// CodeAuthStoreFailed, "mcp_auth_store_failed", is the code of
	// [ErrAuthStoreFailed].
	CodeAuthStoreFailed = codes.AuthStoreFailed
	// CodeAuthTokenFailed, "mcp_auth_token_failed", is the code of
	// [ErrAuthTokenFailed].
	CodeAuthTokenFailed = codes.AuthTokenFailed
	// CodeBindingInvalid, "mcp_binding_invalid", is the code of [ErrBindingInvalid].
	CodeBindingInvalid = codes.BindingInvalid
	// CodeBindingMissing, "mcp_binding_missing", is the code of [ErrBindingMissing].
	CodeBindingMissing = codes.BindingMissing
	// CodeCatalogLimitExceeded, "mcp_catalog_limit_exceeded", is the code of [ErrCatalogLimitExceeded].
	CodeCatalogLimitExceeded = codes.CatalogLimitExceeded
	// CodeCatalogStale, "mcp_catalog_stale", is the code of [ErrCatalogStale].
	CodeCatalogStale = codes.CatalogStale
	// CodeCatalogUnapproved, "mcp_catalog_unapproved", is the code of
	// [ErrCatalogUnapproved] (a purramcp addition).
	CodeCatalogUnapproved = codes.CatalogUnapproved
	// CodeConnectionClosed, "mcp_connection_closed", is the code of [ErrConnectionClosed].
	CodeConnectionClosed = codes.ConnectionClosed
	// CodeEgressRefused, "mcp_egress_refused", is the code of
	// [ErrEgressRefused] (a purramcp addition).
	CodeEgressRefused = codes.EgressRefused
	// CodeInvalidArguments, "mcp_invalid_arguments", is the code of [ErrInvalidArguments].
	CodeInvalidArguments = codes.InvalidArguments
	// CodeNameConflict, "mcp_name_conflict", is the code of [ErrNameConflict].
	CodeNameConflict = codes.NameConflict
	// CodeNotInitialized, "mcp_not_initialized", is the code of [ErrNotInitialized].
	CodeNotInitialized = codes.NotInitialized
	// CodePaginationInvalid, "mcp_pagination_invalid", is the code of [ErrPaginationInvalid].
	CodePaginationInvalid = codes.PaginationInvalid
	// CodeProtocolConflict, "mcp_protocol_conflict", is the code of [ErrProtocolConflict].
	CodeProtocolConflict = codes.ProtocolConflict
	// CodeProtocolError, "mcp_protocol_error", is the code of [ErrProtocolError].
	CodeProtocolError = codes.ProtocolError
	// CodeProtocolUnsupported, "mcp_protocol_unsupported", is the code of [ErrProtocolUnsupported].
	CodeProtocolUnsupported = codes.ProtocolUnsupported
	// CodeResultInvalid, "mcp_result_invalid", is the code of [ErrResultInvalid].
	CodeResultInvalid = codes.ResultInvalid
	// CodeResultTooLarge, "mcp_result_too_large", is the code of [ErrResultTooLarge].
	CodeResultTooLarge = codes.ResultTooLarge
	// CodeResultUnsupported, "mcp_result_unsupported", is the code of [ErrResultUnsupported].
	CodeResultUnsupported = codes.ResultUnsupported
	// CodeSchemaUnsupported, "mcp_schema_unsupported", is the code of [ErrSchemaUnsupported].
	CodeSchemaUnsupported = codes.SchemaUnsupported
	// CodeScopeDenied, "mcp_scope_denied", is the code of [ErrScopeDenied].
	CodeScopeDenied = codes.ScopeDenied
	// CodeTimeout, "mcp_timeout", is the code of [ErrTimeout].
	CodeTimeout = codes.Timeout
	// CodeToolError, "mcp_tool_error", is the code of [ErrToolError].
	CodeToolError = codes.ToolError
	// CodeToolUnsupported, "mcp_tool_unsupported", is the code of [ErrToolUnsupported].
	CodeToolUnsupported = codes.ToolUnsupported
	// CodeToolsUnavailable, "mcp_tools_unavailable", is the code of [ErrToolsUnavailable].
	CodeToolsUnavailable = codes.ToolsUnavailable
	// CodeTransportError, "mcp_transport_error", is the code of [ErrTransportError].
	CodeTransportError = codes.TransportError
	// CodeUnauthorized, "mcp_unauthorized", is the code of [ErrUnauthorized]
	// (a purramcp addition).
	CodeUnauthorized = codes.Unauthorized
)

// Sentinels, one per code. Compare with errors.Is: any [*Error] with the same
// code matches. A sentinel is not an *Error and has no field to change, so no
// importer can make it match another code; the adapter returns fresh *Error
// values and never a sentinel itself.
var (
	// ErrAnnotationConflict reports a bound tool whose annotations do not
	// claim read-only when DiscoveryOptions.RequireReadOnlyHint is set.
	ErrAnnotationConflict error = sentinel(CodeAnnotationConflict)
	// ErrAuthDenied reports an authorization the user or the
	// authorization server denied, or whose answer failed the state or
	// issuer check. The ErrAuth* sentinels are the client side of MCP
	// authorization: a server's status, signing in, the token store; none
	// carries remote text, a token, a code, a verifier or a secret.
	ErrAuthDenied error = sentinel(CodeAuthDenied)
	// ErrAuthDiscoveryFailed reports resource or authorization server
	// metadata that could not be fetched, or was over its bounds,
	// insecure or inconsistent.
	ErrAuthDiscoveryFailed error = sentinel(CodeAuthDiscoveryFailed)
	// ErrAuthExpired reports an access token that expired and could not be
	// refreshed (no refresh token, or the authorization server refused
	// it); signing in again fixes it.
	ErrAuthExpired error = sentinel(CodeAuthExpired)
	// ErrAuthRegistrationFailed reports no client registration the
	// authorization server supports, or a refused registration.
	ErrAuthRegistrationFailed error = sentinel(CodeAuthRegistrationFailed)
	// ErrAuthRequired reports a server that needs OAuth with no usable
	// token stored for it; signing in fixes it.
	ErrAuthRequired error = sentinel(CodeAuthRequired)
	// ErrAuthStoreFailed reports a token store that could not be read or
	// written, or that is not its user's own.
	ErrAuthStoreFailed error = sentinel(CodeAuthStoreFailed)
	// ErrAuthTokenFailed reports a token endpoint that refused the code or
	// answered out of bounds.
	ErrAuthTokenFailed error = sentinel(CodeAuthTokenFailed)
	// ErrBindingInvalid reports invalid limits, options, server id or bindings.
	ErrBindingInvalid error = sentinel(CodeBindingInvalid)
	// ErrBindingMissing reports a bound remote tool the server never listed.
	ErrBindingMissing error = sentinel(CodeBindingMissing)
	// ErrCatalogLimitExceeded reports a catalog over a Limits bound.
	ErrCatalogLimitExceeded error = sentinel(CodeCatalogLimitExceeded)
	// ErrCatalogStale reports a tool list change since discovery began.
	ErrCatalogStale error = sentinel(CodeCatalogStale)
	// ErrCatalogUnapproved reports a catalog that DiscoveryOptions.Approve
	// rejected.
	ErrCatalogUnapproved error = sentinel(CodeCatalogUnapproved)
	// ErrConnectionClosed reports a closed monitor (the session ended).
	ErrConnectionClosed error = sentinel(CodeConnectionClosed)
	// ErrEgressRefused reports an HTTP request, redirect or connection that
	// would go where the configuration did not point: another origin, plain
	// http after https, or an address more internal than the configured MCP
	// server's (purramcp's HTTP clients, the fleet's).
	ErrEgressRefused error = sentinel(CodeEgressRefused)
	// ErrInvalidArguments reports arguments the input contract rejects.
	ErrInvalidArguments error = sentinel(CodeInvalidArguments)
	// ErrNameConflict reports a repeated local or remote tool name.
	ErrNameConflict error = sentinel(CodeNameConflict)
	// ErrNotInitialized reports a monitor that has accepted no protocol version.
	ErrNotInitialized error = sentinel(CodeNotInitialized)
	// ErrPaginationInvalid reports an empty, oversized or repeated cursor.
	ErrPaginationInvalid error = sentinel(CodePaginationInvalid)
	// ErrProtocolConflict reports a second, different version or session.
	ErrProtocolConflict error = sentinel(CodeProtocolConflict)
	// ErrProtocolError reports a JSON-RPC error answered by the server.
	ErrProtocolError error = sentinel(CodeProtocolError)
	// ErrProtocolUnsupported reports a negotiated version the adapter does not support.
	ErrProtocolUnsupported error = sentinel(CodeProtocolUnsupported)
	// ErrResultInvalid reports a result that fails decoding or the output contract.
	ErrResultInvalid error = sentinel(CodeResultInvalid)
	// ErrResultTooLarge reports a result over MaxContentBlocks or MaxResultBytes.
	ErrResultTooLarge error = sentinel(CodeResultTooLarge)
	// ErrResultUnsupported reports a non-text block or a request for more input.
	ErrResultUnsupported error = sentinel(CodeResultUnsupported)
	// ErrSchemaUnsupported reports a bound tool schema outside purra.output-schema/v1.
	ErrSchemaUnsupported error = sentinel(CodeSchemaUnsupported)
	// ErrScopeDenied reports a call the host scope denied with [Deny].
	ErrScopeDenied error = sentinel(CodeScopeDenied)
	// ErrTimeout reports a request that outlived Limits.Timeout.
	ErrTimeout error = sentinel(CodeTimeout)
	// ErrToolError reports a result the server flagged with isError.
	ErrToolError error = sentinel(CodeToolError)
	// ErrToolUnsupported reports a bound tool the adapter cannot call (tasks required).
	ErrToolUnsupported error = sentinel(CodeToolUnsupported)
	// ErrToolsUnavailable reports a server that advertises no tools capability.
	ErrToolsUnavailable error = sentinel(CodeToolsUnavailable)
	// ErrTransportError reports a closed or broken connection.
	ErrTransportError error = sentinel(CodeTransportError)
	// ErrUnauthorized reports a request the server refused for want of a
	// valid bearer token (HTTP 401). The host's own OAuth-aware
	// http.RoundTripper below a StreamableClientTransport reports it by
	// returning any error that errors.Is matches with it (an [*Error] with
	// this code, or the sentinel wrapped): the request ends with this code,
	// is never resent, and the session stays open.
	ErrUnauthorized error = sentinel(CodeUnauthorized)
)

// Contract error codes, the Code of a [ContractError]. They are the
// reference's codes and never change meaning; a host that validates a
// model's output with its own [Contract] compares ContractError.Code with
// them.
const (
	// CodeSchemaInvalid: NewContract rejected the options, the limits or
	// the schema (outside the profile, or over a schema limit).
	CodeSchemaInvalid = "structured_output_schema_invalid"
	// CodeModeUnsupported: NewContract got a Mode other than "",
	// ModeLocal and ModeNativeRequired.
	CodeModeUnsupported = "structured_output_mode_unsupported"
	// CodeInvalidJSON: Parse got text that is not strict JSON (bad syntax,
	// duplicate keys, lone surrogates, unsafe integers) or is over a value
	// limit, or ValidateValue got a value outside the JSON domain or limits.
	CodeInvalidJSON = "structured_output_invalid_json"
	// CodeSchemaMismatch: the value does not satisfy the schema.
	CodeSchemaMismatch = "structured_output_schema_mismatch"
	// CodeValidationLimitExceeded: validation ran out of its work budget,
	// ContractLimits.ValidationSteps.
	CodeValidationLimitExceeded = "structured_output_validation_limit_exceeded"
)

// The codes of an outcome that are not mcp_* codes, as [OutcomeCode] and
// [Event.Code] report them: they name the caller's cancellation and the
// host's own failure, not the boundary's, and carry no text of either.
const (
	// EventCodeCanceled is the code of [ErrCanceled]: the caller's ctx ended
	// the operation.
	EventCodeCanceled = "canceled"
	// CodeHostFailure is what an agent-framework integration shows a model when
	// the host's own [ScopeFunc] failed (Run returned an error other than
	// [ErrCanceled]) and the framework would otherwise put the Go error's text in
	// front of the model. It is deliberately outside the mcp_* set: it names the
	// host's failure, not the boundary's, and carries no text of either.
	CodeHostFailure = "host_failure"
)

// ErrCanceled is returned when the caller's context ends. It is one value;
// errors.Is(err, context.Canceled) also holds for it. CodeOf reports "" for it.
var ErrCanceled error = canceledError{}

// An Error is an adapter failure identified by its code, one of the mcp_*
// codes that the sentinels in this package carry. It holds no remote text and
// wraps nothing, so no SDK error or server message can be reached from it.
type Error struct {
	// Code is the mcp_* error code.
	Code string
}

// Error returns a fixed text followed by the code; never remote text.
func (e *Error) Error() string {
	return "purramcp: MCP tool boundary rejected the operation: " + e.Code
}

// Is reports whether target is an *Error or a sentinel with the same code.
// A nil *Error matches nothing, and a nil *Error target is matched by nothing.
func (e *Error) Is(target error) bool {
	if e == nil {
		return false
	}
	switch t := target.(type) {
	case sentinel:
		return string(t) == e.Code
	case *Error:
		return t != nil && t.Code == e.Code
	}
	return false
}

// A DiscoveryError is a discovery failure that one bound tool or one
// catalog-wide limit caused, for the host to see which and why (never for a
// model): a schema outside the profile ([ErrSchemaUnsupported]), a
// description or schema over its limit ([ErrCatalogLimitExceeded]), a bound
// remote name listed twice ([ErrNameConflict], Keyword "name"), a tool
// without the read-only hint RequireReadOnlyHint asks for
// ([ErrAnnotationConflict], Keyword "readOnlyHint"), a bound name never
// listed ([ErrBindingMissing], only RemoteName set), or the listing over
// MaxPages, MaxTools or MaxCatalogBytes ([ErrCatalogLimitExceeded],
// RemoteName "", Path "$", Keyword the Limits field). For a tool, Code,
// Schema, Path and Keyword are what [InspectTool]'s [ToolReport] gives for
// the same tool, limits and policy. DiscoverTools and [InspectCatalog]
// return it as the error itself, so errors.As(err, &d) finds it.
//
// Error returns exactly the fixed text of an [*Error] with the same code, and
// errors.Is, Unwrap and [CodeOf] treat it as that *Error, so code-based
// handling is unchanged. RemoteName is the host's bound name, but Path and
// Keyword may hold the server's own text (property and keyword names): like
// a ToolReport they are for the host's operators, read through errors.As;
// Error() and every fmt verb show none of it.
type DiscoveryError struct {
	// Code is the mcp_* code discovery failed with.
	Code string
	// RemoteName is the bound remote tool name, "" for a catalog-wide
	// limit.
	RemoteName string
	// Schema is "inputSchema" or "outputSchema" when a schema is the
	// reason, else "".
	Schema string
	// Path is the JSON path of the failing node inside Schema ("$" for the
	// root, "$.properties.q" below it); "$" for a limit, the name or the
	// hint; "" for a missing binding.
	Path string
	// Keyword is the failing schema keyword, for a limit the name of the
	// Limits field ("MaxDescriptionBytes", "MaxPages"), "name" or
	// "readOnlyHint".
	Keyword string
}

// Error returns the fixed text of an [*Error] with the same code: no remote
// text, no name, path or keyword.
func (e *DiscoveryError) Error() string { return (&Error{Code: e.Code}).Error() }

// Format writes Error()'s fixed text for every verb, %+v and %#v included,
// so that formatting the error (a log line, a message that may reach a
// model) never shows its fields: they are for the host's code, through
// errors.As.
func (e *DiscoveryError) Format(f fmt.State, _ rune) {
	if e == nil {
		_, _ = io.WriteString(f, "<nil>")
		return
	}
	_, _ = io.WriteString(f, e.Error())
}

// Is reports whether target is an *Error or a sentinel with the same code,
// as [Error.Is] does.
func (e *DiscoveryError) Is(target error) bool {
	return e != nil && (&Error{Code: e.Code}).Is(target)
}

// Unwrap returns a fresh [*Error] with the same code, so errors.As finds an
// *Error in a DiscoveryError as before it existed.
func (e *DiscoveryError) Unwrap() error {
	if e == nil {
		return nil
	}
	return &Error{Code: e.Code}
}

// sentinel is the type of the Err* code sentinels: a code and nothing else.
type sentinel string

// Error returns the same text as an *Error with this code.
func (s sentinel) Error() string { return (&Error{Code: string(s)}).Error() }

// Is reports whether target is an *Error with this code, so
// errors.Is(ErrX, &Error{Code: CodeX}) holds as the reverse does.
func (s sentinel) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == string(s)
}

// CodeOf returns the code of the first *Error, sentinel or *ContractError in
// err's chain, found with errors.As, or "" when there is none (including for
// [ErrCanceled] and nil).
func CodeOf(err error) string {
	var s sentinel
	if errors.As(err, &s) {
		return string(s)
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Code
	}
	var c *ContractError
	if errors.As(err, &c) && c != nil {
		return c.Code
	}
	return ""
}

// OutcomeCode folds Run's two failure channels into the one code every
// consumer reports (the audit [Event], the gateway, the integrations): ""
// for a success, res.ErrorCode for a known failure, [EventCodeCanceled] for
// [ErrCanceled], the code of an adapter failure ([CodeOf]), and
// [CodeHostFailure] for any other error (a ScopeFunc's own). With a zero res
// it is the code of a discovery's or a monitor's error.
func OutcomeCode(res ToolResult, err error) string {
	switch {
	case err == nil:
		return res.ErrorCode
	case errors.Is(err, ErrCanceled):
		return EventCodeCanceled
	}
	if code := CodeOf(err); code != "" {
		return code
	}
	return CodeHostFailure
}

// fail returns a fresh *Error with code, so no caller can change a sentinel.
func fail(code string) error { return &Error{Code: code} }

// canceledError is the type of ErrCanceled.
type canceledError struct{}

// Error returns the fixed cancellation text.
func (canceledError) Error() string { return "purramcp: operation canceled" }

// Is makes errors.Is(ErrCanceled, context.Canceled) hold.
func (canceledError) Is(target error) bool { return target == context.Canceled }
