// Package codes is the one table of the adapter's mcp_* error codes
// (adapter.md §4). The root package exports each as its Code* constant,
// beside its sentinel, in errors.go; the bounding layer fails with the same
// constants. No other non-test Go file of the module spells an mcp_*
// code.
package codes

// The mcp_* codes, sorted. Each is exported by the root package as
// Code<Name> with the sentinel Err<Name>.
const (
	AnnotationConflict     = "mcp_annotation_conflict"
	AuthDenied             = "mcp_auth_denied"
	AuthDiscoveryFailed    = "mcp_auth_discovery_failed"
	AuthExpired            = "mcp_auth_expired"
	AuthRegistrationFailed = "mcp_auth_registration_failed"
	AuthRequired           = "mcp_auth_required"
	AuthStoreFailed        = "mcp_auth_store_failed"
	AuthTokenFailed        = "mcp_auth_token_failed"
	BindingInvalid         = "mcp_binding_invalid"
	BindingMissing         = "mcp_binding_missing"
	CatalogLimitExceeded   = "mcp_catalog_limit_exceeded"
	CatalogStale           = "mcp_catalog_stale"
	CatalogUnapproved      = "mcp_catalog_unapproved"
	ConnectionClosed       = "mcp_connection_closed"
	EgressRefused          = "mcp_egress_refused"
	InvalidArguments       = "mcp_invalid_arguments"
	NameConflict           = "mcp_name_conflict"
	NotInitialized         = "mcp_not_initialized"
	PaginationInvalid      = "mcp_pagination_invalid"
	ProtocolConflict       = "mcp_protocol_conflict"
	ProtocolError          = "mcp_protocol_error"
	ProtocolUnsupported    = "mcp_protocol_unsupported"
	ResultInvalid          = "mcp_result_invalid"
	ResultTooLarge         = "mcp_result_too_large"
	ResultUnsupported      = "mcp_result_unsupported"
	SchemaUnsupported      = "mcp_schema_unsupported"
	ScopeDenied            = "mcp_scope_denied"
	Timeout                = "mcp_timeout"
	ToolError              = "mcp_tool_error"
	ToolUnsupported        = "mcp_tool_unsupported"
	ToolsUnavailable       = "mcp_tools_unavailable"
	TransportError         = "mcp_transport_error"
	Unauthorized           = "mcp_unauthorized"
)
