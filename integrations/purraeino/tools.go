package purraeino

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// Options configures a [Toolset] (and [Tools]). The zero value works:
// descriptions are the registrations' own, host failures end the run without
// a report, and each call's purramcp.ToolContext holds the call id and tool
// name.
//
// Call returns the ToolContext for one call of def; callID is Eino's tool
// call id (compose.GetToolCallID). Whatever Call returns, ToolName is set to
// def.Name and CallID to callID when callID is not empty. Nil sets only
// those two.
//
// OnHostError is called with the tool's name and the host's own error
// whenever Run fails with one (a ScopeFunc failure, anything but
// purramcp.ErrCanceled), before the tool returns it and Eino ends the run.
// Nil drops the report; the error is returned either way. It may be called
// concurrently.
//
// Describe returns the description the model is sent for def, for hosts
// that filter remote descriptions (invisible or control characters). Nil
// sends def.Description unchanged.
type Options = hostcore.Options

// UnknownToolMessage is the output [UnknownTool] gives a call of a name no
// tool has.
const UnknownToolMessage = `{"error":"` + hostcore.CodeUnknownTool + `"}`

// UnknownTool is a compose.ToolsNodeConfig.UnknownToolsHandler that answers a
// call of a name no tool has with {"error":"unknown_tool"}, a normal tool
// message, instead of ending the run. It never fails.
func UnknownTool(context.Context, string, string) (string, error) {
	return UnknownToolMessage, nil
}

// A Source hands out registrations: a *purramcp.Catalog, or a fleet of
// servers (package purra.dev/purramcp/fleet), whose registrations change as
// servers come, go and are approved.
type Source = hostcore.Source

// A Toolset serves one source's registrations as Eino tools. Eino fixes a
// ToolsNode's or an agent's tools when it is built and takes a fresh list
// per run (react.WithTools, compose.WithToolList), so [Toolset.Tools] reads
// the source each time it is called: a host serving a fleet passes
// Tools' result with each run. A registration that is not ConcurrencySafe
// never runs concurrently with itself on one Toolset (Eino runs one
// message's tool calls in parallel), across every list Tools returned: one
// gate per tool name, for the Toolset's lifetime. Its methods are safe for
// concurrent use.
type Toolset struct {
	set  *hostcore.Set
	opts Options
}

// rules are what a Toolset needs of a registration: a unique non-empty name
// (Eino finds the tool by it) and a Run to call.
var rules = hostcore.Rules{Package: "purraeino"}

// NewToolset returns a Toolset over src: a *purramcp.Catalog or a fleet. It
// fails when src is nil (a nil *purramcp.Catalog included) or as
// [Toolset.Tools] does.
func NewToolset(src Source, opts Options) (*Toolset, error) {
	set, err := hostcore.NewSet(src, rules)
	if err != nil {
		return nil, err
	}
	ts := &Toolset{set: set, opts: opts}
	if _, err := ts.tools(set.Current()); err != nil {
		return nil, err
	}
	return ts, nil
}

// Tools reads the source and returns one Eino tool per registration, in
// the source's order; each is a tool.InvokableTool named def.Name with def's
// description and input schema. Calls already running, and the tools of
// lists returned before, keep the registrations they were made from (they
// answer mcp_catalog_stale once their catalog is stale).
//
// Tools fails, naming the tool, when a name is empty or repeated, a
// definition has no Run, or Eino's schema type cannot hold the input schema
// unchanged (it drops keywords it does not know and const: null); it never
// rewrites a schema to fit.
func (ts *Toolset) Tools(context.Context) ([]tool.BaseTool, error) {
	l, err := ts.set.Read()
	if err != nil {
		return nil, err
	}
	return ts.tools(l)
}

// tools converts one read of the source.
func (ts *Toolset) tools(l *hostcore.List) ([]tool.BaseTool, error) {
	defs := l.Defs()
	out := make([]tool.BaseTool, len(defs))
	for i, def := range defs {
		params, err := paramsJSON(def.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("purraeino: tool %q: %w", def.Name, err)
		}
		out[i] = &invokable{def: def, ts: ts, description: ts.opts.Description(def), params: params}
	}
	return out, nil
}

// Tools returns the Eino tools of a fixed list of definitions, as
// [Toolset.Tools] does, sharing one Toolset's gates; it fails as
// [Toolset.Tools] does. After a rediscovery a host passes the new catalog's
// tools per call (react.WithTools, compose.WithToolList) or builds a new
// agent; a host that refreshes uses one [Toolset], whose gates span every
// list.
func Tools(defs []purramcp.ToolDefinition, opts Options) ([]tool.BaseTool, error) {
	ts, err := NewToolset(hostcore.Static(defs), opts)
	if err != nil {
		return nil, err
	}
	return ts.tools(ts.set.Current())
}

// invokable is one registration as an Eino tool.
type invokable struct {
	def         purramcp.ToolDefinition
	ts          *Toolset // its gates and options
	description string
	params      []byte // the input schema as JSON; nil for none
}

var _ tool.InvokableTool = (*invokable)(nil)

// Info returns a fresh ToolInfo each call (Eino's model adapters modify the
// schema they are given, such as sorting required in place).
func (t *invokable) Info(context.Context) (*schema.ToolInfo, error) {
	info := &schema.ToolInfo{Name: t.def.Name, Desc: t.description}
	if t.params != nil {
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(t.params, s); err != nil {
			return nil, fmt.Errorf("purraeino: tool %q: %w", t.def.Name, err) // unreachable: checked by Tools
		}
		info.ParamsOneOf = schema.NewParamsOneOfByJSONSchema(s)
	}
	return info, nil
}

// InvokableRun runs the registration once with the model's argument text and
// returns what the model is shown. Its errors are purramcp.ErrCanceled and
// the host's own ScopeFunc failure (after Options.OnHostError), which end
// Eino's run.
func (t *invokable) InvokableRun(ctx context.Context, arguments string, _ ...tool.Option) (string, error) {
	out, err := hostcore.Call(ctx, t.ts.set.Gates(), t.ts.opts.Hooks(), t.def, compose.GetToolCallID(ctx), json.RawMessage(arguments))
	if err != nil {
		return "", err
	}
	if out.HostErr != nil {
		return "", out.HostErr
	}
	return out.JSON(), nil
}
