// Package purraeino turns purramcp registrations into Eino tools
// (github.com/cloudwego/eino), in place of eino-ext's officialmcp tools.
//
// A host discovers its catalog with purramcp and hands the registrations to
// a ToolsNode or an agent:
//
//	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", bindings, opts)
//	if err != nil {
//		return err
//	}
//	tools, err := purraeino.Tools(catalog.Registrations(), purraeino.Options{})
//	if err != nil {
//		return err
//	}
//	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m,
//		ToolsConfig: compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: purraeino.UnknownTool}})
//
// and, after a rediscovery (the old catalog went stale), passes the new
// catalog's tools per call (react.WithTools, compose.WithToolList) or builds
// a new agent. A host with many servers serves a fleet (package
// purra.dev/purramcp/fleet) through [NewToolset] and passes
// [Toolset.Tools], which reads the fleet each time, with each run.
//
// Every tool call runs the registration's Run exactly once with the model's
// argument text unchanged, so exactly one tools/call reaches the server;
// nothing is retried. The tool's output is [purramcp.ToolResult.ModelJSON]:
// the validated envelope on success and {"error":"mcp_..."} on a known
// failure, both normal tool messages. Eino ends the whole run when a tool
// returns a Go error and never shows its text to the model, so the two
// outcomes that should end the run are returned as errors:
// [purramcp.ErrCanceled], and the host's own ScopeFunc failure (also
// reported to [Options.OnHostError]). No remote text reaches the model
// other than the descriptions.
package purraeino
