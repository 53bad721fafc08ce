package purraopenai

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"purra.dev/purramcp"
)

// CodeUnknownTool is what the model is shown, as {"error":"unknown_tool"},
// for a call naming no tool in the [Toolbox].
const CodeUnknownTool = "unknown_tool"

// A Toolbox holds one catalog's registrations for an OpenAI host loop. Its
// methods are safe for concurrent use; a registration whose binding is not
// ConcurrencySafe runs one call at a time across all of them.
type Toolbox struct {
	defs   []purramcp.ToolDefinition
	byName map[string]*callable
	opts   Options
}

// callable is one registration and, when the binding is not
// ConcurrencySafe, the gate that lets one call of it run at a time.
type callable struct {
	def  purramcp.ToolDefinition
	gate chan struct{} // nil when def.ConcurrencySafe
}

// New returns a Toolbox over defs (copied; typically
// catalog.Registrations()). It fails, naming the tool, when a name is not a
// valid OpenAI function name (^[A-Za-z0-9_-]{1,64}$; every purramcp local
// name is) or is repeated, when Run is nil, or when an input schema's root is
// not type "object". After a rediscovery the host builds a new Toolbox.
func New(defs []purramcp.ToolDefinition, opts Options) (*Toolbox, error) {
	if err := checkDefinitions(defs); err != nil {
		return nil, err
	}
	tb := &Toolbox{defs: append([]purramcp.ToolDefinition(nil), defs...),
		byName: make(map[string]*callable, len(defs)), opts: opts}
	for _, d := range tb.defs {
		c := &callable{def: d}
		if !d.ConcurrencySafe {
			c.gate = make(chan struct{}, 1)
		}
		tb.byName[d.Name] = c
	}
	return tb, nil
}

// ChatTools returns the Chat Completions declaration of every tool, in the
// order given to New: name, description and parameters (a fresh copy of the
// input schema) unchanged, and strict:true exactly when [StrictEligible]
// holds for the schema (else strict is left out).
func (tb *Toolbox) ChatTools() []openai.ChatCompletionToolUnionParam {
	tools := make([]openai.ChatCompletionToolUnionParam, len(tb.defs))
	for i, d := range tb.defs {
		fn := shared.FunctionDefinitionParam{
			Name:        d.Name,
			Description: openai.String(d.Description),
			Parameters:  shared.FunctionParameters(cloneSchema(d.InputSchema)),
		}
		if StrictEligible(d.InputSchema) {
			fn.Strict = openai.Bool(true)
		}
		tools[i] = openai.ChatCompletionFunctionTool(fn)
	}
	return tools
}

// ResponsesTools returns the Responses declaration of every tool, in the
// order given to New: name, description and parameters (a fresh copy of the
// input schema) unchanged. The Responses API requires strict on every
// function and treats it as true when absent, so it is always sent: true
// exactly when [StrictEligible] holds, else false.
func (tb *Toolbox) ResponsesTools() []responses.ToolUnionParam {
	tools := make([]responses.ToolUnionParam, len(tb.defs))
	for i, d := range tb.defs {
		t := responses.ToolParamOfFunction(d.Name, cloneSchema(d.InputSchema), StrictEligible(d.InputSchema))
		t.OfFunction.Description = openai.String(d.Description)
		tools[i] = t
	}
	return tools
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
		output := errorJSON(CodeUnknownTool)
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

// RunCall runs one model tool call and returns the output to send back: on
// Chat Completions as the tool message's content, on Responses as the
// function_call_output's output (the host builds that item; its constructor
// differs across openai-go v3 minor versions). arguments is passed to Run as
// it is (the raw text the model sent; "" means {}), and callID becomes
// ToolContext.CallID. The output is:
//
//   - on success, [purramcp.ToolResult.ModelJSON];
//   - on a failure, {"error":"mcp_..."};
//   - when the host's ScopeFunc failed, {"error":"host_failure"}, after
//     calling Options.OnHostError;
//   - for a name in no definition, {"error":"unknown_tool"}.
//
// The only error is [purramcp.ErrCanceled], when ctx ends.
func (tb *Toolbox) RunCall(ctx context.Context, callID, name, arguments string) (string, error) {
	c, ok := tb.byName[name]
	if !ok {
		return errorJSON(CodeUnknownTool), nil
	}
	if c.gate != nil {
		select {
		case c.gate <- struct{}{}:
			defer func() { <-c.gate }()
		case <-ctx.Done():
			return "", purramcp.ErrCanceled
		}
	}
	var args json.RawMessage
	if arguments != "" {
		args = json.RawMessage(arguments)
	}
	res, err := c.def.Run(ctx, args, tb.opts.toolContext(ctx, callID, c.def))
	switch {
	case err == nil:
		return res.ModelJSON(), nil
	case errors.Is(err, purramcp.ErrCanceled):
		return "", purramcp.ErrCanceled
	default:
		if tb.opts.OnHostError != nil {
			tb.opts.OnHostError(ctx, name, err)
		}
		return errorJSON(purramcp.CodeHostFailure), nil
	}
}

// errorJSON is the model-visible text of a failure with code.
func errorJSON(code string) string { return `{"error":"` + code + `"}` }
