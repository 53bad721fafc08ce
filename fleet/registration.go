package fleet

import (
	"context"
	"encoding/json"

	"purra.dev/purramcp"
)

// registrations appends a fleet-level registration of each tool of the
// server's ready catalog to defs. Each routes every call to the catalog
// the server has at that moment, as long as the server's lineage (the run
// of catalogs with one digest) is the one it was handed out under.
func (s *server) registrations(defs []purramcp.ToolDefinition) []purramcp.ToolDefinition {
	s.mu.Lock()
	catalog, lineage := s.catalog, s.lineage
	s.mu.Unlock()
	if catalog == nil {
		return defs
	}
	for _, d := range catalog.Registrations() {
		d.Run = s.runner(lineage, d.Name)
		d.Scope = s.scoper(lineage, d.Name)
		defs = append(defs, d)
	}
	return defs
}

// route returns the current registration of name and its session, or the
// code a registration of lineage answers without sending anything:
// mcp_catalog_stale once a catalog with another digest came, and
// mcp_connection_closed while the server is down.
func (s *server) route(lineage uint64, name string) (purramcp.ToolDefinition, *conn, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.lineage != lineage:
		return purramcp.ToolDefinition{}, nil, purramcp.CodeCatalogStale
	case s.catalog == nil:
		return purramcp.ToolDefinition{}, nil, purramcp.CodeConnectionClosed
	}
	return s.defs[name], s.conn, ""
}

// runner is the Run of a fleet registration: route, then the catalog's own
// Run (which sends at most one tools/call, never retried), then account
// for the outcome on the session it ran on.
func (s *server) runner(lineage uint64, name string) func(context.Context, json.RawMessage,
	purramcp.ToolContext) (purramcp.ToolResult, error) {
	maxTimeouts := s.f.opts.MaxConsecutiveTimeouts
	return func(ctx context.Context, args json.RawMessage, call purramcp.ToolContext) (purramcp.ToolResult, error) {
		def, c, code := s.route(lineage, name)
		if code != "" {
			return failedResult(code), nil
		}
		res, err := def.Run(ctx, args, call)
		if err == nil {
			c.observe(res.ErrorCode, maxTimeouts)
		}
		return res, err
	}
}

// scoper is the Scope of a fleet registration: route, then the catalog's
// own Scope.
func (s *server) scoper(lineage uint64, name string) purramcp.ScopeFunc {
	return func(ctx context.Context, args map[string]any, call purramcp.ToolContext) error {
		def, _, code := s.route(lineage, name)
		if code != "" {
			return &purramcp.Error{Code: code}
		}
		return def.Scope(ctx, args, call)
	}
}

// failedResult is a known failure as purramcp's Run reports one: the empty
// envelope, effect not started.
func failedResult(code string) purramcp.ToolResult {
	return purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}}, EffectState: "not_started",
		ErrorCode: code}
}
