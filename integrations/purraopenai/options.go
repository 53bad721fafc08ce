package purraopenai

import "purra.dev/purramcp/integrations/internal/hostcore"

// Options configures a [Toolbox] with the host's two hooks, the ones every
// integration takes. The zero value works: no host-failure hook, and a
// purramcp.ToolContext holding only the call id and the tool name.
//
// Call, when set, supplies the rest of the ToolContext of each call (run,
// agent and lease ids). Whatever it returns, ToolName is set to the tool's
// name, and CallID to the model's call id when that is not empty.
//
// OnHostError, when set, is called with the tool's name and the error
// whenever the host's own ScopeFunc failed (Run returned an error other than
// purramcp.ErrCanceled). The model is shown only {"error":"host_failure"};
// err is for the host's logs. It may be called concurrently when the host
// runs calls concurrently.
type Options = hostcore.Hooks
