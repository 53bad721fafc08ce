package purraanthropic

import (
	"context"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// Options configures a [Toolbox] (and [BetaTools] and [Dispatch]). The zero
// value works: no host-failure hook, and a [purramcp.ToolContext] holding
// only the tool name and, where the SDK has one, the call id.
type Options struct {
	// OnHostError, when set, is called with the tool's name and the error
	// whenever the host's own ScopeFunc failed (Run returned an error other
	// than [purramcp.ErrCanceled]). The model is shown only
	// {"error":"host_failure"}; err is for the host's logs. It may be called
	// concurrently from the runner's goroutines.
	OnHostError func(ctx context.Context, tool string, err error)
	// Call, when set, supplies the rest of the [purramcp.ToolContext] of each
	// call (run, agent and lease ids). callID is the tool_use id where the
	// SDK passes one to this package (Dispatch), else "". Whatever Call
	// returns, ToolName is set to the tool's name, and CallID to callID when
	// callID is not empty.
	Call func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext
}

// hooks returns the options' hooks in the form the shared call path takes.
func (o Options) hooks() hostcore.Hooks {
	return hostcore.Hooks{Call: o.Call, OnHostError: o.OnHostError}
}
