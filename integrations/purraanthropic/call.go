package purraanthropic

import (
	"context"
	"encoding/json"
	"errors"

	"purra.dev/purramcp"
)

// CodeUnknownTool is what [Dispatch] shows the model, as {"error":"unknown_tool"},
// for a tool_use naming no tool in its definitions. The SDK's tool runner
// answers such a call itself ("Error: Tool '<name>' not found").
const CodeUnknownTool = "unknown_tool"

// ToolError is the error [BetaTools]' tools return to the tool runner for a
// failed call. The runner shows the model "Error: " + Error() with is_error
// set, so Error() is exactly Code: an mcp_* code or
// [purramcp.CodeHostFailure], never remote or host text.
type ToolError struct {
	// Code is the failure's code.
	Code string
}

// Error returns the code and nothing else.
func (e *ToolError) Error() string { return e.Code }

// errorJSON is the model-visible text of a failure with code.
func errorJSON(code string) string { return `{"error":"` + code + `"}` }

// callable is one registration as this package runs it: the definition and,
// when the binding is not ConcurrencySafe, a gate that lets one call of it
// run at a time.
type callable struct {
	def  purramcp.ToolDefinition
	gate chan struct{} // nil when def.ConcurrencySafe
}

// newCallable returns the callable of def with a fresh gate.
func newCallable(def purramcp.ToolDefinition) *callable {
	c := &callable{def: def}
	if !def.ConcurrencySafe {
		c.gate = make(chan struct{}, 1)
	}
	return c
}

// outcome is what one call produced for the model: the text and whether it
// is a failure (code set).
type outcome struct {
	text string
	code string
}

// call runs the registration once with args as the model sent them. The
// only error it returns is purramcp.ErrCanceled; every other failure is an
// outcome with a code.
func (c *callable) call(ctx context.Context, callID string, args json.RawMessage, opts Options) (outcome, error) {
	if c.gate != nil {
		select {
		case c.gate <- struct{}{}:
			defer func() { <-c.gate }()
		case <-ctx.Done():
			return outcome{}, purramcp.ErrCanceled
		}
	}
	res, err := c.def.Run(ctx, args, opts.toolContext(ctx, callID, c.def))
	switch {
	case err == nil:
		return outcome{text: res.ModelJSON(), code: res.ErrorCode}, nil
	case errors.Is(err, purramcp.ErrCanceled):
		return outcome{}, purramcp.ErrCanceled
	default:
		if opts.OnHostError != nil {
			opts.OnHostError(ctx, c.def.Name, err)
		}
		return outcome{text: errorJSON(purramcp.CodeHostFailure), code: purramcp.CodeHostFailure}, nil
	}
}
