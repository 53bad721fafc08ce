package purraopenai

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
	"purra.dev/purramcp/internal/strictjson"
)

// CodeUnknownTool is what the model is shown, as {"error":"unknown_tool"},
// for a call naming no tool in the [Toolbox].
const CodeUnknownTool = hostcore.CodeUnknownTool

// A Source hands out registrations: a *purramcp.Catalog, or a fleet of
// servers (package purra.dev/purramcp/fleet), whose registrations change as
// servers come, go and are approved.
type Source = hostcore.Source

// A Toolbox serves one source's registrations to an OpenAI host loop. It
// reads the source when it is made and at each [Toolbox.Refresh]; its
// declarations and its calls use the registrations read last. Its methods
// are safe for concurrent use. A registration whose binding is not
// ConcurrencySafe never runs concurrently with itself on one Toolbox, across
// every refresh: one gate per tool name, for the Toolbox's lifetime.
type Toolbox struct {
	box *hostcore.Box
}

// functionName is what the OpenAI API accepts as a function name; every
// purramcp local name matches it.
var functionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// rules are what the API requires of a definition: a valid, unique function
// name and an object input schema; a nil Run could not be called.
var rules = hostcore.Rules{Package: "purraopenai", ValidName: functionName.MatchString, ObjectRoot: true}

// NewToolbox returns a Toolbox over src: a *purramcp.Catalog, or a fleet
// whose Options.OnChange calls [Toolbox.Refresh]. It fails, naming the tool,
// when src is nil or when a registration's name is not a valid OpenAI
// function name (^[A-Za-z0-9_-]{1,64}$; every purramcp local name is) or is
// repeated, has no Run, or has an input schema whose root is not type
// "object".
func NewToolbox(src Source, opts Options) (*Toolbox, error) {
	box, err := hostcore.NewBox(src, rules, opts)
	if err != nil {
		return nil, err
	}
	return &Toolbox{box: box}, nil
}

// New returns a Toolbox over a fixed list of definitions (copied; typically
// catalog.Registrations()), failing as [NewToolbox] does. [Toolbox.Refresh]
// changes nothing on it: after a rediscovery the host builds a new Toolbox,
// or uses NewToolbox with the catalog, or a fleet.
func New(defs []purramcp.ToolDefinition, opts Options) (*Toolbox, error) {
	return NewToolbox(hostcore.Static(defs), opts)
}

// Refresh reads the source again: the next declarations and calls use its
// registrations. Calls already running finish on the registrations they
// started with. A host serving a fleet calls it from the fleet's OnChange.
// On an error (the registrations break what [NewToolbox] checks) the
// Toolbox keeps serving what it read before.
func (tb *Toolbox) Refresh() error { return tb.box.Refresh() }

// ChatTools returns the Chat Completions declaration of every tool, in the
// source's order: name, description and parameters (a fresh copy of the
// input schema) unchanged, and strict:true exactly when [StrictEligible]
// holds for the schema (else strict is left out).
func (tb *Toolbox) ChatTools() []openai.ChatCompletionToolUnionParam {
	return hostcore.Declare(tb.box.Current(), func(d purramcp.ToolDefinition) openai.ChatCompletionToolUnionParam {
		fn := shared.FunctionDefinitionParam{
			Name:        d.Name,
			Description: openai.String(d.Description),
			Parameters:  shared.FunctionParameters(strictjson.CloneObject(d.InputSchema)),
		}
		if StrictEligible(d.InputSchema) {
			fn.Strict = openai.Bool(true)
		}
		return openai.ChatCompletionFunctionTool(fn)
	})
}

// ResponsesTools returns the Responses declaration of every tool, in the
// source's order: name, description and parameters (a fresh copy of the
// input schema) unchanged. The Responses API requires strict on every
// function and treats it as true when absent, so it is always sent: true
// exactly when [StrictEligible] holds, else false.
func (tb *Toolbox) ResponsesTools() []responses.ToolUnionParam {
	return hostcore.Declare(tb.box.Current(), func(d purramcp.ToolDefinition) responses.ToolUnionParam {
		t := responses.ToolParamOfFunction(d.Name, strictjson.CloneObject(d.InputSchema), StrictEligible(d.InputSchema))
		t.OfFunction.Description = openai.String(d.Description)
		return t
	})
}

// ChatToolMessages answers every tool call of msg (an assistant message of a
// Chat Completions response) with one tool message, in order, each carrying
// the call's id and [Toolbox.RunCall]'s output. A call that is not a function
// call (a custom tool) is answered {"error":"unknown_tool"}. The calls run
// one after another. The host appends msg.ToParam() and then these messages
// to the conversation. It returns an error only when ctx ends
// ([purramcp.ErrCanceled], and no messages).
func (tb *Toolbox) ChatToolMessages(ctx context.Context, msg openai.ChatCompletionMessage) ([]openai.ChatCompletionMessageParamUnion, error) {
	if len(msg.ToolCalls) == 0 {
		return nil, nil
	}
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msg.ToolCalls))
	for _, call := range msg.ToolCalls {
		output := hostcore.ErrorJSON(CodeUnknownTool)
		if call.Type == "function" {
			var err error
			if output, err = tb.RunCall(ctx, call.ID, call.Function.Name, call.Function.Arguments); err != nil {
				return nil, err
			}
		}
		out = append(out, openai.ToolMessage(output, call.ID))
	}
	return out, nil
}

// RunCall runs one model tool call on the registration of that name read
// last, and returns the output to send back: on Chat Completions as the tool
// message's content, on Responses as the function_call_output's output (the
// host builds that item; its constructor differs across openai-go v3 minor
// versions). arguments is passed to Run as it is (the raw text the model
// sent; "" means {}), and callID becomes ToolContext.CallID. Run sends at
// most one tools/call; nothing is retried. The output is:
//
//   - on success, [purramcp.ToolResult.ModelJSON];
//   - on a failure, {"error":"mcp_..."};
//   - when the host's ScopeFunc failed, {"error":"host_failure"}, after
//     calling Options.OnHostError;
//   - for a name in no definition, {"error":"unknown_tool"}.
//
// The only error is [purramcp.ErrCanceled], when ctx ends.
func (tb *Toolbox) RunCall(ctx context.Context, callID, name, arguments string) (string, error) {
	var args json.RawMessage
	if arguments != "" {
		args = json.RawMessage(arguments)
	}
	out, err := tb.box.Dispatch(ctx, tb.box.Current(), name, callID, args)
	if err != nil {
		return "", err
	}
	return out.JSON(), nil
}
