package purramcp

import (
	"context"
	"errors"
)

// Error codes, one per failure the adapter reports (adapter.md §3, §4, §6).
// Each has an exported sentinel below; style.md N2 keeps them in one sorted block.
const (
	codeBindingInvalid       = "mcp_binding_invalid"
	codeBindingMissing       = "mcp_binding_missing"
	codeCatalogLimitExceeded = "mcp_catalog_limit_exceeded"
	codeCatalogStale         = "mcp_catalog_stale"
	codeConnectionClosed     = "mcp_connection_closed"
	codeInvalidArguments     = "mcp_invalid_arguments"
	codeNameConflict         = "mcp_name_conflict"
	codeNotInitialized       = "mcp_not_initialized"
	codePaginationInvalid    = "mcp_pagination_invalid"
	codeProtocolConflict     = "mcp_protocol_conflict"
	codeProtocolError        = "mcp_protocol_error"
	codeProtocolUnsupported  = "mcp_protocol_unsupported"
	codeResultInvalid        = "mcp_result_invalid"
	codeResultTooLarge       = "mcp_result_too_large"
	codeResultUnsupported    = "mcp_result_unsupported"
	codeSchemaUnsupported    = "mcp_schema_unsupported"
	codeScopeDenied          = "mcp_scope_denied"
	codeTimeout              = "mcp_timeout"
	codeToolError            = "mcp_tool_error"
	codeToolUnsupported      = "mcp_tool_unsupported"
	codeToolsUnavailable     = "mcp_tools_unavailable"
	codeTransportError       = "mcp_transport_error"
)

// Sentinels, one per code. Compare with errors.Is: any *Error with the same
// code matches, so the adapter returns fresh values and never these pointers.
var (
	// ErrBindingInvalid reports invalid limits, options, server id or bindings.
	ErrBindingInvalid = &Error{Code: codeBindingInvalid}
	// ErrBindingMissing reports a bound remote tool the server never listed.
	ErrBindingMissing = &Error{Code: codeBindingMissing}
	// ErrCatalogLimitExceeded reports a catalog over a Limits bound.
	ErrCatalogLimitExceeded = &Error{Code: codeCatalogLimitExceeded}
	// ErrCatalogStale reports a tool list change since discovery began.
	ErrCatalogStale = &Error{Code: codeCatalogStale}
	// ErrConnectionClosed reports a closed monitor (the session ended).
	ErrConnectionClosed = &Error{Code: codeConnectionClosed}
	// ErrInvalidArguments reports arguments the input contract rejects.
	ErrInvalidArguments = &Error{Code: codeInvalidArguments}
	// ErrNameConflict reports a repeated local or remote tool name.
	ErrNameConflict = &Error{Code: codeNameConflict}
	// ErrNotInitialized reports a monitor that has accepted no protocol version.
	ErrNotInitialized = &Error{Code: codeNotInitialized}
	// ErrPaginationInvalid reports an empty, oversized or repeated cursor.
	ErrPaginationInvalid = &Error{Code: codePaginationInvalid}
	// ErrProtocolConflict reports a second, different version or session.
	ErrProtocolConflict = &Error{Code: codeProtocolConflict}
	// ErrProtocolError reports a JSON-RPC error answered by the server.
	ErrProtocolError = &Error{Code: codeProtocolError}
	// ErrProtocolUnsupported reports a negotiated version the adapter does not support.
	ErrProtocolUnsupported = &Error{Code: codeProtocolUnsupported}
	// ErrResultInvalid reports a result that fails decoding or the output contract.
	ErrResultInvalid = &Error{Code: codeResultInvalid}
	// ErrResultTooLarge reports a result over MaxContentBlocks or MaxResultBytes.
	ErrResultTooLarge = &Error{Code: codeResultTooLarge}
	// ErrResultUnsupported reports a non-text block or a request for more input.
	ErrResultUnsupported = &Error{Code: codeResultUnsupported}
	// ErrSchemaUnsupported reports a bound tool schema outside purra.output-schema/v1.
	ErrSchemaUnsupported = &Error{Code: codeSchemaUnsupported}
	// ErrScopeDenied reports a call the host scope denied with [Deny].
	ErrScopeDenied = &Error{Code: codeScopeDenied}
	// ErrTimeout reports a request that outlived Limits.Timeout.
	ErrTimeout = &Error{Code: codeTimeout}
	// ErrToolError reports a result the server flagged with isError.
	ErrToolError = &Error{Code: codeToolError}
	// ErrToolUnsupported reports a bound tool the adapter cannot call (tasks required).
	ErrToolUnsupported = &Error{Code: codeToolUnsupported}
	// ErrToolsUnavailable reports a server that advertises no tools capability.
	ErrToolsUnavailable = &Error{Code: codeToolsUnavailable}
	// ErrTransportError reports a closed or broken connection.
	ErrTransportError = &Error{Code: codeTransportError}
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

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && e != nil && t.Code == e.Code
}

// CodeOf returns the code of the first *Error or *ContractError in err's
// chain, found with errors.As, or "" when there is none (including for
// [ErrCanceled] and nil).
func CodeOf(err error) string {
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

// fail returns a fresh *Error with code, so no caller can change a sentinel.
func fail(code string) error { return &Error{Code: code} }

// canceledError is the type of ErrCanceled.
type canceledError struct{}

// Error returns the fixed cancellation text.
func (canceledError) Error() string { return "purramcp: operation canceled" }

// Is makes errors.Is(ErrCanceled, context.Canceled) hold.
func (canceledError) Is(target error) bool { return target == context.Canceled }
