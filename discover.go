package purramcp

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/jssize"
	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
)

// Schema identity of every remote contract and the one root dialect the
// adapter recognizes (adapter.md §5).
const (
	remoteSchemaID      = "mcp.object"
	remoteSchemaVersion = "1"
	dialectKey          = "$schema"
	dialect202012       = "https://json-schema.org/draft/2020-12/schema"
	snapshotVersion     = 1
)

var (
	remoteNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	localNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// A ToolBinding binds one remote tool, by its remote name (the map key given
// to DiscoverTools), to a local name and a read policy.
type ToolBinding struct {
	// LocalName is the name the core sees: ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
	LocalName string
	// Policy must have Mode "read", RiskLevel "" or "read" and a non-blank
	// Title (stored trimmed).
	Policy ToolPolicy
	// Scope is required; Unscoped is the explicit opt-out.
	Scope ScopeFunc
	// ConcurrencySafe records the host's declaration (default false).
	ConcurrencySafe bool
}

// DiscoveryOptions configures DiscoverTools.
type DiscoveryOptions struct {
	// Monitor follows the session; required.
	Monitor *CatalogMonitor
	// Limits bounds discovery and every call; zero fields take defaults.
	Limits Limits
	// Policy widens which remote schemas bind; the zero value is the
	// reference behaviour. See SchemaPolicy.
	Policy SchemaPolicy
}

// A Snapshot is the immutable identity of a catalog. json.Marshal gives the
// purra-mcp 1.0.0 snapshot shape.
type Snapshot struct {
	SchemaVersion   int         `json:"schemaVersion"`
	ServerID        string      `json:"serverId"`
	ProtocolVersion string      `json:"protocolVersion"`
	RevisionDigest  string      `json:"revisionDigest"`
	Entries         []ToolEntry `json:"entries"` // sorted by LocalName
}

// A ToolEntry is one bound tool in a Snapshot.
type ToolEntry struct {
	RemoteName  string         `json:"remoteName"`
	LocalName   string         `json:"localName"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	// OutputSchema is nil (JSON null) when the tool has none.
	OutputSchema    map[string]any `json:"outputSchema"`
	Policy          ToolPolicy     `json:"policy"`
	ConcurrencySafe bool           `json:"concurrencySafe"`
}

// A Catalog is the result of one discovery: a snapshot and one registration
// per binding. It is immutable; Stale and the registrations are safe for
// concurrent use. It stays bound to the session it was discovered over.
type Catalog struct {
	snapshot Snapshot
	tools    []*boundTool // sorted by local name
	monitor  *CatalogMonitor
	revision uint64
}

// binding is a validated, normalized copy of a ToolBinding.
type binding struct {
	remote          string
	local           string
	policy          ToolPolicy
	scope           ScopeFunc
	concurrencySafe bool
}

// boundTool is everything one registration needs.
type boundTool struct {
	binding binding
	// entry is the snapshot entry without its schemas, which are kept as the
	// contracts' immutable snapshots (inputSnap, outputSnap; the root $schema
	// re-added) and copied out only by Catalog.Snapshot.
	entry      ToolEntry
	inputSnap  *strictjson.Object
	outputSnap *strictjson.Object // nil when the tool has no output schema
	input      *Contract
	output     *Contract // nil when the tool has no output schema
	envelope   *Contract
	session    *mcp.ClientSession
	limits     Limits
	monitor    *CatalogMonitor
	revision   uint64
}

// DiscoverTools lists the session's tools page by page and binds the tools
// named in bindings, in the order of adapter.md §3; nothing is sent before the
// bindings, limits and monitor pass. Unbound tools are never compiled.
//
// It returns only *Error values or [ErrCanceled] (when ctx ends), never an SDK
// error or remote text: [ErrBindingInvalid], [ErrNameConflict],
// [ErrConnectionClosed], [ErrNotInitialized], [ErrCatalogStale],
// [ErrProtocolConflict] (the monitor holds another version than the
// session), [ErrToolsUnavailable], [ErrCatalogLimitExceeded],
// [ErrPaginationInvalid], [ErrSchemaUnsupported], [ErrBindingMissing] and,
// for a failed request, the codes of Run's error mapping (adapter.md §4).
//
// bindings is copied; changing it later changes nothing. DiscoverTools never
// closes the session, which the host owns. Each request is bounded by
// Limits.Timeout.
func DiscoverTools(ctx context.Context, session *mcp.ClientSession, serverID string,
	bindings map[string]ToolBinding, opts DiscoveryOptions) (*Catalog, error) {
	limits, err := opts.Limits.resolve()
	if err != nil {
		return nil, err
	}
	m := opts.Monitor
	if session == nil || m == nil || !remoteNamePattern.MatchString(serverID) || bindings == nil ||
		m.attachedElsewhere(session) {
		return nil, fail(CodeBindingInvalid)
	}
	bound, err := copyBindings(bindings, limits.MaxTools)
	if err != nil {
		return nil, err
	}
	d := &discovery{session: session, monitor: m, limits: limits, policy: opts.Policy, bound: bound,
		found: map[string]*boundTool{}}
	if err := d.preflight(); err != nil {
		return nil, err
	}
	if err := listPages(ctx, session, m, d.revision, limits, d.visit); err != nil {
		return nil, err
	}
	return d.catalog(serverID)
}

// copyBindings validates and copies every binding in sorted remote-name order
// (adapter.md §3.3), so map order never changes the outcome.
func copyBindings(bindings map[string]ToolBinding, maxTools int) (map[string]*binding, error) {
	bound := make(map[string]*binding, len(bindings))
	locals := make(map[string]bool, len(bindings))
	for _, remote := range slices.Sorted(maps.Keys(bindings)) {
		b := bindings[remote]
		title := strings.TrimFunc(b.Policy.Title, isJSWhitespace)
		if !remoteNamePattern.MatchString(remote) || !localNamePattern.MatchString(b.LocalName) ||
			b.Policy.Mode != "read" || (b.Policy.RiskLevel != "" && b.Policy.RiskLevel != "read") ||
			title == "" || !utf8.ValidString(title) || b.Scope == nil {
			return nil, fail(CodeBindingInvalid)
		}
		if locals[b.LocalName] {
			return nil, fail(CodeNameConflict)
		}
		locals[b.LocalName] = true
		bound[remote] = &binding{remote: remote, local: b.LocalName, scope: b.Scope,
			policy:          ToolPolicy{Mode: "read", Title: title, RiskLevel: "read"},
			concurrencySafe: b.ConcurrencySafe}
	}
	if len(bound) == 0 || len(bound) > maxTools {
		return nil, fail(CodeBindingInvalid)
	}
	return bound, nil
}

// discovery is the state of one DiscoverTools call.
type discovery struct {
	session  *mcp.ClientSession
	monitor  *CatalogMonitor
	revision uint64
	protocol string
	limits   Limits
	policy   SchemaPolicy
	envelope *Contract
	bound    map[string]*binding
	found    map[string]*boundTool
}

// preflight runs adapter.md §3.4: monitor, version, tools capability and the
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

// listPages pages tools/list (adapter.md §3.5–§3.6) for discovery and the
// inspector alike. Before each page: the monitor check, then ctx (no request
// once it has ended); after it: the monitor check again, the catalog byte and
// tool totals, then each tool in order: a remote name seen before fails
// mcp_name_conflict, else visit gets the tool and its schema sizes. An empty
// cursor ends paging; an oversized or repeated one fails; so does running
// out of pages. Pages may be shared with go-sdk's cache: read only.
func listPages(ctx context.Context, session *mcp.ClientSession, m *CatalogMonitor, revision uint64,
	lim Limits, visit func(tool *mcp.Tool, schemaSizes [2]int) error) error {
	seen, cursors := map[string]bool{}, map[string]bool{}
	total, cursor := 0, ""
	for range lim.MaxPages {
		if err := m.Check(revision); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ErrCanceled // adapter.md §3.5: no request sent
		}
		result, err := bounded(ctx, lim.Timeout, func(ctx context.Context) (*mcp.ListToolsResult, error) {
			// adapter.md §3.5: fresh params per request (go-sdk writes _meta into
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
		n, schemaSizes, err := pageSize(result)
		total += n
		if err != nil || total > lim.MaxCatalogBytes || len(seen)+len(result.Tools) > lim.MaxTools {
			return fail(CodeCatalogLimitExceeded)
		}
		for i, tool := range result.Tools {
			if tool == nil {
				continue // unreachable: go-sdk drops null tools
			}
			if seen[tool.Name] {
				return fail(CodeNameConflict)
			}
			seen[tool.Name] = true
			if err := visit(tool, schemaSizes[i]); err != nil {
				return err
			}
		}
		next := result.NextCursor
		if next == "" {
			return nil
		}
		// adapter.md §3.6: an oversized or repeated cursor fails.
		if len(next) > maxCursorBytes || cursors[next] {
			return fail(CodePaginationInvalid)
		}
		cursors[next] = true
		cursor = next
	}
	return fail(CodeCatalogLimitExceeded) // adapter.md §3.6: pages exhausted
}

// visit compiles a bound tool as it is listed; unbound tools are never
// compiled and never widen anything.
func (d *discovery) visit(tool *mcp.Tool, schemaSizes [2]int) error {
	b, ok := d.bound[tool.Name]
	if !ok {
		return nil
	}
	t, err := d.bindTool(tool, b, schemaSizes)
	if err != nil {
		return err
	}
	d.found[tool.Name] = t
	return nil
}

// pageSize is jssize.Size(result) with every schema, usually most of the
// bytes, measured as a decoded value instead of by marshaling the page
// (jssize.Placeholder); the count is the same. It also returns each tool's
// input and output schema sizes (0 when absent), so a bound schema is not
// measured twice. The copies are shallow, only read and never kept: result
// may be shared with go-sdk's cache.
func pageSize(result *mcp.ListToolsResult) (int, [][2]int, error) {
	shell := *result
	if result.Tools != nil { // nil stays null
		shell.Tools = make([]*mcp.Tool, len(result.Tools))
	}
	schemaSizes := make([][2]int, len(result.Tools))
	inner := 0
	for i, tool := range result.Tools {
		if tool == nil {
			continue // unreachable: go-sdk drops null tools; null either way
		}
		t := *tool
		for j, schema := range []*any{&t.InputSchema, &t.OutputSchema} {
			if *schema == nil {
				continue // null, or omitted, either way
			}
			n, err := jssize.Size(*schema)
			if err != nil {
				return 0, nil, err
			}
			schemaSizes[i][j] = n
			inner += n - len(jssize.Placeholder)
			*schema = jssize.Placeholder
		}
		shell.Tools[i] = &t
	}
	outer, err := jssize.Size(&shell)
	if err != nil {
		return 0, nil, err
	}
	return outer + inner, schemaSizes, nil
}

// bindTool checks one bound remote tool and compiles its schemas, whose
// sizes pageSize measured.
func (d *discovery) bindTool(tool *mcp.Tool, b *binding, schemaSizes [2]int) (*boundTool, error) {
	if jsUTF8Len(tool.Description) > d.limits.MaxDescriptionBytes {
		return nil, fail(CodeCatalogLimitExceeded)
	}
	// adapter.md §5: execution.taskSupport "required" would fail
	// mcp_tool_unsupported, but go-sdk v1.8.0 drops it while decoding.
	input, inputSnap, err := sizedRemoteContract(tool.InputSchema, schemaSizes[0], d.limits, d.policy)
	if err != nil {
		return nil, fail(CodeSchemaUnsupported)
	}
	var output *Contract
	var outputSnap *strictjson.Object
	if tool.OutputSchema != nil {
		output, outputSnap, err = sizedRemoteContract(tool.OutputSchema, schemaSizes[1], d.limits, d.policy)
		if err != nil {
			return nil, fail(CodeSchemaUnsupported)
		}
	}
	return &boundTool{
		binding: *b,
		entry: ToolEntry{RemoteName: tool.Name, LocalName: b.local, Description: tool.Description,
			Policy: b.policy, ConcurrencySafe: b.concurrencySafe},
		inputSnap: inputSnap, outputSnap: outputSnap,
		input: input, output: output, envelope: d.envelope, session: d.session,
		limits: d.limits, monitor: d.monitor, revision: d.revision,
	}, nil
}

// A schemaFault says where a remote schema fails adapter.md §5: Path is the
// JSON path of the failing node and Keyword the failing keyword, or the name
// of the limit. Discovery reports every fault as mcp_schema_unsupported; only
// the inspector shows where.
type schemaFault struct{ path, keyword string }

func (f *schemaFault) Error() string { return "purramcp: remote schema unsupported" }

// remoteContract applies adapter.md §5 to one remote schema, widened by
// policy. It returns the compiled contract and the snapshot schema (the root
// $schema kept as declared), which shares nothing with schema or go-sdk, or
// a *schemaFault.
func remoteContract(schema any, limits Limits, policy SchemaPolicy) (*Contract, *strictjson.Object, error) {
	size, err := jssize.Size(schema)
	if err != nil {
		return nil, nil, &schemaFault{"$", "schema"}
	}
	return sizedRemoteContract(schema, size, limits, policy)
}

// sizedRemoteContract is remoteContract for a schema whose jssize.Size is
// already known.
func sizedRemoteContract(schema any, size int, limits Limits, policy SchemaPolicy) (*Contract, *strictjson.Object, error) {
	root, ok := schema.(map[string]any)
	if !ok {
		return nil, nil, &schemaFault{"$", "schema"}
	}
	// adapter.md §5: the whole schema, declaration included, as compact JSON.
	if size > limits.MaxSchemaBytes {
		return nil, nil, &schemaFault{"$", "MaxSchemaBytes"}
	}
	declared, hasDialect := root[dialectKey]
	if hasDialect && !policy.acceptsDialect(declared) {
		return nil, nil, &schemaFault{"$", dialectKey}
	}
	body := make(map[string]any, len(root))
	for k, v := range root {
		if k != dialectKey {
			body[k] = v
		}
	}
	popts := policy.profile()
	popts.Draft07 = hasDialect && isDraft07(declared)
	c, err := newRemoteContract(body, limits, popts)
	if err != nil {
		return nil, nil, err
	}
	snap := c.schema.(*strictjson.Object) // immutable; copied out only by Catalog.Snapshot
	if hasDialect {
		members := maps.Clone(snap.Members) // a string acceptsDialect admitted
		members[dialectKey] = declared
		snap = &strictjson.Object{Keys: append(slices.Clone(snap.Keys), dialectKey), Members: members}
	}
	return c, snap, nil
}

// newRemoteContract compiles schema under the adapter's limits; a rejection
// is a *schemaFault located by the profile's SchemaError, or at "$" when the
// schema is outside the JSON domain or the schema limits. newContract copies
// schema and never modifies it.
func newRemoteContract(schema map[string]any, limits Limits, popts profile.Options) (*Contract, error) {
	c, err := newContract(ContractOptions{SchemaID: remoteSchemaID, SchemaVersion: remoteSchemaVersion,
		Schema: schema, Limits: ContractLimits{SchemaBytes: limits.MaxSchemaBytes, OutputBytes: limits.MaxResultBytes}},
		popts)
	if err != nil {
		path, keyword := err.location()
		return nil, &schemaFault{path, keyword}
	}
	return c, nil
}

// catalog runs adapter.md §3.7–§3.8 and builds the Catalog.
func (d *discovery) catalog(serverID string) (*Catalog, error) {
	if len(d.found) != len(d.bound) {
		return nil, fail(CodeBindingMissing)
	}
	tools := slices.SortedFunc(maps.Values(d.found), func(a, b *boundTool) int {
		return strings.Compare(a.entry.LocalName, b.entry.LocalName)
	})
	entries := make([]ToolEntry, len(tools))
	identityEntries := make([]any, len(tools))
	for i, t := range tools {
		entries[i] = t.entry
		identityEntries[i] = t.identity()
	}
	digest, err := IdentityDigest(map[string]any{"schemaVersion": snapshotVersion, "serverId": serverID,
		"protocolVersion": d.protocol, "entries": identityEntries})
	if err != nil {
		return nil, fail(CodeCatalogLimitExceeded)
	}
	if err := d.monitor.Check(d.revision); err != nil {
		return nil, err
	}
	return &Catalog{
		snapshot: Snapshot{SchemaVersion: snapshotVersion, ServerID: serverID, ProtocolVersion: d.protocol,
			RevisionDigest: digest, Entries: entries},
		tools: tools, monitor: d.monitor, revision: d.revision,
	}, nil
}

// identity is the identity object of one entry (adapter.md §7). The schemas
// are the contracts' own snapshots, hashed without copying them out.
func (t *boundTool) identity() map[string]any {
	e := t.entry
	var output any // an absent output schema is null, never {}
	if t.outputSnap != nil {
		output = t.outputSnap
	}
	return map[string]any{
		"remoteName": e.RemoteName, "localName": e.LocalName, "description": e.Description,
		"inputSchema": t.inputSnap, "outputSchema": output,
		"policy":          map[string]any{"mode": e.Policy.Mode, "title": e.Policy.Title, "riskLevel": e.Policy.RiskLevel},
		"concurrencySafe": e.ConcurrencySafe,
	}
}

// Snapshot returns a deep copy of the catalog's snapshot; the caller may
// modify it freely.
func (c *Catalog) Snapshot() Snapshot {
	s := c.snapshot
	s.Entries = make([]ToolEntry, len(c.snapshot.Entries))
	for i, e := range c.snapshot.Entries {
		t := c.tools[i] // the same order: both sorted by local name
		e.InputSchema = strictjson.ToGo(t.inputSnap).(map[string]any)
		if t.outputSnap != nil {
			e.OutputSchema = strictjson.ToGo(t.outputSnap).(map[string]any)
		}
		s.Entries[i] = e
	}
	return s
}

// Stale reports whether the catalog can no longer run: the tool list changed
// since discovery or the session ended. Once true it stays true.
func (c *Catalog) Stale() bool { return c.monitor.Check(c.revision) != nil }

// jsUTF8Len is the length of s as TextEncoder writes it: each invalid byte
// becomes U+FFFD, which is what range yields for it (3 bytes).
func jsUTF8Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf8.RuneLen(r)
	}
	return n
}

// cloneObject deep-copies a decoded JSON object; nil stays nil.
func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneValue deep-copies a decoded JSON value (maps and slices; scalars are
// immutable).
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneObject(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	default:
		return v
	}
}
