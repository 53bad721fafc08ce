package purraadk

import (
	"encoding/json"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/toolutils"
	"google.golang.org/genai"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// functionTool is one registration as an ADK function tool. ADK's flow runs
// a tool that has Declaration and Run (the method set of its own function
// and MCP tools) and packs it into the model request with ProcessRequest.
type functionTool struct {
	def         purramcp.ToolDefinition
	description string
	ts          *Toolset // its gates and options
}

var (
	_ tool.Tool = (*functionTool)(nil)
	_ interface {
		Declaration() *genai.FunctionDeclaration
		Run(ctx agent.Context, args any) (map[string]any, error)
		ProcessRequest(ctx agent.Context, req *model.LLMRequest) error
	} = (*functionTool)(nil)
)

// Name returns the registration's name.
func (t *functionTool) Name() string { return t.def.Name }

// Description returns the registration's description (or Options.Describe's).
func (t *functionTool) Description() string { return t.description }

// IsLongRunning reports false: Run returns the call's outcome.
func (t *functionTool) IsLongRunning() bool { return false }

// Declaration returns a fresh declaration each call, with the registration's
// input schema as ParametersJsonSchema unchanged (a fresh copy, so nothing
// downstream can change the next request's). No response schema is sent:
// the response is the envelope, not the tool's output schema.
func (t *functionTool) Declaration() *genai.FunctionDeclaration {
	schema := t.def.InputSchema
	if t.def.ArgumentContract != nil {
		schema = t.def.ArgumentContract.Schema()
	}
	return &genai.FunctionDeclaration{Name: t.def.Name, Description: t.description,
		ParametersJsonSchema: schema}
}

// ProcessRequest adds the declaration to req the way ADK's own tools do.
func (t *functionTool) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	return toolutils.PackTool(req, t)
}

// Run runs the registration once with the model's arguments and returns what
// the model is shown. Its only error is purramcp.ErrCanceled; a host failure
// is reported to Options.OnHostError and shown as {"error":"host_failure"}.
func (t *functionTool) Run(ctx agent.Context, args any) (map[string]any, error) {
	raw, err := arguments(args)
	if err != nil {
		return map[string]any{"error": purramcp.CodeInvalidArguments}, nil
	}
	out, err := hostcore.Call(ctx, t.ts.set.Gates(), t.ts.hooks(), t.def, ctx.FunctionCallID(), raw)
	if err != nil {
		return nil, err
	}
	return out.Model(), nil
}

// arguments encodes the decoded arguments ADK hands a tool. Absent
// arguments (nil, or a nil map) are nil, which Run reads as {}.
func arguments(args any) (json.RawMessage, error) {
	if m, ok := args.(map[string]any); args == nil || ok && m == nil {
		return nil, nil
	}
	return json.Marshal(args)
}
