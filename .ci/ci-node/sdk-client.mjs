// sdk-client drives one MCP server with the official TypeScript SDK client,
// for the gateway's tests: it lists the tools, makes the calls a plan names
// and prints one JSON object on standard output:
//
//   {"tools": [names], "results": [CallToolResult or {"error": message}]}
//
// Usage: node sdk-client.mjs PLAN, where PLAN is JSON:
//   {"transport": "stdio", "command": "...", "args": [...], "env": {...}}
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "..."}
// plus "calls": [{"name": ..., "arguments": {...}}].
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

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
const client = new Client({ name: "purramcp-ci-sdk-client", version: "1.0.0" });
await client.connect(transport);
const out = { tools: [], results: [] };
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
