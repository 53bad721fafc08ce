// Package purraanthropic hands purramcp registrations to the Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2) without giving up any of
// purramcp's guarantees.
//
// Two ways in:
//
//   - [Toolbox.BetaTools] turns the registrations into [anthropic.BetaTool]
//     values for the SDK's own loop, client.Beta.Messages.NewToolRunner.
//   - [Toolbox.ToolParams] declares the same tools on a Messages request,
//     and [Toolbox.Dispatch] answers one assistant message's tool_use blocks
//     with one tool_result block each, in order, for hosts that run their
//     own loop.
//
// The functions [BetaTools], [ToolParams] and [Dispatch] do the same over a
// fixed list of definitions.
//
// On both paths the tool's name, description and input schema reach the API
// exactly as purramcp bound them (never rewritten to please the provider).
// Each model tool call becomes one call of the registration's Run, which sends
// at most one tools/call. What the model reads back is
// [purramcp.ToolResult.ModelJSON] on success and a bare code on a failure
// ({"error":"mcp_..."}, marked is_error); server text other than the validated
// envelope never reaches it, and neither does the text of a host's own
// ScopeFunc error ([purramcp.CodeHostFailure] instead, reported to
// [Options.OnHostError]). Only a cancellation ([purramcp.ErrCanceled]) is
// returned as a Go error.
//
// A [Toolbox] serves any source of registrations: a catalog, or a fleet of
// servers (package purra.dev/purramcp/fleet), which it reads again at each
// [Toolbox.Refresh] (the fleet's OnChange). The package never rediscovers:
// once a catalog is stale every call gets mcp_catalog_stale until the host
// rediscovers and builds new tools (for the runner, a new runner: it fixes
// its tools when it is created).
package purraanthropic
