// sdk-client drives one MCP server with an official TypeScript SDK client,
// for the command's tests: it lists the tools, makes the calls a plan names
// and prints one JSON object on standard output:
//
//   {"tools": [names], "results": [CallToolResult or {"error": message}]}
//
// The client is the SDK v1's (@modelcontextprotocol/sdk), or with "sdk": 2
// the SDK v2's (@modelcontextprotocol/client); the v2 output also has
// "protocolVersion", the version negotiated.
//
// Usage: node sdk-client.mjs PLAN, where PLAN is JSON:
//   {"transport": "stdio", "command": "...", "args": [...], "env": {...}}
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "..."}
// plus "calls": [{"name": ..., "arguments": {...}}], and for v2 "sdk": 2 and
// optionally "negotiation": "default" | "auto" | "legacy" | "2026-07-28"
// (a pinned version).
const plan = JSON.parse(process.argv[2]);
const v2 = plan.sdk === 2;
const { Client, StdioClientTransport, StreamableHTTPClientTransport, getDefaultEnvironment } = v2
  ? { ...(await import("@modelcontextprotocol/client")), ...(await import("@modelcontextprotocol/client/stdio")) }
  : {
    ...(await import("@modelcontextprotocol/sdk/client/index.js")),
    ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
    ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
  };

let transport;
if (plan.transport === "stdio") {
  transport = new StdioClientTransport({
    command: plan.command,
    args: plan.args ?? [],
    env: { ...getDefaultEnvironment(), ...(plan.env ?? {}) },
    stderr: "inherit",
  });
} else if (plan.transport === "http") {
  const headers = plan.token ? { Authorization: `Bearer ${plan.token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
} else {
  throw new Error(`unknown transport ${plan.transport}`);
}
const options = {};
switch (plan.negotiation ?? "default") {
  case "default":
    break;
  case "auto":
  case "legacy":
    options.versionNegotiation = { mode: plan.negotiation };
    break;
  default:
    options.versionNegotiation = { mode: { pin: plan.negotiation } };
}
const client = new Client({ name: v2 ? "purramcp-ci-sdk2-client" : "purramcp-ci-sdk-client", version: "1.0.0" }, options);
await client.connect(transport);
const out = v2 ? { protocolVersion: client.getNegotiatedProtocolVersion() ?? "", tools: [], results: [] } : { tools: [], results: [] };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name);
for (const c of plan.calls ?? []) {
  try {
    out.results.push(await client.callTool({ name: c.name, arguments: c.arguments ?? {} }));
  } catch (err) {
    out.results.push({ error: String(err?.message ?? err) });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
