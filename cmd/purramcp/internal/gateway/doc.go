// Package gateway serves the ready tools of a set of upstream MCP servers as
// one go-sdk [mcp.Server], failing closed: it is the engine of
// `purramcp serve`.
//
// The gateway lists exactly the tools its [Source] registers for servers
// whose approved catalog is live, with the bound description, the input
// schema purramcp compiled and, when the catalog bound one, the output
// schema. A call runs the registration's Run, so the arguments are checked
// strictly before anything is sent upstream and exactly one upstream
// tools/call is made, never retried. A success returns the validated text
// blocks and structured content; a failure returns isError with the code as
// its only text. No other upstream text reaches the downstream client.
//
// # Changes
//
// [Gateway.Refresh] re-reads the source. A server that is down (connecting
// or in backoff) keeps its tools listed: their Run answers
// mcp_connection_closed until it is back. A server that came back with the
// same digest changes nothing in the list; one that came back with another
// admitted catalog has its tools replaced, and one whose catalog is not
// approved has them removed. go-sdk then sends notifications/tools/list_changed
// to every client that asked for it.
//
// # HTTP
//
// [Gateway.HTTPHandler] serves streamable HTTP at /mcp and a status view at
// /status, behind a Host and Origin allowlist (loopback by default, against
// DNS rebinding), an optional bearer token compared in constant time, and a
// request body cap. [CheckListen] refuses a non-loopback address without a
// token.
//
// # Limits
//
// [Options] cap the calls in flight per session, per verified user, per
// upstream and in all. A call that finds a cap reached waits in a bounded
// queue, served round robin across users (sessions when there is none),
// for at most [Options].MaxWait; only a full queue ([CodeBusy]) or an
// expired wait ([CodeWaitExpired]) refuses it, without reaching upstream.
// Over HTTP a tools/call is admitted before it reaches its session, so a
// refusal is a 429 with Retry-After.
//
// # Audit
//
// [AuditLog] turns purramcp's observer events (discoveries and calls, never
// payloads) into one JSON line each; the gateway reports the calls it refuses
// itself through [Options.Observer] the same way.
package gateway
