// sdk2-server is a stdio MCP server on the TypeScript SDK v2
// (@modelcontextprotocol/server, serveStdio) for the command's tests, with
// one read tool, notes.search ({q: string} -> text).
//
// Usage: node sdk2-server.mjs [MODE], where MODE is
//   both    (default) 2025-era openings and 2026-07-28 alike;
//   modern  only 2026-07-28 (serveStdio's legacy: 'reject');
//   legacy  only 2025-era openings (a hand-wired stdio server, as an SDK
//           before 2026-07-28 serves).
import { McpServer, fromJsonSchema } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";

const mode = process.argv[2] ?? "both";
function notes() {
  const server = new McpServer({ name: "notes", version: "2.4.0" });
  server.registerTool("notes.search", {
    description: "Search the notes",
    inputSchema: fromJsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false }),
    annotations: { readOnlyHint: true, destructiveHint: false },
  }, async ({ q }) => ({ content: [{ type: "text", text: `found ${q}` }] }));
  return server;
}
switch (mode) {
  case "both":
    serveStdio(() => notes());
    break;
  case "modern":
    serveStdio(() => notes(), { legacy: "reject" });
    break;
  case "legacy":
    await notes().connect(new StdioServerTransport());
    break;
  default:
    throw new Error(`unknown mode ${mode}`);
}
