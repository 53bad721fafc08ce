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
// catalogs with one digest) is still lineage, the one it was made under.
func (s *server) wrap(catalog *purramcp.Catalog, lineage uint64) []purramcp.ToolDefinition {
	regs := catalog.Registrations()
	for i := range regs {
		regs[i].Run = s.runner(lineage, regs[i].Name)
		regs[i].Scope = s.scoper(lineage, regs[i].Name)
	}
	return regs
}

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
// Run (which sends at most one tools/call, never retried), then account
// for the outcome on the session it ran on.
func (s *server) runner(lineage uint64, name string) func(context.Context, json.RawMessage,
	purramcp.ToolContext) (purramcp.ToolResult, error) {
	maxTimeouts := s.f.opts.MaxConsecutiveTimeouts
	return func(ctx context.Context, args json.RawMessage, call purramcp.ToolContext) (purramcp.ToolResult, error) {
		r := s.current(ctx, s.route(lineage, name), lineage, name)
		if r.code != "" {
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
