package purraadk

import (
	"context"
	"errors"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// Options configures a [Toolset]. The zero value works: descriptions are the
// registrations' own, host failures are shown to the model as
// {"error":"host_failure"} and reported nowhere else, and each call's
// purramcp.ToolContext is filled from the ADK context.
//
// Call returns the ToolContext for one call of def. ctx is the tool's
// agent.Context (a host may type-assert it) and callID its function call
// id. Whatever Call returns, ToolName is set to def.Name and CallID to
// callID when callID is not empty. Nil uses RunID = InvocationID() and
// AgentID = AgentName().
//
// OnHostError is called with the tool's name and the host's own error
// whenever Run fails with one (a ScopeFunc failure, anything but
// purramcp.ErrCanceled), before the model is shown {"error":"host_failure"}
// instead of its text. Nil drops the error. It may be called concurrently.
//
// Describe returns the description the model is sent for def, for hosts
// that filter remote descriptions (invisible or control characters). Nil
// sends def.Description unchanged.
type Options = hostcore.Options

// A Source hands out registrations: a *purramcp.Catalog, or a fleet of
// servers (package purra.dev/purramcp/fleet), whose registrations change as
// servers come, go and are approved.
type Source = hostcore.Source

// A Toolset is an ADK tool.Toolset serving one source's registrations: one
// tool per registration, with the registration's name, description and
// input schema unchanged. ADK reads the tools with [Toolset.Tools] before
// every model request, and Tools reads the source each time, so a fleet's
// changes reach the next request with no wiring, while calls the model
// already made finish on the registrations they were declared from.
// [Toolset.Swap] replaces the source. A registration that is not
// ConcurrencySafe never runs concurrently with itself on one Toolset, across
// every read and every swap: one gate per tool name, for the Toolset's
// lifetime. Its methods are safe for concurrent use.
type Toolset struct {
	name string
	opts Options
	set  *hostcore.Set
}

var _ tool.Toolset = (*Toolset)(nil)

// rules are what a Toolset needs of a registration: a unique non-empty name
// (ADK finds the tool by it) and a Run to call.
var rules = hostcore.Rules{Package: "purraadk"}

// NewToolset returns a toolset named name serving src: a *purramcp.Catalog
// or a fleet. It fails when name is empty, when src is nil (a nil
// *purramcp.Catalog included), or when a registration has an empty or
// repeated name or no Run.
func NewToolset(name string, src Source, opts Options) (*Toolset, error) {
	if name == "" {
		return nil, errors.New("purraadk: empty toolset name")
	}
	set, err := hostcore.NewSet(src, rules)
	if err != nil {
		return nil, err
	}
	return &Toolset{name: name, opts: opts, set: set}, nil
}

// Name returns the toolset's name.
func (ts *Toolset) Name() string { return ts.name }

// Tools reads the source and returns one tool per registration, in the
// source's order, in a fresh slice. It never contacts a server: a stale
// catalog's tools answer every call with {"error":"mcp_catalog_stale"} until
// the host swaps in a rediscovered catalog (a fleet replaces them itself).
// It fails only when the source's registrations break what [NewToolset]
// checks.
func (ts *Toolset) Tools(agent.ReadonlyContext) ([]tool.Tool, error) {
	l, err := ts.set.Read()
	if err != nil {
		return nil, err
	}
	defs := l.Defs()
	tools := make([]tool.Tool, len(defs))
	for i, def := range defs {
		tools[i] = &functionTool{def: def, ts: ts, description: ts.opts.Description(def)}
	}
	return tools, nil
}

// Swap makes src the served source, typically a catalog the host
// rediscovered after the old one went stale; [Toolset.Tools] reads it from
// the next call on. It fails, changing nothing, when src is nil or its
// registrations break what [NewToolset] checks.
func (ts *Toolset) Swap(src Source) error { return ts.set.Replace(src) }

// Digest returns the revision digest of the catalog served, for audit logs,
// when the source is a *purramcp.Catalog; for any other source it is ""
// (a fleet reports each server's digest in its status).
func (ts *Toolset) Digest() string {
	if c, ok := ts.set.Source().(*purramcp.Catalog); ok {
		return c.Snapshot().RevisionDigest
	}
	return ""
}

// hooks returns the options' hooks in the form the shared call path takes,
// with the default ToolContext when Options.Call is nil.
func (ts *Toolset) hooks() hostcore.Hooks {
	h := ts.opts.Hooks()
	if h.Call == nil {
		h.Call = invocationContext
	}
	return h
}

// invocationContext is the default ToolContext: the ADK invocation as the
// run and the agent's name as the agent.
func invocationContext(ctx context.Context, _ string, _ purramcp.ToolDefinition) purramcp.ToolContext {
	c, ok := ctx.(agent.Context)
	if !ok {
		return purramcp.ToolContext{} // unreachable: Run passes its agent.Context
	}
	return purramcp.ToolContext{RunID: c.InvocationID(), AgentID: c.AgentName()}
}
