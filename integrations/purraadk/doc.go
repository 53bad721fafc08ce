// Package purraadk serves a purramcp catalog to an ADK-Go v2 agent
// (google.golang.org/adk/v2) as a tool.Toolset, in place of ADK's own
// mcptoolset.
//
// A host discovers its catalog with purramcp and hands it to the agent:
//
//	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", bindings, opts)
//	if err != nil {
//		return err
//	}
//	tools, err := purraadk.NewToolset("docs", catalog, purraadk.Options{})
//	if err != nil {
//		return err
//	}
//	a, err := llmagent.New(llmagent.Config{Name: "helper", Model: m,
//		Toolsets: []tool.Toolset{tools}})
//
// and, after a rediscovery (the old catalog went stale), tools.Swap(fresh).
// NewToolset also takes a fleet of servers (package purra.dev/purramcp/fleet):
// [Toolset.Tools] reads its source before every model request, so the
// fleet's changes need no wiring.
//
// Every model function call runs the registration's Run exactly once, so
// exactly one tools/call reaches the server; nothing is retried or replayed.
// The function response is [purramcp.ToolResult.Model]: the validated
// envelope on success, {"error":"mcp_..."} on a known failure, and
// {"error":"host_failure"} when the host's own ScopeFunc failed (reported to
// [Options.OnHostError]). No remote error text, and no Go error text other
// than purramcp's fixed cancellation message, reaches the model.
package purraadk
