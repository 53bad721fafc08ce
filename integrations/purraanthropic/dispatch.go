package purraanthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"purra.dev/purramcp"
)

// ToolParams returns the declaration of each definition, in order, for a
// Messages request's Tools: name, description and input schema unchanged, and
// Strict set to true exactly when [StrictEligible] holds for the schema (else
// left unset). It fails, naming the tool, when a definition has no name, a
// repeated name, no Run, or an input schema whose root is not type "object".
func ToolParams(defs []purramcp.ToolDefinition) ([]anthropic.ToolUnionParam, error) {
	if err := checkDefinitions(defs); err != nil {
		return nil, err
	}
	params := make([]anthropic.ToolUnionParam, len(defs))
	for i, d := range defs {
		p := &anthropic.ToolParam{
			Name:        d.Name,
			Description: anthropic.String(d.Description),
			InputSchema: anthropic.ToolInputSchemaParam{ExtraFields: schemaExtras(d.InputSchema)},
		}
		if StrictEligible(d.InputSchema) {
			p.Strict = anthropic.Bool(true)
		}
		params[i] = anthropic.ToolUnionParam{OfTool: p}
	}
	return params, nil
}

// Dispatch answers every tool_use block of msg with one tool_result block,
// in the order of the blocks, for the next user message
// (anthropic.NewUserMessage(blocks...)). The tool uses run one after another;
// each is one call of its definition's Run with the tool_use id as
// ToolContext.CallID and the input exactly as the API sent it (raw JSON, so
// purramcp's strict parse sees duplicate keys and the like). Each result is:
//
//   - on success, [purramcp.ToolResult.ModelJSON];
//   - on a failure, {"error":"mcp_..."} with is_error set;
//   - when the host's ScopeFunc failed, {"error":"host_failure"} with
//     is_error set, after calling Options.OnHostError;
//   - for a name in no definition, {"error":"unknown_tool"} with is_error set.
//
// It returns an error only when ctx ends ([purramcp.ErrCanceled], and no
// blocks) or when defs are invalid as [ToolParams] describes. A nil msg or
// one without tool_use blocks gives no blocks. Calls from concurrent Dispatch
// calls are not serialized against each other; a host that runs several
// loops over the same tools at once and has tools that are not
// ConcurrencySafe serializes those loops itself (or uses [BetaTools]).
func Dispatch(ctx context.Context, defs []purramcp.ToolDefinition, msg *anthropic.Message, opts Options) ([]anthropic.ContentBlockParamUnion, error) {
	if err := checkDefinitions(defs); err != nil {
		return nil, err
	}
	if msg == nil {
		return nil, nil
	}
	byName := make(map[string]*callable, len(defs))
	for _, d := range defs {
		byName[d.Name] = newCallable(d)
	}
	var blocks []anthropic.ContentBlockParamUnion
	for _, block := range msg.Content {
		if block.Type != "tool_use" {
			continue
		}
		use := block.AsToolUse()
		c, ok := byName[use.Name]
		if !ok {
			blocks = append(blocks, anthropic.NewToolResultBlock(use.ID, errorJSON(CodeUnknownTool), true))
			continue
		}
		out, err := c.call(ctx, use.ID, use.Input, opts)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, anthropic.NewToolResultBlock(use.ID, out.text, out.code != ""))
	}
	return blocks, nil
}
