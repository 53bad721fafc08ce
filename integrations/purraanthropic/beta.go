package purraanthropic

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// ToolError is the error the tools of [Toolbox.BetaTools] return to the tool
// runner for a failed call. The runner shows the model "Error: " + Error()
// with is_error set, so Error() is exactly Code: an mcp_* code or
// [purramcp.CodeHostFailure], never remote or host text.
type ToolError struct {
	// Code is the failure's code.
	Code string
}

// Error returns the code and nothing else.
func (e *ToolError) Error() string { return e.Code }

// BetaTools returns one [anthropic.BetaTool] per registration read last, in
// the source's order, for client.Beta.Messages.NewToolRunner.
//
// Each tool's Name, Description and InputSchema are the registration's,
// unchanged, and it keeps that registration: a runner fixes its tools when
// it is created, so after a [Toolbox.Refresh] the host builds its next
// runner from a new BetaTools (the old tools answer mcp_catalog_stale once
// their catalog is stale). Execute calls Run once with the input the runner
// passes (the runner re-encodes the decoded tool_use input, so duplicate
// keys are already collapsed there) and returns:
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
// runner runs a turn's tool calls in parallel; the Toolbox's gates keep a
// tool that is not ConcurrencySafe to one call at a time across every runner
// its tools are given to.
//
// The runner declares the tools without strict. To have strict set where
// [StrictEligible] allows, also pass [Toolbox.BetaToolParams] as the
// runner's Params.Tools: the runner keeps a declaration it is given for a
// tool of the same name.
func (tb *Toolbox) BetaTools() []anthropic.BetaTool {
	return hostcore.Declare(tb.box.Current(), func(d purramcp.ToolDefinition) anthropic.BetaTool {
		return &betaTool{def: d, box: tb.box}
	})
}

// BetaToolParams returns the declaration of each registration read last, in
// the source's order, as a [anthropic.BetaToolUnionParam]: name, description
// and input schema unchanged, and Strict set to true exactly when
// [StrictEligible] holds for the schema (else left unset).
func (tb *Toolbox) BetaToolParams() []anthropic.BetaToolUnionParam {
	return hostcore.Declare(tb.box.Current(), func(d purramcp.ToolDefinition) anthropic.BetaToolUnionParam {
		return anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{
			Name:        d.Name,
			Description: anthropic.String(d.Description),
			InputSchema: anthropic.BetaToolInputSchemaParam{ExtraFields: schemaExtras(d.InputSchema)},
			Strict:      strict(d.InputSchema),
		}}
	})
}

// BetaTools returns the runner tools of a fixed list of definitions, as
// [Toolbox.BetaTools] does, sharing one Toolbox's gates. It fails as
// [NewToolbox] does; defs itself is not kept.
func BetaTools(defs []purramcp.ToolDefinition, opts Options) ([]anthropic.BetaTool, error) {
	tb, err := NewToolbox(hostcore.Static(defs), opts)
	if err != nil {
		return nil, err
	}
	return tb.BetaTools(), nil
}

// BetaToolParams returns the declarations of a fixed list of definitions,
// as [Toolbox.BetaToolParams] does. It fails as [NewToolbox] does.
func BetaToolParams(defs []purramcp.ToolDefinition) ([]anthropic.BetaToolUnionParam, error) {
	tb, err := NewToolbox(hostcore.Static(defs), Options{})
	if err != nil {
		return nil, err
	}
	return tb.BetaToolParams(), nil
}

// betaTool is one registration as an anthropic.BetaTool.
type betaTool struct {
	def purramcp.ToolDefinition
	box *hostcore.Box // its gates and hooks
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

// Execute runs one call; see [Toolbox.BetaTools] for what each outcome
// becomes.
func (t *betaTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	out, err := t.box.Call(ctx, t.def, "", input)
	if err != nil {
		return nil, err
	}
	if code := out.Code(); code != "" {
		return nil, &ToolError{Code: code}
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: out.JSON()}}}, nil
}
