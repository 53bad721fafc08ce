// Package oauth is the client side of MCP authorization (OAuth 2.1), on
// the model of golang.org/x/oauth2 and go-sdk's auth client: sign in once,
// keep the credentials, and authorize an MCP client's HTTP requests with
// them.
//
//   - [Login] signs in to an OAuth-protected MCP server with the
//     authorization code flow (PKCE, resource indicator, a loopback
//     redirect that only takes its own answer), discovering the server's
//     authorization server once, and saves the [Credentials].
//   - A [Store] keeps them between runs; [FileStore] is one JSON file per
//     server in a directory that must be the user's own. A nil Store, in
//     every API that takes one, means no OAuth.
//   - A [Keeper] holds one server's credentials for its sessions and
//     refreshes them once per credential, in this process and across
//     processes that share a [Locker] store ([Keeper.Keep] in the
//     background).
//   - [Transport] is an http.RoundTripper that puts the keeper's token on
//     the server's requests, only to its origin, and turns a 401 into
//     purramcp.ErrUnauthorized: the request is not resent.
//
// Every request made for OAuth (metadata, registration, token, refresh)
// runs under the MCP server's egress rule: https only (loopback http for a
// loopback server), no address more internal than the server's, checked
// at dial time and on every redirect. Failures are the mcp_auth_* codes
// of package purramcp (and mcp_egress_refused); none carries remote text,
// and no error, status or log line holds a token, a code, a verifier or a
// secret.
package oauth
