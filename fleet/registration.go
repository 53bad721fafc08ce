package fleet

import (
	"context"
	"encoding/json"
	"time"

	"purra.dev/purramcp"
)

// registrations appends the server's fleet-level registrations to defs
// (none unless ready). Their InputSchema maps are the ones made once for
// the admitted catalog, shared by every caller (see Fleet.Registrations).
func (s *server) registrations(defs []purramcp.ToolDefinition) []purramcp.ToolDefinition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(defs, s.regs...)
}

// wrap returns the fleet-level registrations of the catalog's tools, made
// once per admitted catalog. Each routes every call to the catalog the
// server has at that moment, as long as the server's lineage (the run of
// catalogs with one digest) is still lineage, the one it was made under;
// digest is the catalog's, for the events of the calls it answers itself.
func (s *server) wrap(catalog *purramcp.Catalog, lineage uint64, digest string) []purramcp.ToolDefinition {
	remotes := make(map[string]string, len(s.bindings))
	for remote, b := range s.bindings {
		remotes[b.LocalName] = remote
	}
	regs := catalog.Registrations()
	for i := range regs {
		tool := toolName{local: regs[i].Name, remote: remotes[regs[i].Name], digest: digest}
		regs[i].Run = s.runner(lineage, tool)
		regs[i].Scope = s.scoper(lineage, regs[i].Name)
	}
	return regs
}

// A toolName names a registration in the events of the calls the fleet
// answers without its catalog.
type toolName struct{ local, remote, digest string }

// route is where a call of a registration of lineage goes: the current
// registration of name, its session, and a channel closed when the catalog
// is replaced; or the code it answers without sending anything:
// mcp_catalog_stale once a catalog with another digest came, and
// mcp_connection_closed while the server is down.
type route struct {
	def  purramcp.ToolDefinition
	conn *conn
	cat  *purramcp.Catalog
	swap <-chan struct{}
	code string
}

// route returns the route of a call of lineage's registration of name.
func (s *server) route(lineage uint64, name string) route {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.lineage != lineage:
		return route{code: purramcp.CodeCatalogStale}
	case s.catalog == nil:
		return route{code: purramcp.CodeConnectionClosed}
	}
	return route{def: s.defs[name], conn: s.conn, cat: s.catalog, swap: s.swap}
}

// current returns the route of a call once the server's catalog is
// current: when the catalog r names is already stale (a list change the
// supervisor is rediscovering, or a session that ended), a call on it
// would fail without sending anything, so it waits until the catalog is
// replaced (the same digest keeps the lineage), ctx ends, or the server's
// Timeout passes, and routes again.
func (s *server) current(ctx context.Context, r route, lineage uint64, name string) route {
	if r.code != "" || !r.cat.Stale() {
		return r
	}
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-r.swap:
		return s.route(lineage, name)
	case <-ctx.Done():
	case <-t.C:
	}
	return r // the catalog's own Run then reports the stale catalog
}

// runner is the Run of a fleet registration: route, then the catalog's own
// Run (which sends at most one tools/call, never retried, and reports its
// event), then account for the outcome on the session it ran on. A call
// the route answers itself (the server down or unauthorized, the catalog
// stale) sends nothing and is reported to the Observer as one call event
// with its code, like every other answer.
func (s *server) runner(lineage uint64, tool toolName) func(context.Context, json.RawMessage,
	purramcp.ToolContext) (purramcp.ToolResult, error) {
	maxTimeouts := s.f.opts.MaxConsecutiveTimeouts
	name := tool.local
	return func(ctx context.Context, args json.RawMessage, call purramcp.ToolContext) (purramcp.ToolResult, error) {
		start := time.Now()
		r := s.current(ctx, s.route(lineage, name), lineage, name)
		if r.code != "" {
			if observe := s.f.opts.Observer; observe != nil {
				observe(ctx, purramcp.Event{Kind: purramcp.EventCall, ServerID: s.id, RevisionDigest: tool.digest,
					LocalName: name, RemoteName: tool.remote, CallID: call.CallID, RunID: call.RunID, Code: r.code,
					ArgumentBytes: len(args), Duration: time.Since(start), Start: start})
			}
			return purramcp.FailedResult(r.code), nil
		}
		res, err := r.def.Run(ctx, args, call)
		if err == nil {
			r.conn.observe(res.ErrorCode, maxTimeouts)
		}
		return res, err
	}
}

// scoper is the Scope of a fleet registration: route, then the catalog's
// own Scope.
func (s *server) scoper(lineage uint64, name string) purramcp.ScopeFunc {
	return func(ctx context.Context, args map[string]any, call purramcp.ToolContext) error {
		r := s.current(ctx, s.route(lineage, name), lineage, name)
		if r.code != "" {
			return &purramcp.Error{Code: r.code}
		}
		return r.def.Scope(ctx, args, call)
	}
}
