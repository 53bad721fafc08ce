package purraadk

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"

	"purra.dev/purramcp"
)

// Options configures a [Toolset]. The zero value works: descriptions are the
// registrations' own, host failures are shown to the model as
// {"error":"host_failure"} and reported nowhere else, and each call's
// [purramcp.ToolContext] is filled from the ADK context.
type Options struct {
	// Call returns the ToolContext for one call of def. ctx is the tool's
	// agent.Context (a host may type-assert it) and callID its function call
	// id. Whatever Call returns, CallID is set to callID and ToolName to
	// def.Name. Nil uses RunID = InvocationID() and AgentID = AgentName().
	Call func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext
	// OnHostError is called with the host's own error whenever Run fails
	// with one (a ScopeFunc failure, anything but purramcp.ErrCanceled),
	// before the model is shown {"error":"host_failure"} instead of its text.
	// Nil drops the error. It may be called concurrently.
	OnHostError func(ctx context.Context, tool string, err error)
	// Describe returns the description the model is sent for def, for hosts
	// that filter remote descriptions (invisible or control characters).
	// Nil sends def.Description unchanged.
	Describe func(def purramcp.ToolDefinition) string
}

// A Toolset is an ADK tool.Toolset serving one purramcp catalog: one tool per
// registration, with the registration's name, description and input schema
// unchanged. [Toolset.Swap] replaces the catalog; ADK reads the tools with
// [Toolset.Tools] when an agent invocation starts, so a swap takes effect
// from the next invocation while calls already made by the model finish on
// the catalog they were declared from. Its methods are safe for concurrent
// use.
type Toolset struct {
	name    string
	opts    Options
	current atomic.Pointer[served]

	mu    sync.Mutex               // guards slots
	slots map[string]chan struct{} // one per tool name that is not concurrency-safe
}

// served is one catalog's converted tools.
type served struct {
	tools  []tool.Tool
	digest string
}

var _ tool.Toolset = (*Toolset)(nil)

// NewToolset returns a toolset named name serving catalog. It fails when
// name is empty or catalog is nil.
func NewToolset(name string, catalog *purramcp.Catalog, opts Options) (*Toolset, error) {
	if name == "" {
		return nil, errors.New("purraadk: empty toolset name")
	}
	ts := &Toolset{name: name, opts: opts, slots: map[string]chan struct{}{}}
	if err := ts.Swap(catalog); err != nil {
		return nil, err
	}
	return ts, nil
}

// Name returns the toolset's name.
func (ts *Toolset) Name() string { return ts.name }

// Tools returns the current catalog's tools, sorted by name, in a fresh
// slice. It never fails and never contacts the server: a stale catalog's
// tools answer every call with {"error":"mcp_catalog_stale"} until the host
// swaps in a rediscovered catalog.
func (ts *Toolset) Tools(agent.ReadonlyContext) ([]tool.Tool, error) {
	return slices.Clone(ts.current.Load().tools), nil
}

// Swap replaces the served catalog with catalog, typically one the host
// rediscovered after the old one went stale. [Toolset.Tools] returns its
// tools from the next call on. A tool that is not concurrency-safe is still
// never run concurrently with a call of the same name on the old catalog.
// It fails, changing nothing, when catalog is nil.
func (ts *Toolset) Swap(catalog *purramcp.Catalog) error {
	if catalog == nil {
		return errors.New("purraadk: nil catalog")
	}
	defs := catalog.Registrations()
	tools := make([]tool.Tool, len(defs))
	for i, def := range defs {
		t := &functionTool{def: def, opts: &ts.opts, description: def.Description}
		if ts.opts.Describe != nil {
			t.description = ts.opts.Describe(def)
		}
		if !def.ConcurrencySafe {
			t.slot = ts.slot(def.Name)
		}
		tools[i] = t
	}
	ts.current.Store(&served{tools: tools, digest: catalog.Snapshot().RevisionDigest})
	return nil
}

// Digest returns the revision digest of the catalog currently served, for
// audit logs.
func (ts *Toolset) Digest() string { return ts.current.Load().digest }

// slot returns the one-call slot shared by every tool named name.
func (ts *Toolset) slot(name string) chan struct{} {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	s, ok := ts.slots[name]
	if !ok {
		s = make(chan struct{}, 1)
		ts.slots[name] = s
	}
	return s
}
