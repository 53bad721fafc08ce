// sdk-oauth-client signs in to an OAuth-protected MCP server with the
// official TypeScript SDK client and its own OAuth client provider
// (resource metadata discovery, dynamic registration, PKCE, the token
// exchange), for the gateway's tests. The user is the test: when the SDK
// sends the user to the authorization URL, this prints
//
//   {"authorize": "https://..."}
//
// on standard output and reads one line from standard input: the URL the
// authorization server redirected the browser to. It then lists the tools,
// makes the calls the plan names and prints one JSON object:
//
//   {"tools": [[names] per list], "results": [CallToolResult or {"error": message}],
//    "registrations": n, "authorizations": n, "accessToken": "..." (only
//    with "printToken": true, for the test to hand it to another client)}
//
// Usage: node sdk-oauth-client.mjs PLAN, where PLAN is JSON:
//   {"url": "http://127.0.0.1:PORT/mcp", "redirectUrl": "http://127.0.0.1:PORT/callback",
//    "scope": "...", "lists": n (default 1), "calls": [{"name": ..., "arguments": {...}}]}
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const plan = JSON.parse(process.argv[2]);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const counts = { registrations: 0, authorizations: 0 };

// provider keeps everything in memory: one process, one sign-in.
const provider = {
  _client: undefined,
  _tokens: undefined,
  _verifier: undefined,
  get redirectUrl() { return plan.redirectUrl; },
  get clientMetadata() {
    return {
      client_name: "purramcp-ci-sdk-oauth-client",
      redirect_uris: [plan.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(plan.scope ? { scope: plan.scope } : {}),
    };
  },
  clientInformation() { return this._client; },
  saveClientInformation(info) { counts.registrations++; this._client = info; },
  tokens() { return this._tokens; },
  saveTokens(tokens) { this._tokens = tokens; },
  async redirectToAuthorization(url) {
    counts.authorizations++;
    process.stdout.write(JSON.stringify({ authorize: url.toString() }) + "\n");
  },
  saveCodeVerifier(v) { this._verifier = v; },
  codeVerifier() { return this._verifier; },
};

const newTransport = () => new StreamableHTTPClientTransport(new URL(plan.url), { authProvider: provider });
let client = new Client({ name: "purramcp-ci-sdk-oauth-client", version: "1.0.0" });
let transport = newTransport();
try {
  await client.connect(transport);
} catch (err) {
  if (!(err instanceof UnauthorizedError)) throw err;
  const { value: redirected, done } = await lines.next();
  if (done) throw new Error("no redirect URL on standard input");
  const code = new URL(redirected).searchParams.get("code");
  if (!code) throw new Error(`the redirect carries no code: error=${new URL(redirected).searchParams.get("error")} ${new URL(redirected).searchParams.get("error_description")}`);
  await transport.finishAuth(code);
  client = new Client({ name: "purramcp-ci-sdk-oauth-client", version: "1.0.0" });
  transport = newTransport();
  await client.connect(transport);
}
const out = { tools: [], results: [], ...counts };
for (let i = 0; i < (plan.lists ?? 1); i++) {
  const listed = await client.listTools();
  out.tools.push(listed.tools.map((t) => t.name));
}
for (const c of plan.calls ?? []) {
  try {
    out.results.push(await client.callTool({ name: c.name, arguments: c.arguments ?? {} }));
  } catch (err) {
    out.results.push({ error: String(err?.message ?? err) });
  }
}
if (plan.printToken) out.accessToken = provider._tokens?.access_token;
out.registrations = counts.registrations;
out.authorizations = counts.authorizations;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
