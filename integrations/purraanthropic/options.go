package purraanthropic

import "purra.dev/purramcp/integrations/internal/hostcore"

// Options configures a [Toolbox] (and [BetaTools] and [Dispatch]) with the
// host's two hooks, the ones every integration takes. The zero value works:
// no host-failure hook, and a purramcp.ToolContext holding only the tool
// name and, where the SDK has one, the call id.
//
// Call, when set, supplies the rest of the ToolContext of each call (run,
// agent and lease ids). Its callID is the tool_use id where the SDK passes
// one to this package ([Toolbox.Dispatch]), else "". Whatever Call returns,
// ToolName is set to the tool's name, and CallID to callID when callID is
// not empty.
//
// OnHostError, when set, is called with the tool's name and the error
// whenever the host's own ScopeFunc failed (Run returned an error other than
// purramcp.ErrCanceled). The model is shown only {"error":"host_failure"};
// err is for the host's logs. It may be called concurrently from the
// runner's goroutines.
type Options = hostcore.Hooks
