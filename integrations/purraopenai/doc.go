// Package purraopenai hands purramcp registrations to a host loop built on
// the OpenAI Go SDK (github.com/openai/openai-go/v3), which has no tool
// abstraction of its own: a [Toolbox] declares the tools on Chat Completions
// ([Toolbox.ChatTools]) or Responses ([Toolbox.ResponsesTools]) requests and
// turns the model's tool calls into tool output ([Toolbox.ChatToolMessages],
// [Toolbox.RunCall]).
//
// The tool's name, description and input schema reach the API exactly as
// purramcp bound them (never rewritten to please the provider); strict is
// set only where [StrictEligible] holds. Each model tool call becomes one
// call of the registration's Run with the argument text the model sent, which
// sends at most one tools/call. The model reads back
// [purramcp.ToolResult.ModelJSON] on success and {"error":"<code>"} on a
// failure; server text other than the validated envelope never reaches it,
// and neither does the text of a host's own ScopeFunc error
// ([purramcp.CodeHostFailure] instead, reported to [Options.OnHostError]).
// Only a cancellation ([purramcp.ErrCanceled]) is returned as a Go error.
//
// The package never rediscovers: once a catalog is stale every call gets
// mcp_catalog_stale until the host rediscovers and builds a new Toolbox. A
// host with many servers serves a fleet (package purra.dev/purramcp/fleet)
// through [NewToolbox] and calls [Toolbox.Refresh] from the fleet's
// OnChange.
package purraopenai
