package purramcp

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/bounding"
	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/wire"
)

// DiscoveryOptions configures DiscoverTools.
type DiscoveryOptions struct {
	// Monitor follows the session; required.
	Monitor *CatalogMonitor
	// Limits bounds discovery and every call; zero fields take defaults.
	Limits Limits
	// Policy widens which remote schemas bind; the zero value is the
	// reference behaviour. See SchemaPolicy.
	Policy SchemaPolicy

	// The fields below are purramcp additions; each is opt-in and its zero
	// value leaves discovery and every call exactly as purra-mcp 1.0.0 does.

	// Approve, when set, is called once per attempt that passed every other
	// check, after the final monitor check and before DiscoverTools returns,
	// with its own deep copy of the finished snapshot (digest included),
	// under the caller's ctx. A non-nil error, whatever it is, fails the
	// discovery with a fresh [ErrCatalogUnapproved] that neither wraps nor
	// shows it, and no catalog. When ctx has ended before or while it runs
	// the discovery fails [ErrCanceled]; a tool list change while it runs
	// counts as a change during discovery (see StaleRetries), whatever it
	// returned. With StaleRetries it may run once per attempt. A panic in it
	// is not recovered. [PinDigests] builds one.
	Approve func(ctx context.Context, snapshot Snapshot) error
	// StaleRetries is how many more times, 0 to 8, a discovery starts over
	// from the first page when a tool list change arrives while it is in
	// progress (from its first request to its return, the approver
	// included); after that it fails [ErrCatalogStale]. Every other failure,
	// a canceled ctx included, is returned at once, and nothing is ever
	// rediscovered after DiscoverTools returns. Outside 0..8 discovery fails
	// [ErrBindingInvalid] before any request.
	StaleRetries int
	// RequireReadOnlyHint requires every bound tool to carry annotations
	// with readOnlyHint true and without destructiveHint true, else the
	// discovery fails [ErrAnnotationConflict]. It is checked for each bound
	// tool after its schemas compile, so a schema fault keeps its own code.
	// It only narrows: annotations never grant anything, and they are never
	// part of the snapshot or its digest.
	RequireReadOnlyHint bool
	// Observer, when set, is called synchronously with one [Event] per
	// discovery attempt, when the attempt ends (also for a DiscoverTools
	// call refused before any request, as attempt 1), and with one per Run
	// of the catalog's registrations, when Run's outcome is known. It gets
	// the caller's ctx. Runs may be concurrent, so it must be safe for
	// concurrent use. Events carry no payload and no remote text. A panic
	// in the Observer is not recovered: it propagates to the caller of
	// DiscoverTools or Run, as a panic in a ScopeFunc does, after the
	// attempt or the call has ended (the catalog or the result is then
	// lost; nothing is left running). [SlogObserver] builds one.
	Observer func(context.Context, Event)
	// CallStart, when set together with Observer, is called synchronously
	// at the start of each Run, before its arguments are checked and before
	// any request is written, with an Event of Kind [EventCallStart] that
	// carries the call's identity (ServerID, RevisionDigest, LocalName,
	// RemoteName, CallID, RunID, ProtocolVersion, Transport, Start) and no
	// outcome. The ctx it returns, which should be derived from the ctx it
	// got (nil means that ctx), is the one the TracePropagator reads for the
	// call's tools/call and the one the Observer gets with the call's end
	// Event; the Run's cancellation, deadline and ScopeFunc keep the
	// caller's ctx. A tracer starts the call's span here, so that the
	// trace context the request carries names it. Without an Observer it is
	// never called, so nothing started in it is left open. A panic in it
	// propagates to the caller of Run, before any request. It must be safe
	// for concurrent use.
	CallStart func(context.Context, Event) context.Context
	// TracePropagator, when set, puts the trace context of each Run's ctx
	// into the _meta of its tools/call request (SEP-414): the traceparent
	// it writes, when well-formed (W3C Trace Context), and beside it a
	// printable tracestate of at most 512 bytes; anything else it writes is
	// dropped, and with nothing valid the request carries no _meta. nil, the
	// default, sends no _meta at all, exactly as purra-mcp 1.0.0. It touches
	// neither the arguments, their validation nor any digest, and is never
	// used for tools/list.
	TracePropagator TracePropagator
}

// DiscoverTools lists the session's tools page by page and binds the tools
// named in bindings (keyed by remote name). The first failure wins, in this
// order, and nothing is sent before step 4:
//
//  1. opts.Limits must be valid, then session, opts.Monitor and bindings
//     non-nil, serverID ^[A-Za-z0-9_.-]{1,128}$ and the monitor not attached
//     to another session: else [ErrBindingInvalid];
//  2. each binding, in sorted remote-name order, must be valid (see
//     [ToolBinding]; else [ErrBindingInvalid]) with a local name not used
//     before ([ErrNameConflict]); there must be 1 to Limits.MaxTools of
//     them ([ErrBindingInvalid]);
//  3. the monitor must be open ([ErrConnectionClosed]), hold a version
//     ([ErrNotInitialized]) and see no list change ([ErrCatalogStale]); the
//     session must have negotiated the monitor's version
//     ([ErrProtocolConflict]) with a server that advertises tools
//     ([ErrToolsUnavailable]);
//  4. tools/list is sent page by page, at most Limits.MaxPages requests,
//     each bounded by Limits.Timeout and failing as a tools/call does (see
//     [ToolDefinition].Run). Around each request the monitor is checked
//     again and no request is sent once ctx has ended. The tools counted
//     across pages must stay within Limits.MaxTools and the pages' JSON
//     within Limits.MaxCatalogBytes ([ErrCatalogLimitExceeded]); a remote
//     name seen before fails [ErrNameConflict]; an over-long (512 bytes)
//     or repeated cursor fails [ErrPaginationInvalid], running out of pages
//     [ErrCatalogLimitExceeded]. Each bound tool is checked as it is
//     listed: its description within Limits.MaxDescriptionBytes
//     ([ErrCatalogLimitExceeded]) and both schemas within
//     Limits.MaxSchemaBytes and the purra.output-schema/v1 profile (widened
//     only by opts.Policy; else [ErrSchemaUnsupported]). Unbound tools are
//     never compiled;
//  5. every binding must have been listed ([ErrBindingMissing]), the
//     digest computed ([ErrCatalogLimitExceeded]) and, last, the monitor
//     must still see no list change ([ErrCatalogStale]).
//
// It returns only [*Error] values or [ErrCanceled] (when ctx ends), never an
// SDK error or remote text. A failure one bound tool caused (its schema, its
// description or schema size, its name listed twice, a missing binding, a
// missing read-only hint) is a [*DiscoveryError] naming the tool, schema,
// path and keyword for the host, and so is a catalog-wide limit (MaxPages,
// MaxTools, MaxCatalogBytes, the bounding layer's cap on a page included),
// with the Limits field as Keyword and no tool; it has the same Error()
// text and code as the *Error it unwraps to.
//
// With the purramcp options of DiscoveryOptions set it may also fail
// [ErrCatalogUnapproved] (Approve) or [ErrAnnotationConflict]
// (RequireReadOnlyHint), retry after a list change (StaleRetries) and report
// each attempt to the Observer.
//
// bindings is copied; changing it later changes nothing. DiscoverTools never
// closes the session, which the host owns. Each request is bounded by
// Limits.Timeout.
func DiscoverTools(ctx context.Context, session *mcp.ClientSession, serverID string,
	bindings map[string]ToolBinding, opts DiscoveryOptions) (*Catalog, error) {
	start := time.Now()
	d, err := newDiscovery(session, serverID, bindings, opts)
	if err != nil {
		observeRefusal(ctx, opts.Observer, opts.Monitor, serverID, err, start)
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		catalog, err := d.attempt(ctx, attempt)
		if CodeOf(err) != CodeCatalogStale || attempt > opts.StaleRetries || ctx.Err() != nil {
			return catalog, err
		}
	}
}

// newDiscovery runs steps 1 and 2 of DiscoverTools (and checks the purramcp
// options):
// everything that is decided before any request and never retried.
func newDiscovery(session *mcp.ClientSession, serverID string, bindings map[string]ToolBinding,
	opts DiscoveryOptions) (*discovery, error) {
	limits, err := opts.Limits.resolve()
	if err != nil {
		return nil, err
	}
	m := opts.Monitor
	if session == nil || m == nil || !remoteNamePattern.MatchString(serverID) || bindings == nil ||
		m.attachedElsewhere(session) || !validStaleRetries(opts.StaleRetries) {
		return nil, fail(CodeBindingInvalid)
	}
	copied, err := copyBindings(bindings, limits.MaxTools)
	if err != nil {
		return nil, err
	}
	return &discovery{session: session, serverID: serverID, monitor: m, limits: limits, policy: opts.Policy,
		bindings: copied, opts: opts}, nil
}

// discovery is the state of one DiscoverTools call. revision, protocol,
// envelope, found and pages belong to the current attempt.
type discovery struct {
	session  *mcp.ClientSession
	serverID string
	monitor  *CatalogMonitor
	revision uint64
	protocol string
	limits   Limits
	policy   SchemaPolicy
	opts     DiscoveryOptions
	envelope *Contract
	bindings map[string]*binding
	found    map[string]*catalogTool
	pages    int // tools/list requests sent by the current attempt
}

// maxStaleRetries bounds DiscoveryOptions.StaleRetries: nine attempts at
// most, each bounded by the limits, so a server that keeps announcing
// changes costs a bounded number of listings.
const maxStaleRetries = 8

// validStaleRetries reports whether n is a valid DiscoveryOptions.StaleRetries.
func validStaleRetries(n int) bool { return n >= 0 && n <= maxStaleRetries }

// attempt is one discovery from the first page to the digest, then
// the approver and the check that no list change arrived meanwhile. It
// reports itself to the Observer. Every mcp_catalog_stale it returns means a
// tool list change arrived after the attempt read the revision, so
// DiscoverTools may start over.
func (d *discovery) attempt(ctx context.Context, n int) (*Catalog, error) {
	start := time.Now()
	d.found, d.pages = map[string]*catalogTool{}, 0
	catalog, err := d.discover(ctx)
	digest := ""
	if catalog != nil {
		digest = catalog.digest
		if err != nil {
			catalog = nil // built, then refused: the caller never gets it
		}
	}
	if d.opts.Observer != nil {
		d.opts.Observer(ctx, Event{Kind: EventDiscover, ServerID: d.serverID, RevisionDigest: digest,
			Code: OutcomeCode(ToolResult{}, err), Attempt: n, Pages: d.pages, Duration: time.Since(start),
			ProtocolVersion: d.monitor.ProtocolVersion(), Transport: d.monitor.transport(), Start: start})
	}
	return catalog, err
}

// discover runs the attempt's steps. Once the catalog is built it is
// returned even with an error, so that the attempt's event carries its
// digest.
func (d *discovery) discover(ctx context.Context) (*Catalog, error) {
	if err := d.preflight(); err != nil {
		return nil, err
	}
	if err := listPages(ctx, d.session, d.monitor, d.revision, d.limits, &d.pages, d.visit); err != nil {
		return nil, err
	}
	catalog, err := d.catalog(d.serverID)
	if err != nil {
		return nil, err
	}
	if err := d.monitor.Check(d.revision); err != nil { // the final check: a list change meanwhile
		return catalog, err
	}
	if d.opts.Approve == nil {
		return catalog, nil
	}
	return catalog, d.approve(ctx, catalog)
}

// preflight runs step 3 of DiscoverTools: monitor, version, tools capability and the
// envelope contract, all before any request.
func (d *discovery) preflight() error {
	d.revision = d.monitor.Revision()
	if err := d.monitor.Check(d.revision); err != nil {
		return err
	}
	d.protocol = d.monitor.ProtocolVersion()
	init := d.session.InitializeResult()
	if init == nil {
		return fail(CodeNotInitialized) // unreachable after a successful Connect
	}
	if init.ProtocolVersion != d.protocol {
		return fail(CodeProtocolConflict)
	}
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return fail(CodeToolsUnavailable)
	}
	envelope, err := newRemoteContract(map[string]any{"type": "object"}, d.limits, profile.Options{})
	if err != nil {
		return fail(CodeSchemaUnsupported) // unreachable: {"type":"object"} fits every limit
	}
	d.envelope = envelope
	return nil
}

// listPages pages tools/list for discovery and the
// inspector alike. Before each page: the monitor check, then ctx (no request
// once it has ended); after it: the monitor check again, the catalog byte and
// tool totals, then each tool in order: visit gets the tool, its schema
// sizes and whether its remote name was seen before (visit must then fail
// mcp_name_conflict). An empty
// cursor ends paging; an oversized or repeated one fails; so does running
// out of pages. Pages may be shared with go-sdk's cache: read only.
//
// sent, when not nil, counts the tools/list requests sent.
func listPages(ctx context.Context, session *mcp.ClientSession, m *CatalogMonitor, revision uint64,
	lim Limits, sent *int, visit func(tool *mcp.Tool, schemaSizes [2]int, repeated bool) error) error {
	seen, cursors := map[string]bool{}, map[string]bool{}
	total, cursor := 0, ""
	for range lim.MaxPages {
		if err := m.Check(revision); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ErrCanceled // no request is sent once ctx has ended
		}
		if sent != nil {
			*sent++
		}
		result, err := bounded(ctx, lim.Timeout, m, bounding.ToolsCap(lim.MaxCatalogBytes-total, lim.MaxTools-len(seen)), func(ctx context.Context) (*mcp.ListToolsResult, error) {
			// Fresh params per request (go-sdk writes _meta into
			// them); the first request carries none, so no cursor.
			var params *mcp.ListToolsParams
			if cursor != "" {
				params = &mcp.ListToolsParams{Cursor: cursor}
			}
			return session.ListTools(ctx, params)
		})
		if err != nil {
			return err
		}
		if err := m.Check(revision); err != nil {
			return err
		}
		n, schemaSizes, err := pageCost(result, len(seen), total, lim)
		if err != nil {
			return err
		}
		total += n
		for i, tool := range result.Tools {
			if tool == nil {
				continue // unreachable: go-sdk drops null tools
			}
			repeated := seen[tool.Name]
			seen[tool.Name] = true
			if err := visit(tool, schemaSizes[i], repeated); err != nil {
				return err
			}
		}
		next := result.NextCursor
		if next == "" {
			return nil
		}
		// An oversized or repeated cursor fails: a server cannot loop discovery.
		if len(next) > maxCursorBytes || cursors[next] {
			return fail(CodePaginationInvalid)
		}
		cursors[next] = true
		cursor = next
	}
	return catalogLimit("MaxPages") // pages exhausted
}

// catalogLimit is the failure of a catalog-wide limit: a [*DiscoveryError]
// with no RemoteName, Path "$" and the Limits field as Keyword
// ("MaxPages", "MaxTools" or "MaxCatalogBytes").
func catalogLimit(field string) error {
	return &DiscoveryError{Code: CodeCatalogLimitExceeded, Path: "$", Keyword: field}
}

// pageCost checks one page against the tools seen and the catalog bytes
// counted so far: the tool count first, then the size, counted only up to
// the bytes left; either over fails mcp_catalog_limit_exceeded. It returns
// the page's size and its tools' schema sizes. A page that cannot be
// measured counts as over MaxCatalogBytes.
func pageCost(result *mcp.ListToolsResult, seen, total int, lim Limits) (int, [][2]int, error) {
	if seen+len(result.Tools) > lim.MaxTools {
		return 0, nil, catalogLimit("MaxTools")
	}
	n, schemaSizes, err := wire.PageSize(result, lim.MaxCatalogBytes-total)
	if err != nil || n > lim.MaxCatalogBytes-total {
		return 0, nil, catalogLimit("MaxCatalogBytes")
	}
	return n, schemaSizes, nil
}

// visit compiles a bound tool as it is listed; unbound tools are never
// compiled and never widen anything. A repeated remote name fails
// mcp_name_conflict, as a [*DiscoveryError] when the name is bound.
func (d *discovery) visit(tool *mcp.Tool, schemaSizes [2]int, repeated bool) error {
	b, ok := d.bindings[tool.Name]
	switch {
	case repeated && ok:
		return &DiscoveryError{Code: CodeNameConflict, RemoteName: tool.Name, Path: "$", Keyword: "name"}
	case repeated:
		return fail(CodeNameConflict)
	case !ok:
		return nil
	}
	t, err := d.bindTool(tool, b, schemaSizes)
	if err != nil {
		return err
	}
	if d.opts.RequireReadOnlyHint && !readOnlyHinted(tool.Annotations) {
		// After the schemas: their faults keep their code.
		return &DiscoveryError{Code: CodeAnnotationConflict, RemoteName: tool.Name, Path: "$", Keyword: "readOnlyHint"}
	}
	d.found[tool.Name] = t
	return nil
}

// bindTool checks one bound remote tool with checkTool and builds its
// registration record; pageCost measured its schemas.
func (d *discovery) bindTool(tool *mcp.Tool, b *binding, schemaSizes [2]int) (*catalogTool, error) {
	c, fault := checkTool(tool, schemaSizes, d.limits, d.policy, &d.monitor.schemas)
	if fault != nil {
		return nil, &DiscoveryError{Code: fault.code, RemoteName: tool.Name, Schema: fault.schema,
			Path: fault.path, Keyword: fault.keyword}
	}
	return &catalogTool{
		binding: *b, description: tool.Description,
		inputSnap: c.inputSnap, outputSnap: c.outputSnap,
		input: c.input, output: c.output, envelope: d.envelope, session: d.session,
		limits: d.limits, monitor: d.monitor, revision: d.revision, propagator: d.opts.TracePropagator,
	}, nil
}

// A toolFault says why a listed tool cannot be bound: the code discovery
// fails with and, for a schema, which one ("inputSchema" or
// "outputSchema"), the path of the failing node and the keyword or limit.
type toolFault struct{ code, schema, path, keyword string }

// checkedTool is what checkTool compiles for a tool that binds.
type checkedTool struct {
	input, output         *Contract // output nil when the tool has none
	inputSnap, outputSnap *strictjson.Object
}

// checkTool applies discovery's rules for one listed tool, in order: its
// description within MaxDescriptionBytes, then its input and its output
// schema under limits and policy. sizes are the schemas' compact JSON sizes,
// measured once by the caller (a negative size: the schema could not be
// measured). Discovery and the inspector both call it, so they cannot
// disagree on a tool or its order of checks. execution.taskSupport
// "required" would fail mcp_tool_unsupported here, but go-sdk v1.8.0 drops
// it while decoding. cache is the monitor's schema cache (nil: none, as for
// the inspector); it changes no outcome.
func checkTool(tool *mcp.Tool, sizes [2]int, lim Limits, policy SchemaPolicy, cache *schemaCache) (checkedTool, *toolFault) {
	var c checkedTool
	if jsUTF8Len(tool.Description) > lim.MaxDescriptionBytes {
		return c, &toolFault{code: CodeCatalogLimitExceeded, path: "$", keyword: "MaxDescriptionBytes"}
	}
	var err error
	if c.input, c.inputSnap, err = checkSchema(tool.InputSchema, sizes[0], lim, policy, cache); err != nil {
		return c, schemaToolFault("inputSchema", err)
	}
	if tool.OutputSchema != nil {
		policy.ParamHeaders = false // x-mcp-header names request headers: input only
		if c.output, c.outputSnap, err = checkSchema(tool.OutputSchema, sizes[1], lim, policy, cache); err != nil {
			return c, schemaToolFault("outputSchema", err)
		}
	}
	return c, nil
}

// checkSchema is sizedRemoteContract for a schema whose size may not have
// been measurable (size < 0).
func checkSchema(schema any, size int, lim Limits, policy SchemaPolicy, cache *schemaCache) (*Contract, *strictjson.Object, error) {
	if size < 0 {
		return nil, nil, &schemaFault{"$", "schema"}
	}
	return cache.remoteContract(schema, size, lim, policy)
}

// schemaToolFault locates a remote-schema fault of the named schema.
func schemaToolFault(which string, err error) *toolFault {
	f := err.(*schemaFault) // sizedRemoteContract fails only with a fault
	return &toolFault{code: CodeSchemaUnsupported, schema: which, path: f.path, keyword: f.keyword}
}

// catalog checks that every binding was listed and computes the digest,
// without the final monitor check that
// attempt makes, and builds the Catalog.
func (d *discovery) catalog(serverID string) (*Catalog, error) {
	if len(d.found) != len(d.bindings) {
		return nil, missingBinding(d.bindings, d.found)
	}
	tools := slices.SortedFunc(maps.Values(d.found), func(a, b *catalogTool) int {
		return strings.Compare(a.binding.local, b.binding.local)
	})
	digest, err := d.monitor.digests.revisionDigest(serverID, d.protocol, tools, func() (string, error) {
		identityEntries := make([]any, len(tools))
		for i, t := range tools {
			identityEntries[i] = t.identity()
		}
		return identity.DigestOf(snapshotIdentity(snapshotVersion, serverID, d.protocol, identityEntries),
			identityLimits)
	})
	if err != nil {
		return nil, fail(CodeCatalogLimitExceeded)
	}
	return &Catalog{
		serverID: serverID, protocol: d.protocol, digest: digest, tools: tools, monitor: d.monitor, revision: d.revision, observer: d.opts.Observer,
		callStart: d.opts.CallStart,
		transport: d.monitor.transport(),
	}, nil
}

// missingBinding is the mcp_binding_missing failure naming the first
// remote name of bindings, in sorted order, that the listing never had.
func missingBinding(bindings map[string]*binding, found map[string]*catalogTool) error {
	for _, name := range slices.Sorted(maps.Keys(bindings)) {
		if found[name] == nil {
			return &DiscoveryError{Code: CodeBindingMissing, RemoteName: name}
		}
	}
	return fail(CodeBindingMissing) // unreachable: found holds only bound names
}
