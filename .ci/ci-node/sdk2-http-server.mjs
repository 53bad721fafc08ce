// sdk2-http-server serves sdk2-server.mjs's notes.search over streamable
// HTTP with the TypeScript SDK v2's createMcpHandler on 127.0.0.1 (an
// ephemeral port), printing "listening on URL" on standard error.
//
// Usage: node sdk2-http-server.mjs [MODE], MODE "both" (default: 2026-07-28
// and 2025-era requests, the latter statelessly) or "modern" (legacy:
// 'reject').
import http from "node:http";
import { McpServer, createMcpHandler, fromJsonSchema } from "@modelcontextprotocol/server";

const mode = process.argv[2] ?? "both";
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "notes", version: "2.4.0" });
  server.registerTool("notes.search", {
    description: "Search the notes",
    inputSchema: fromJsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false }),
    annotations: { readOnlyHint: true, destructiveHint: false },
  }, async ({ q }) => ({ content: [{ type: "text", text: `found ${q}` }] }));
  return server;
}, mode === "modern" ? { legacy: "reject" } : {});

const listener = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") headers.set(k, v);
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method, headers, body: ["GET", "HEAD"].includes(req.method) ? undefined : body,
  });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (response.body) {
    for await (const chunk of response.body) res.write(chunk);
  }
  res.end();
});
listener.listen(0, "127.0.0.1", () => {
  process.stderr.write(`listening on http://127.0.0.1:${listener.address().port}/mcp\n`);
});
