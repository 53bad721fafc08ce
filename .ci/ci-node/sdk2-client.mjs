// sdk2-client drives one MCP server with the TypeScript SDK v2 client
// (@modelcontextprotocol/client), as sdk-client.mjs does with v1, and
// prints one JSON object on standard output:
//
//   {"protocolVersion": negotiated, "tools": [names], "results": [CallToolResult or {"error": message}]}
//
// Usage: node sdk2-client.mjs PLAN, where PLAN is JSON:
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "...",
//    "negotiation": "default" | "auto" | "legacy" | "2026-07-28" (a pinned version),
//    "calls": [{"name": ..., "arguments": {...}}]}
//   or {"transport": "stdio", "command": "...", "args": [...], "env": {...}, ...}
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";

const plan = JSON.parse(process.argv[2]);
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
const client = new Client({ name: "purramcp-ci-sdk2-client", version: "1.0.0" }, options);
await client.connect(transport);
const out = { protocolVersion: client.getNegotiatedProtocolVersion() ?? "", tools: [], results: [] };
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
