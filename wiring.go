package purramcp

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/bounding"
)

// The wiring check: Attach and Connect accept a session only when its
// client was built by this monitor's NewClient, known by construction.
// NewClient installs a sending middleware that records the session of every
// request the client sends; every session go-sdk connects sends its
// handshake (initialize, or server/discover) through it before
// client.Connect returns, so a session of one of this monitor's clients is
// recorded before the host can attach it, and a session of any other client
// (the host's own, or another monitor's) never is. A client's options
// cannot change once go-sdk has built it, so a recorded session carries the
// options NewClient applied. The middleware also marks each request's ctx
// with its session (bounding.WithSession): the monitor's bounding layer
// learns from the handshake it carries which session it connected, so that
// Attach refuses any other once the layer is connected. Both rest on go-sdk
// sending every request through the client's sending middleware with the
// ctx it then writes with; a go-sdk that stopped doing so would make Attach
// fail (mcp_binding_invalid), never pass.

// maxUnattached is how many sessions a monitor recognises before one is
// attached: the last ones its clients connected. A monitor serves one
// session, so a host that connects more before attaching one is mis-wired.
const maxUnattached = 4

// sessionRecord is a monitor's record of the sessions its clients
// connected. Once a session is attached it records nothing more.
type sessionRecord struct {
	// attached is set once a session was attached; the middleware then
	// only passes requests on.
	attached atomic.Bool
	// mu guards seen and next: a ring of the last sessions seen.
	mu   sync.Mutex
	seen [maxUnattached]*mcp.ClientSession
	next int
}

// middleware is the sending middleware NewClient installs: it records the
// session of each request, and marks the request's ctx with it, until a
// session is attached.
func (r *sessionRecord) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !r.attached.Load() && req != nil {
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok && cs != nil {
				r.note(cs)
				ctx = bounding.WithSession(ctx, cs) // the layer learns its session
			}
		}
		return next(ctx, method, req)
	}
}

// note records cs, unless it is recorded already or a session was attached;
// the oldest record makes way when the ring is full.
func (r *sessionRecord) note(cs *mcp.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.attached.Load() {
		return
	}
	for _, s := range r.seen {
		if s == cs {
			return
		}
	}
	r.seen[r.next] = cs
	r.next = (r.next + 1) % maxUnattached
}

// has reports whether cs is a recorded session.
func (r *sessionRecord) has(cs *mcp.ClientSession) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if s == cs {
			return true
		}
	}
	return false
}

// attach records that a session was attached: nothing is recorded any more
// and the record is dropped.
func (r *sessionRecord) attach() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attached.Store(true)
	r.seen = [maxUnattached]*mcp.ClientSession{}
}
