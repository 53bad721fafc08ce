// Package fleet runs many MCP servers for a long life on top of purramcp: a
// config file names the servers and the tools bound from each, a lock file
// records the catalog a person approved for each server, and a [Fleet]
// supervises one session per server, re-admitting a recovered server only
// when its catalog is the approved one.
//
// # Config and lock
//
// [ParseConfig] and [LoadConfig] read the JSON that hosts already keep (a
// "servers" object as VS Code writes it, or "mcpServers" as Claude Desktop
// does), once each server names its tools. Decoding is strict: an unknown
// field, a duplicate key or an invalid value is a [*ConfigError] naming its
// JSON path, and errors.Is(err, purramcp.ErrBindingInvalid) holds for it.
// [LoadLock] and [Lock.WriteFile] read and write the lock file
// (purramcp-lock.json by convention): per server the approved
// revisionDigest and the whole approved snapshot, keys sorted and indented,
// so that a review of a change is a readable diff.
//
// # Supervision
//
// [New] validates a config without I/O; [Fleet.Start] connects every server
// concurrently through the bounding layer ([purramcp.CatalogMonitor.Connect])
// and discovers its tools. A server is ready when its catalog's digest is
// the locked one (or, without a lock, always); otherwise it is unapproved
// until [Fleet.Approve] admits that exact digest. A locked server is
// connected at its locked protocol version while it still speaks it (a
// server that also learned a newer version is not drift); one that no
// longer speaks it is connected at the newest version both speak, and the
// change of version shows in [Fleet.Pending]. A session that ends is
// taken out at once and reconnected after a backoff; a tool list change is
// rediscovered on the live session; consecutive timeouts sever the session.
// No tools/call is ever sent twice: a call in flight when its session fails
// returns its code.
//
// A stdio server runs in its own process group; closing or restarting it
// ends the whole group (where the platform has none, as on Windows and
// Plan 9, only the child itself). Its standard error is kept, the last 4 KiB with
// expanded secrets replaced by ***, in [ServerStatus].Stderr for the host
// (never for a model). [Fleet.Snapshot] returns a ready server's admitted
// snapshot.
//
// # OAuth
//
// An http server that is an OAuth-protected resource is authorized with
// [Options.TokenStore] (and [ConnectOptions.TokenStore]) through package
// oauth: each server's requests carry its stored access token, refreshed
// in the background once per credential; a server with no usable token is
// unauthorized (its [ServerStatus].Code an mcp_auth_* code) until a sign-in
// (oauth.Login) stores one. A nil store means no OAuth.
//
// # One session
//
// [Connect] sets up a single session with one configured server outside
// any Fleet, over the same transport and handshake (for a command-line
// check, or a first look before approving); [ServerConfig.Bindings] and
// [ServerConfig.DiscoveryOptions] give what the fleet discovers it with,
// and [ParseSnapshot] reads one snapshot back, its digest checked.
package fleet
