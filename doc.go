// Package purramcp lets a Go agent host expose an explicit allowlist of tools
// from an MCP server, reached with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), as read-only tool registrations
// for a Go agent core or an agent framework (nested modules under
// integrations/ adapt them to ADK-Go, Eino and the Anthropic and OpenAI
// SDKs). It mirrors the TypeScript package purra-mcp
// 1.0.0: for the same catalog and negotiated protocol version the snapshot's
// revisionDigest is the same bit for bit, and every failure carries the same
// error code.
//
// Discovery pages tools/list under limits, binds each allowed remote tool to
// a local name, compiles its schemas under the strict purra.output-schema/v1
// profile and returns an immutable [Catalog]: a [Snapshot] whose digest is
// the purra.json-identity/v1 digest of its entries, and one [ToolDefinition]
// per binding, whose Run validates arguments, asks the host's scope, sends one
// tools/call and converts the result into an [Envelope].
//
// # Wiring with go-sdk
//
// The host owns the client, the session, the transport, credentials and
// shutdown; the adapter only sends tools/list and tools/call requests.
//
//	monitor := purramcp.NewCatalogMonitor()
//	impl := &mcp.Implementation{Name: "host", Version: "1"}
//	client := monitor.NewClient(impl, nil) // nil or the host's own *mcp.ClientOptions
//	session, err := monitor.Connect(ctx, client, transport, nil) // Transport, client.Connect, Attach
//	if err != nil { ... }
//	defer session.Close()
//	catalog, err := purramcp.DiscoverTools(ctx, session, "documents",
//		map[string]purramcp.ToolBinding{"remote.search": {
//			LocalName: "search_documents",
//			Policy:    purramcp.ToolPolicy{Mode: "read", Title: "Search documents"},
//			Scope:     purramcp.Unscoped,
//		}}, purramcp.DiscoveryOptions{Monitor: monitor, StaleRetries: 2})
//
// [CatalogMonitor.NewClient] builds the client with the monitor's options;
// [CatalogMonitor.Connect] wraps the transport in the monitor's bounding
// layer ([CatalogMonitor.Transport]), connects and attaches
// ([CatalogMonitor.Attach] says which mis-wired sessions fail).
//
// A list change makes the catalog stale for good ([Catalog.Stale]; every Run
// then fails mcp_catalog_stale without a request): discover again and swap
// catalogs at a safe boundary. When a session ends, close it, connect a new
// client and session with a new monitor, and discover again; transport
// recovery never authorizes new tools.
//
// # Error codes
//
// Every failure is an [*Error] whose Code is one of the mcp_* codes (one
// sentinel each, such as [ErrCatalogStale]; compare with errors.Is or
// [CodeOf]), or [ErrCanceled] when the caller's context ends. Run reports
// known failures as a [ToolResult] with ErrorCode set and the empty envelope
// {"text":[],"structured":null}; it returns an error only for ErrCanceled or
// a failing host [ScopeFunc]. No error text, envelope or code ever holds
// remote text. A discovery failure that one bound tool or one catalog-wide
// limit caused is a [*DiscoveryError]: the same text and code, plus the
// tool, schema, path and keyword (or the Limits field) for the host's
// operators (errors.As).
//
// # Limits
//
// [Limits] bounds pages, tools, catalog bytes, schema bytes, description
// bytes, result bytes, content blocks and the per-request timeout; see
// [DefaultLimits]. A zero field means its default; limits can only be
// lowered, except Timeout (up to 5m). Bytes are counted as JavaScript's
// JSON.stringify counts them (UTF-8) over the value go-sdk decoded.
//
// # Concurrency
//
// [CatalogMonitor], [Catalog.Stale], and every registration's Scope and Run
// are safe for concurrent use. ConcurrencySafe records the host's declaration
// and schedules nothing. The monitor's Attach starts one goroutine that ends
// with the session. [CatalogMonitor.Transport] states on which goroutine
// each tools/list and tools/call request runs, and the one goroutine that
// may outlive a call.
//
// # Running it in production
//
// Every control below is opt-in and never widens what is bound or
// validated: [DiscoveryOptions].Approve with [PinDigests] (a changed catalog
// fails mcp_catalog_unapproved until a human reviews [DiffSnapshots] and
// re-approves), Observer with [SlogObserver] (one audit [Event] per
// discovery attempt and per call, never a payload or remote text),
// StaleRetries (a discovery a tool list change interrupts starts over before
// it returns; nothing is rediscovered afterwards), RequireReadOnlyHint
// (mcp_annotation_conflict for a bound tool that does not claim read-only),
// and [Merge] for the registrations of many servers (mcp_name_conflict on a
// shadowed local name). TracePropagator sends the caller's W3C trace
// context in each tools/call's _meta; [CatalogMonitor.AcceptLegacyProtocols]
// admits servers that negotiate 2024-11-05 or 2025-03-26; a
// [*DiscoveryError] tells the host which bound tool or limit failed
// discovery and why.
//
// # Differences from purra-mcp 1.0.0
//
// This is the one list of what differs from the TypeScript package; the
// README points here.
//
//   - ctx replaces AbortSignal and [ErrCanceled] replaces AgentCanceledError.
//     go-sdk sends notifications/cancelled on cancellation, best effort; that
//     does not prove the remote work stopped.
//   - Bindings need a Scope; [Unscoped] replaces a null scope. A [ScopeFunc]
//     returns nil (allow), an error from [Deny] (deny, whatever the reason
//     text, even blank) or any other error (a host failure, returned
//     unchanged), in place of TypeScript's false/non-blank-string decisions.
//     When Run returns an error (ErrCanceled or a host failure) its
//     [ToolResult] is the zero value, as TypeScript throws there; every result
//     it returns has EffectState "not_started".
//   - Run takes the arguments as JSON text and parses them strictly (duplicate
//     keys, lone surrogates and unsafe integers are rejected before the input
//     contract sees them); empty (nil) arguments mean {}.
//   - [Limits] and [ContractLimits] use Go zero values for "default", so a zero
//     limit cannot be requested (TypeScript rejects an explicit 0).
//   - Titles must be valid UTF-8.
//   - go-sdk does not order notification handling against responses, so a
//     list change racing a discovery may make the catalog stale just after
//     DiscoverTools returns rather than failing it. Either way the catalog
//     ends up stale.
//   - go-sdk decodes results itself: lone surrogates become U+FFFD, the last
//     duplicate key wins, execution.taskSupport is dropped (so
//     mcp_tool_unsupported cannot be seen), tools with invalid x-mcp-header
//     annotations are dropped (a bound one then fails mcp_binding_missing),
//     and a tool whose schema is not an object only fails when it is bound
//     (mcp_schema_unsupported). Byte counts are JavaScript JSON.stringify
//     lengths of the re-encoded, decoded values.
//   - A present but empty nextCursor ends paging: go-sdk decodes it exactly
//     like an absent one, so TypeScript's mcp_pagination_invalid for "" cannot
//     be reproduced. Over-long (over 512 bytes) and repeated cursors still fail.
//   - Protocol 2026-07-28 is supported (TypeScript 1.0.0 predates it). Under
//     it go-sdk may answer tools/list from its TTL cache until a list change
//     invalidates it, and go-sdk servers add resultType and _meta.serverInfo
//     to every result; those bytes count towards MaxCatalogBytes and
//     MaxResultBytes.
//   - A monitor serves one session: attaching a second fails
//     mcp_protocol_conflict, as does discovering over a session whose
//     negotiated version differs from the monitor's. A monitor attached to
//     another session fails discovery with mcp_binding_invalid.
//   - go-sdk decode failures without a sentinel (unknown content types, wrong
//     field types) map to mcp_result_invalid; broken connections (including
//     an in-flight EOF and JSON-RPC -32005) to mcp_transport_error.
//   - Everything purramcp adds is opt-in and leaves the reference behaviour,
//     the codes and the digests unchanged at its zero value: schema policies,
//     inspection, the exported Code constants, the bounding layer
//     ([CatalogMonitor.Transport]), and the production controls
//     of [DiscoveryOptions] (Approve, StaleRetries, RequireReadOnlyHint,
//     Observer) with their codes mcp_catalog_unapproved and
//     mcp_annotation_conflict, [PinDigests], [DiffSnapshots],
//     [SlogObserver], [Merge] and [Catalog.Registration].
//
// # Schema policies and inspection
//
// [DiscoveryOptions].Policy is the zero [SchemaPolicy] unless the host opts
// in: DialectEquivalence accepts draft-07 and 2019-09 root declarations,
// Annotations accepts non-asserting keywords (default, examples, format, …)
// and ExtendedKeywords accepts exclusive bounds, propertyNames, a schema
// as additionalProperties, pattern (ECMA-262 patterns with an exact Go
// translation only) and local $defs/$ref, each asserted by purramcp itself
// under the validation budget. None weakens what is validated, and the
// default is the reference behaviour exactly. [InspectTool] and [InspectCatalog] report, per remote
// tool, whether it binds, the schema path and keyword that stop it, and the
// wider policy that would bind it.
package purramcp
