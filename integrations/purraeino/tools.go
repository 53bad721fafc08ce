package purraeino

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"purra.dev/purramcp"
)

// Options configures [Tools]. The zero value works: descriptions are the
// registrations' own, host failures end the run without a report, and each
// call's [purramcp.ToolContext] holds the call id and tool name.
type Options struct {
	// Call returns the ToolContext for one call of def; callID is Eino's
	// tool call id (compose.GetToolCallID). Whatever Call returns, CallID is
	// set to callID and ToolName to def.Name. Nil sets only those two.
	Call func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext
	// OnHostError is called with the host's own error whenever Run fails
	// with one (a ScopeFunc failure, anything but purramcp.ErrCanceled),
	// before the tool returns it and Eino ends the run. Nil drops the
	// report; the error is returned either way. It may be called
	// concurrently.
	OnHostError func(ctx context.Context, tool string, err error)
	// Describe returns the description the model is sent for def, for hosts
	// that filter remote descriptions (invisible or control characters).
	// Nil sends def.Description unchanged.
	Describe func(def purramcp.ToolDefinition) string
}

// UnknownToolMessage is the output [UnknownTool] gives a call of a name no
// tool has.
const UnknownToolMessage = `{"error":"unknown_tool"}`

// UnknownTool is a compose.ToolsNodeConfig.UnknownToolsHandler that answers a
// call of a name no tool has with {"error":"unknown_tool"}, a normal tool
// message, instead of ending the run. It never fails.
func UnknownTool(context.Context, string, string) (string, error) {
	return UnknownToolMessage, nil
}

// Tools returns one Eino tool per definition, in order; each is a
// tool.InvokableTool named def.Name with def's description and input
// schema. Tools whose registrations are not ConcurrencySafe never run
// concurrently with themselves (Eino runs one message's tool calls in
// parallel); the serialization covers the tools of one Tools call.
//
// Tools fails, naming the tool, when a name is empty or repeated, a
// definition has no Run, or Eino's schema type cannot hold the input schema
// unchanged (it drops keywords it does not know and const: null); it never
// rewrites a schema to fit.
func Tools(defs []purramcp.ToolDefinition, opts Options) ([]tool.BaseTool, error) {
	out := make([]tool.BaseTool, len(defs))
	seen := make(map[string]bool, len(defs))
	for i, def := range defs {
		switch {
		case def.Name == "":
			return nil, errors.New("purraeino: a tool has an empty name")
		case seen[def.Name]:
			return nil, fmt.Errorf("purraeino: tool %q is defined twice", def.Name)
		case def.Run == nil:
			return nil, fmt.Errorf("purraeino: tool %q has no Run", def.Name)
		}
		seen[def.Name] = true
		params, err := paramsJSON(def.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("purraeino: tool %q: %w", def.Name, err)
		}
		t := &invokable{def: def, opts: opts, description: def.Description, params: params}
		if opts.Describe != nil {
			t.description = opts.Describe(def)
		}
		if !def.ConcurrencySafe {
			t.slot = make(chan struct{}, 1)
		}
		out[i] = t
	}
	return out, nil
}

// invokable is one registration as an Eino tool.
type invokable struct {
	def         purramcp.ToolDefinition
	opts        Options
	description string
	params      []byte        // the input schema as JSON; nil for none
	slot        chan struct{} // nil when the registration is concurrency-safe
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
// the host's own ScopeFunc failure, which end Eino's run.
func (t *invokable) InvokableRun(ctx context.Context, arguments string, _ ...tool.Option) (string, error) {
	if t.slot != nil {
		select {
		case t.slot <- struct{}{}:
			defer func() { <-t.slot }()
		case <-ctx.Done():
			return "", purramcp.ErrCanceled
		}
	}
	id := compose.GetToolCallID(ctx)
	var call purramcp.ToolContext
	if t.opts.Call != nil {
		call = t.opts.Call(ctx, id, t.def)
	}
	call.CallID, call.ToolName = id, t.def.Name
	res, err := t.def.Run(ctx, json.RawMessage(arguments), call)
	switch {
	case errors.Is(err, purramcp.ErrCanceled):
		return "", purramcp.ErrCanceled
	case err != nil:
		if t.opts.OnHostError != nil {
			t.opts.OnHostError(ctx, t.def.Name, err)
		}
		return "", err
	}
	return res.ModelJSON(), nil
}
