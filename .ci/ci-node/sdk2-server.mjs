// sdk2-server is an MCP server on the TypeScript SDK v2
// (@modelcontextprotocol/server) for the command's tests, with one read
// tool, notes.search ({q: string} -> text), over stdio (serveStdio) or over
// streamable HTTP (createMcpHandler) on 127.0.0.1 (an ephemeral port,
// printing "listening on URL" on standard error).
//
// Usage: node sdk2-server.mjs [MODE] [TRANSPORT], where MODE is
//   both    (default) 2025-era openings and 2026-07-28 alike (over HTTP,
//           the former statelessly);
//   modern  only 2026-07-28 (legacy: 'reject');
//   legacy  only 2025-era openings (stdio only: a hand-wired stdio server,
//           as an SDK before 2026-07-28 serves);
// and TRANSPORT is stdio (default) or http.
import http from "node:http";
import { McpServer, createMcpHandler, fromJsonSchema } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";

const mode = process.argv[2] ?? "both";
const transport = process.argv[3] ?? "stdio";
function notes() {
  const server = new McpServer({ name: "notes", version: "2.4.0" });
  server.registerTool("notes.search", {
    description: "Search the notes",
    inputSchema: fromJsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false }),
    annotations: { readOnlyHint: true, destructiveHint: false },
  }, async ({ q }) => ({ content: [{ type: "text", text: `found ${q}` }] }));
  return server;
}
if (!["both", "modern", "legacy"].includes(mode)) {
  throw new Error(`unknown mode ${mode}`);
}
const options = mode === "modern" ? { legacy: "reject" } : {};
switch (transport) {
  case "stdio":
    if (mode === "legacy") {
      await notes().connect(new StdioServerTransport());
    } else {
      serveStdio(() => notes(), options);
    }
    break;
  case "http":
    if (mode === "legacy") {
      throw new Error("mode legacy is stdio only");
    }
    serveHTTP(createMcpHandler(() => notes(), options));
    break;
  default:
    throw new Error(`unknown transport ${transport}`);
}

// serveHTTP serves handler's fetch on an ephemeral port of 127.0.0.1.
function serveHTTP(handler) {
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
}
