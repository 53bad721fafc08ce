package purraanthropic

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"purra.dev/purramcp"
)

// BetaTools returns one [anthropic.BetaTool] per definition, in order, for
// client.Beta.Messages.NewToolRunner. It fails, naming the tool, when a
// definition has no name, a repeated name, no Run, or an input schema whose
// root is not type "object"; defs itself is not kept.
//
// Each tool's Name, Description and InputSchema are the definition's,
// unchanged. Execute calls Run once with the input the runner passes (the
// runner re-encodes the decoded tool_use input, so duplicate keys are already
// collapsed there) and returns:
//
//   - on success, one text block holding [purramcp.ToolResult.ModelJSON];
//   - on a failure with an mcp_* code, a [*ToolError] with that code, which
//     the runner sends as the tool_result "Error: mcp_..." with is_error set;
//   - when the host's ScopeFunc failed, a [*ToolError] with
//     [purramcp.CodeHostFailure], after calling Options.OnHostError;
//   - when ctx ended, [purramcp.ErrCanceled].
//
// The runner passes no tool_use id to Execute, so the call's
// ToolContext.CallID is whatever Options.Call supplies ("" by default). The
// runner runs a turn's tool calls in parallel; a tool whose binding is not
// ConcurrencySafe runs one call at a time across every runner the returned
// tools are given to.
//
// The runner declares the tools without strict. To have strict set where
// [StrictEligible] allows, also pass [BetaToolParams] of the same definitions
// as the runner's Params.Tools: the runner keeps a declaration it is given
// for a tool of the same name.
func BetaTools(defs []purramcp.ToolDefinition, opts Options) ([]anthropic.BetaTool, error) {
	if err := checkDefinitions(defs); err != nil {
		return nil, err
	}
	tools := make([]anthropic.BetaTool, len(defs))
	for i, d := range defs {
		tools[i] = &betaTool{callable: newCallable(d), opts: opts}
	}
	return tools, nil
}

// BetaToolParams returns the declaration of each definition, in order, as a
// [anthropic.BetaToolUnionParam]: name, description and input schema
// unchanged, and Strict set to true exactly when [StrictEligible] holds for
// the schema (else left unset). It fails as [BetaTools] does.
func BetaToolParams(defs []purramcp.ToolDefinition) ([]anthropic.BetaToolUnionParam, error) {
	if err := checkDefinitions(defs); err != nil {
		return nil, err
	}
	params := make([]anthropic.BetaToolUnionParam, len(defs))
	for i, d := range defs {
		p := &anthropic.BetaToolParam{
			Name:        d.Name,
			Description: anthropic.String(d.Description),
			InputSchema: anthropic.BetaToolInputSchemaParam{ExtraFields: schemaExtras(d.InputSchema)},
		}
		if StrictEligible(d.InputSchema) {
			p.Strict = anthropic.Bool(true)
		}
		params[i] = anthropic.BetaToolUnionParam{OfTool: p}
	}
	return params, nil
}

// betaTool is one registration as an anthropic.BetaTool.
type betaTool struct {
	*callable
	opts Options
}

// Name returns the registration's name.
func (t *betaTool) Name() string { return t.def.Name }

// Description returns the registration's description.
func (t *betaTool) Description() string { return t.def.Description }

// InputSchema returns a fresh copy of the registration's input schema: "type"
// is the params' own "object", every other member goes out as it is.
func (t *betaTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	return anthropic.BetaToolInputSchemaParam{ExtraFields: schemaExtras(t.def.InputSchema)}
}

// Execute runs one call; see [BetaTools] for what each outcome becomes.
func (t *betaTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	out, err := t.call(ctx, "", input, t.opts)
	if err != nil {
		return nil, err
	}
	if out.code != "" {
		return nil, &ToolError{Code: out.code}
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: out.text}}}, nil
}
