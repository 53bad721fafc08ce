package purraanthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// CodeUnknownTool is what [Toolbox.Dispatch] shows the model, as
// {"error":"unknown_tool"}, for a tool_use naming no tool it serves. The
// SDK's tool runner answers such a call itself ("Error: Tool '<name>' not
// found").
const CodeUnknownTool = hostcore.CodeUnknownTool

// A Source hands out registrations: a *purramcp.Catalog, or a fleet of
// servers (package purra.dev/purramcp/fleet), whose registrations change as
// servers come, go and are approved.
type Source = hostcore.Source

// A Toolbox serves one source's registrations to the Anthropic SDK: to the
// SDK's tool runner ([Toolbox.BetaTools]) or to a host's own Messages loop
// ([Toolbox.ToolParams], [Toolbox.Dispatch]). It reads the source when it is
// made and at each [Toolbox.Refresh]; its declarations and dispatches use
// the registrations read last. Its methods are safe for concurrent use. A
// registration whose binding is not ConcurrencySafe never runs concurrently
// with itself on one Toolbox, across every refresh and every runner given
// its tools: one gate per tool name, for the Toolbox's lifetime.
type Toolbox struct {
	box *hostcore.Box
}

// rules are what the SDK needs of a definition to send it unchanged: a
// unique non-empty name and an object input schema (the SDK always writes
// "type":"object"); a nil Run could not be called.
var rules = hostcore.Rules{Package: "purraanthropic", ObjectRoot: true}

// NewToolbox returns a Toolbox over src: a *purramcp.Catalog, or a fleet
// whose Options.OnChange calls [Toolbox.Refresh]. It fails, naming the tool,
// when src is nil or a registration has no name, a repeated name, no Run,
// or an input schema whose root is not type "object".
func NewToolbox(src Source, opts Options) (*Toolbox, error) {
	box, err := hostcore.NewBox(src, rules, opts)
	if err != nil {
		return nil, err
	}
	return &Toolbox{box: box}, nil
}

// Refresh reads the source again: the next declarations and dispatches use
// its registrations. Calls already running, and the tools a runner was
// given, keep the registrations they were made from (a runner fixes its
// tools when it is created: build a new one from [Toolbox.BetaTools]). A
// host serving a fleet calls Refresh from the fleet's OnChange. On an error
// (the registrations break what [NewToolbox] checks) the Toolbox keeps
// serving what it read before.
func (tb *Toolbox) Refresh() error { return tb.box.Refresh() }

// ToolParams returns the declaration of each registration, in the source's
// order, for a Messages request's Tools: name, description and input schema
// unchanged, and Strict set to true exactly when [StrictEligible] holds for
// the schema (else left unset).
func (tb *Toolbox) ToolParams() []anthropic.ToolUnionParam {
	return hostcore.Declare(tb.box.Current(), func(d purramcp.ToolDefinition) anthropic.ToolUnionParam {
		return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        d.Name,
			Description: anthropic.String(d.Description),
			InputSchema: anthropic.ToolInputSchemaParam{ExtraFields: schemaExtras(d.InputSchema)},
			Strict:      strict(d.InputSchema),
		}}
	})
}

// Dispatch answers every tool_use block of msg with one tool_result block,
// in the order of the blocks, for the next user message
// (anthropic.NewUserMessage(blocks...)). The tool uses run one after another;
// each is one call of the Run of the registration of that name read last,
// with the tool_use id as ToolContext.CallID and the input exactly as the
// API sent it (raw JSON, so purramcp's strict parse sees duplicate keys and
// the like). Run sends at most one tools/call; nothing is retried. Each
// result is:
//
//   - on success, [purramcp.ToolResult.ModelJSON];
//   - on a failure, {"error":"mcp_..."} with is_error set;
//   - when the host's ScopeFunc failed, {"error":"host_failure"} with
//     is_error set, after calling Options.OnHostError;
//   - for a name in no registration, {"error":"unknown_tool"} with is_error
//     set.
//
// It returns an error only when ctx ends ([purramcp.ErrCanceled], and no
// blocks). A nil msg or one without tool_use blocks gives no blocks.
func (tb *Toolbox) Dispatch(ctx context.Context, msg *anthropic.Message) ([]anthropic.ContentBlockParamUnion, error) {
	if msg == nil {
		return nil, nil
	}
	current := tb.box.Current()
	var blocks []anthropic.ContentBlockParamUnion
	for _, block := range msg.Content {
		if block.Type != "tool_use" {
			continue
		}
		use := block.AsToolUse()
		out, err := tb.box.Dispatch(ctx, current, use.Name, use.ID, use.Input)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, anthropic.NewToolResultBlock(use.ID, out.JSON(), out.Code() != ""))
	}
	return blocks, nil
}

// ToolParams returns the declarations of a fixed list of definitions, as
// [Toolbox.ToolParams] does. It fails as [NewToolbox] does.
func ToolParams(defs []purramcp.ToolDefinition) ([]anthropic.ToolUnionParam, error) {
	tb, err := NewToolbox(hostcore.Static(defs), Options{})
	if err != nil {
		return nil, err
	}
	return tb.ToolParams(), nil
}

// Dispatch answers msg's tool uses over a fixed list of definitions, as
// [Toolbox.Dispatch] does. It fails as [NewToolbox] does when defs are
// invalid. Each call builds its own Toolbox, so calls from concurrent
// Dispatch calls are not serialized against each other: a host that runs
// several loops at once over tools that are not ConcurrencySafe dispatches
// through one [Toolbox].
func Dispatch(ctx context.Context, defs []purramcp.ToolDefinition, msg *anthropic.Message, opts Options) ([]anthropic.ContentBlockParamUnion, error) {
	tb, err := NewToolbox(hostcore.Static(defs), opts)
	if err != nil {
		return nil, err
	}
	return tb.Dispatch(ctx, msg)
}
