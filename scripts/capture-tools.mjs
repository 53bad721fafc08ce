// Captures the tools/list catalog of one stdio MCP server as plain data.
//
//   node scripts/capture-tools.mjs OUT.json -- COMMAND [ARGS...]
//
// It speaks JSON-RPC over the server's stdin/stdout: initialize,
// notifications/initialized, then tools/list page by page (at most 32 pages),
// and writes {"tools": [...]} with every tool exactly as the server sent it
// (no field added, removed or reordered). No tool is called. It exits non-zero
// when the server does not answer within 240 s.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const sep = args.indexOf("--");
if (sep !== 1 || args.length < 3) {
  console.error("usage: node capture-tools.mjs OUT.json -- COMMAND [ARGS...]");
  process.exit(2);
}
const out = args[0];
const [command, ...rest] = args.slice(2);
const child = spawn(command, rest, { stdio: ["pipe", "pipe", "ignore"] });
const timer = setTimeout(() => fail("timeout"), 240_000);

let buffer = "";
let nextId = 1;
const pending = new Map();
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl).trim();
    buffer = buffer.slice(nl + 1);
    if (!line.startsWith("{")) continue; // some servers log to stdout
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    if (msg.id !== undefined && pending.has(msg.id) && (msg.result !== undefined || msg.error !== undefined)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result);
    } else if (msg.id !== undefined && msg.method !== undefined) {
      // A server-initiated request (roots/list, ping): answer with an empty result.
      const result = msg.method === "roots/list" ? { roots: [] } : {};
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\n");
    }
  }
});
child.on("exit", (code) => fail("server exited with " + code));

function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function fail(why) {
  console.error("capture-tools:", why);
  process.exit(1);
}

const init = await request("initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "purramcp-capture", version: "1" },
});
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
const tools = [];
let cursor;
for (let page = 0; page < 32; page++) {
  const result = await request("tools/list", cursor === undefined ? {} : { cursor });
  tools.push(...(result.tools ?? []));
  cursor = result.nextCursor;
  if (!cursor) break;
}
clearTimeout(timer);
const server = init.serverInfo ?? {};
writeFileSync(out, JSON.stringify({ server: { name: server.name, version: server.version }, tools }, null, 1) + "\n");
child.removeAllListeners("exit");
child.kill();
process.exit(0);
