package purramcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/jssize"
	"purra.dev/purramcp/internal/localname"
)

// A ToolReport says whether one remote tool could be bound under
// purra.output-schema/v1 and the given limits and, if not, the first reason
// discovery would give. It is for people deciding what to bind: unlike a
// Run result, it names the schema path and keyword that failed.
type ToolReport struct {
	// Name is the remote tool name.
	Name string `json:"name"`
	// Bindable reports whether a binding of this tool would pass discovery.
	Bindable bool `json:"bindable"`
	// Code is the mcp_* code discovery would fail with, or "".
	Code string `json:"code,omitempty"`
	// Schema is "inputSchema" or "outputSchema" when a schema is the reason.
	Schema string `json:"schema,omitempty"`
	// Path is the JSON path of the failing node inside Schema ("$" for the
	// root, "$.properties.q" below it); for a limit it is "$".
	Path string `json:"path,omitempty"`
	// Keyword is the failing schema keyword, or for a limit the name of the
	// Limits field ("MaxSchemaBytes"), or "name" for an unbindable name.
	Keyword string `json:"keyword,omitempty"`
	// BindsWith names the narrowest wider SchemaPolicy under which a tool
	// that does not bind would bind, as SchemaPolicy.String names it
	// ("dialect", "annotations", "extended", "headers",
	// "dialect+annotations", ..., trying one added policy before two), or
	// "" when none would or it already binds.
	BindsWith string `json:"bindsWith,omitempty"`
	// DescriptionBytes is the description's UTF-8 size, checked against
	// MaxDescriptionBytes.
	DescriptionBytes int `json:"descriptionBytes"`
	// InputSchemaBytes is the input schema's compact JSON size, checked
	// against MaxSchemaBytes.
	InputSchemaBytes int `json:"inputSchemaBytes"`
	// OutputSchemaBytes is the output schema's compact JSON size (0 when
	// there is none), checked against MaxSchemaBytes.
	OutputSchemaBytes int `json:"outputSchemaBytes"`
	// ReadOnlyHint and DestructiveHint are the tool's annotations, each true
	// only when the tool sets it (RequireReadOnlyHint wants the first
	// without the second); they grant nothing and stay out of the JSON.
	ReadOnlyHint    bool `json:"-"`
	DestructiveHint bool `json:"-"`
}

// InspectTool reports whether tool could be bound under limits (zero fields
// take defaults) and policy, applying the checks discovery applies to a
// bound tool, in the same order: name, description bytes, then the input and
// the output schema (see [DiscoverTools], step 4). When it would not bind, BindsWith
// names the narrowest wider policy that would bind it. It fails
// [ErrBindingInvalid] only for a nil tool or invalid limits. tool is only
// read; schemas held as json.RawMessage or typed values (as on a server) are
// inspected as a client would decode them.
func InspectTool(tool *mcp.Tool, limits Limits, policy SchemaPolicy) (ToolReport, error) {
	lim, err := limits.resolve()
	if err != nil || tool == nil {
		return ToolReport{}, fail(CodeBindingInvalid)
	}
	decoded := *tool
	decoded.InputSchema, decoded.OutputSchema = asDecoded(tool.InputSchema), asDecoded(tool.OutputSchema)
	tool = &decoded
	r := inspectTool(tool, lim, policy)
	if !r.Bindable {
		for _, wider := range widerPolicies {
			wider.DialectEquivalence = wider.DialectEquivalence || policy.DialectEquivalence
			wider.Annotations = wider.Annotations || policy.Annotations
			wider.ExtendedKeywords = wider.ExtendedKeywords || policy.ExtendedKeywords
			wider.ParamHeaders = wider.ParamHeaders || policy.ParamHeaders
			if wider != policy && inspectTool(tool, lim, wider).Bindable {
				r.BindsWith = wider.String()
				break
			}
		}
	}
	return r, nil
}

// widerPolicies are the policies BindsWith tries, narrowest first: one
// policy, then two, three and all four, those with ParamHeaders after the
// others of their size.
var widerPolicies = [...]SchemaPolicy{
	{DialectEquivalence: true}, {Annotations: true}, {ExtendedKeywords: true}, {ParamHeaders: true},
	{DialectEquivalence: true, Annotations: true}, {DialectEquivalence: true, ExtendedKeywords: true},
	{Annotations: true, ExtendedKeywords: true},
	{DialectEquivalence: true, ParamHeaders: true}, {Annotations: true, ParamHeaders: true},
	{ExtendedKeywords: true, ParamHeaders: true},
	{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true},
	{DialectEquivalence: true, Annotations: true, ParamHeaders: true},
	{DialectEquivalence: true, ExtendedKeywords: true, ParamHeaders: true},
	{Annotations: true, ExtendedKeywords: true, ParamHeaders: true},
	{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true, ParamHeaders: true},
}

// asDecoded returns a schema as a go-sdk client would hold it after decoding:
// a server-side tool may carry json.RawMessage or a typed schema instead.
func asDecoded(schema any) any {
	switch schema.(type) {
	case nil, map[string]any:
		return schema
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return schema // fails the inspection as not an object
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return schema
	}
	return v
}

// inspectTool is InspectTool under resolved limits, without BindsWith: the
// name, then checkTool, discovery's own per-tool check, on schemas measured
// once.
func inspectTool(tool *mcp.Tool, lim Limits, policy SchemaPolicy) ToolReport {
	r := ToolReport{Name: tool.Name, DescriptionBytes: jsUTF8Len(tool.Description)}
	if a := tool.Annotations; a != nil {
		r.ReadOnlyHint, r.DestructiveHint = a.ReadOnlyHint, a.DestructiveHint != nil && *a.DestructiveHint
	}
	sizes := [2]int{-1, -1}
	var err error
	if r.InputSchemaBytes, err = jssize.Size(tool.InputSchema); err == nil {
		sizes[0] = r.InputSchemaBytes
	}
	if tool.OutputSchema != nil {
		if r.OutputSchemaBytes, err = jssize.Size(tool.OutputSchema); err == nil {
			sizes[1] = r.OutputSchemaBytes
		}
	}
	if !remoteNamePattern.MatchString(tool.Name) {
		r.reject(CodeBindingInvalid, "", "$", "name")
		return r
	}
	if _, f := checkTool(tool, sizes, lim, policy, nil); f != nil {
		r.reject(f.code, f.schema, f.path, f.keyword)
		return r
	}
	r.Bindable = true
	return r
}

func (r *ToolReport) reject(code, schema, path, keyword string) {
	r.Bindable, r.Code, r.Schema, r.Path, r.Keyword = false, code, schema, path, keyword
}

// A CatalogReport is what InspectCatalog found on a server.
type CatalogReport struct {
	// ProtocolVersion is the negotiated version the monitor accepted.
	ProtocolVersion string `json:"protocolVersion"`
	// Tools holds one report per listed tool, sorted by name.
	Tools []ToolReport `json:"tools"`
	// Bindings are the default bindings of the bindable tools: local names
	// derived from remote names, the tool title (or its name) as title, and
	// Unscoped. Keyed by remote name.
	Bindings map[string]ToolBinding `json:"-"`
	// RevisionDigest is the digest DiscoverTools returns with Bindings, or ""
	// when no tool is bindable or the bindable tools together pass the
	// digest's bound (DiscoverTools with Bindings then fails
	// mcp_catalog_limit_exceeded; a subset of them may bind).
	RevisionDigest string `json:"revisionDigest"`
}

// InspectCatalog serves a host that reviews what a server offers before it
// chooses bindings (an operator's console, a CI check). It lists every tool
// of session once under opts.Limits, reports on each with InspectTool under
// opts.Policy, and binds the bindable ones
// under default bindings from that same listing to report the digest
// DiscoverTools would return for them (the report and the digest never come
// from two listings). serverID is the snapshot's server id. It sends only
// tools/list requests and fails as DiscoverTools does, before any request for
// invalid options or server id, a closed or unattached monitor and a server
// without tools, then for example [ErrPaginationInvalid] for a cursor loop,
// a [*DiscoveryError] naming the Limits field for a listing over MaxPages,
// MaxTools or MaxCatalogBytes, and [ErrNameConflict] for a remote name
// listed twice.
//
// Of the purramcp options it honours StaleRetries: when a tool list change
// arrives between its first listing and its return, it starts over, listing
// and discovery, up to that many more times, then fails [ErrCatalogStale];
// outside 0..8 it fails [ErrBindingInvalid]. It approves nothing, checks no
// hints and reports no events: Approve, RequireReadOnlyHint and Observer
// are ignored.
func InspectCatalog(ctx context.Context, session *mcp.ClientSession, serverID string,
	opts DiscoveryOptions) (*CatalogReport, error) {
	if !validStaleRetries(opts.StaleRetries) {
		return nil, fail(CodeBindingInvalid)
	}
	plain := DiscoveryOptions{Monitor: opts.Monitor, Limits: opts.Limits, Policy: opts.Policy}
	for attempt := 0; ; attempt++ {
		report, err := inspectCatalog(ctx, session, serverID, plain)
		if CodeOf(err) != CodeCatalogStale || attempt >= opts.StaleRetries || ctx.Err() != nil {
			return report, err
		}
	}
}

// inspectCatalog is one InspectCatalog attempt under the plain options.
func inspectCatalog(ctx context.Context, session *mcp.ClientSession, serverID string,
	opts DiscoveryOptions) (*CatalogReport, error) {
	lim, err := opts.Limits.resolve()
	m := opts.Monitor
	if err != nil || session == nil || m == nil || !remoteNamePattern.MatchString(serverID) ||
		m.attachedElsewhere(session) {
		return nil, fail(CodeBindingInvalid)
	}
	d := &discovery{session: session, serverID: serverID, monitor: m, limits: lim, policy: opts.Policy, opts: opts,
		found: map[string]*catalogTool{}}
	if err := d.preflight(); err != nil {
		return nil, err
	}
	type listed struct {
		tool  *mcp.Tool
		sizes [2]int
	}
	var listing []listed // in listing order, as discovery visits them
	collect := func(tool *mcp.Tool, sizes [2]int, repeated bool) error {
		if repeated {
			return fail(CodeNameConflict)
		}
		listing = append(listing, listed{tool, sizes})
		return nil
	}
	if err := listPages(ctx, session, m, d.revision, lim, nil, collect); err != nil {
		return nil, err
	}
	tools := make([]*mcp.Tool, len(listing))
	for i, l := range listing {
		tools[i] = l.tool
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	report := &CatalogReport{ProtocolVersion: d.protocol, Bindings: map[string]ToolBinding{}}
	used := map[string]bool{}
	for _, tool := range tools {
		r, err := InspectTool(tool, lim, opts.Policy)
		if err != nil {
			return nil, err
		}
		report.Tools = append(report.Tools, r)
		if r.Bindable {
			report.Bindings[tool.Name] = defaultBinding(tool, used, lim.MaxDescriptionBytes)
		}
	}
	if len(report.Bindings) == 0 {
		return report, nil
	}
	if d.bindings, err = copyBindings(report.Bindings, lim.MaxTools); err != nil {
		return nil, err
	}
	for _, l := range listing {
		if err := d.visit(l.tool, l.sizes, false); err != nil {
			return nil, err
		}
	}
	catalog, err := d.catalog(serverID)
	if CodeOf(err) == CodeCatalogLimitExceeded {
		return report, nil // the digest's bound: binding them all would fail; the report stands
	}
	if err != nil {
		return nil, err
	}
	// The digest is of the listing reported only when no change came between.
	if err := m.Check(d.revision); err != nil {
		return nil, err
	}
	report.RevisionDigest = catalog.digest
	return report, nil
}

// defaultBinding binds tool to a local name derived from its remote name
// (localname.Derive: characters outside [A-Za-z0-9_] become '_', a leading
// digit gets a '_' prefix, the name is cut to 64 bytes, and a repeat gets a
// numeric suffix).
// The title is the remote title, trimmed, unless it is blank, not valid
// UTF-8 or longer than maxTitle bytes (MaxDescriptionBytes): then it is the
// remote name cut to maxTitle bytes, so no suggested binding carries more
// remote text than a bound description may.
func defaultBinding(tool *mcp.Tool, used map[string]bool, maxTitle int) ToolBinding {
	local := localname.Derive(tool.Name, used)
	title := strings.TrimFunc(tool.Title, isJSWhitespace)
	if title == "" || !utf8.ValidString(title) || len(title) > maxTitle {
		title = tool.Name[:min(len(tool.Name), maxTitle)] // ASCII: a bindable name matched remoteNamePattern
	}
	return ToolBinding{LocalName: local, Policy: ToolPolicy{Mode: "read", Title: title}, Scope: Unscoped}
}
