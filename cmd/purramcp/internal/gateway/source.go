package gateway

import (
	"time"

	"purra.dev/purramcp"
)

// Upstream states, as a fleet reports them.
const (
	// StateConnecting is a server connecting for the first time or again.
	StateConnecting = "connecting"
	// StateReady is a server whose admitted catalog is live.
	StateReady = "ready"
	// StateUnapproved is a server whose live catalog is not the approved one.
	StateUnapproved = "unapproved"
	// StateBackoff is a server waiting to reconnect after a failure.
	StateBackoff = "backoff"
	// StateUnauthorized is an http server that refused the fleet's OAuth
	// credentials, or has none; Code says which (mcp_auth_required,
	// mcp_auth_expired, mcp_auth_store_failed). It lists no tool until a
	// sign-in (purramcp login) brings it back to ready.
	StateUnauthorized = "unauthorized"
	// StateClosed is a server that was closed.
	StateClosed = "closed"
)

// An Upstream is one upstream server as a [Source] reports it.
type Upstream struct {
	// ID is the server's id in the configuration.
	ID string
	// State is one of the State constants.
	State string
	// Digest is the admitted digest of a ready server and the pending digest
	// of an unapproved one.
	Digest string
	// Code is the mcp_* code of the last failure, "" when none.
	Code string
	// Attempts counts connection attempts since the last success.
	Attempts int
	// Since is when the server entered State.
	Since time.Time
	// Tools are the local names the configuration binds for the server:
	// every tool it may ever serve. GET /status shows the server only to a
	// caller who may see one of them; nil means unknown (always shown).
	Tools []string
	// Snapshot is the admitted catalog's snapshot while the server is ready
	// (the gateway reads each entry's LocalName and OutputSchema from it);
	// it is ignored in every other state.
	Snapshot purramcp.Snapshot
}

// A Source is the set of upstream servers the gateway serves, typically a
// fleet. Both methods must be safe for concurrent use and return values the
// gateway may keep (fresh copies). The gateway lists a registration only
// when a ready upstream's snapshot has an entry with its name.
type Source interface {
	// Registrations returns the ready servers' tools.
	Registrations() []purramcp.ToolDefinition
	// Upstreams returns every configured server's state.
	Upstreams() []Upstream
}
