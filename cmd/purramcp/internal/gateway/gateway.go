package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Default caps; see [Options] and memory.go.
const (
	defaultMaxSessionCalls = 8
	defaultMaxWait         = 10 * time.Second
	// maxMaxWait is the longest MaxWait: purramcp's longest call timeout.
	maxMaxWait = 5 * time.Minute
)

// Options configure a [Gateway]. The zero value is usable.
type Options struct {
	// Name and Version name the gateway to its clients in the MCP
	// handshake; "" means "purramcp" and "dev".
	Name, Version string
	// MaxSessionCalls caps the calls one downstream session runs at once
	// (default 8; zero means default). Over stateless HTTP every request is
	// its own session, so the other caps are those that bind there.
	MaxSessionCalls int
	// MaxUserCalls caps the calls one verified user (the subject of an
	// OAuth access token) runs at once over all its sessions (default half
	// of MaxCalls, so that no user takes every slot; zero means default).
	MaxUserCalls int
	// MaxCalls caps the calls the gateway runs at once over every session
	// (default sized from memory, see [DefaultMaxCalls]; zero means
	// default).
	MaxCalls int
	// UpstreamCalls caps the calls the gateway sends one upstream at once,
	// by the upstream's ID (a missing or zero entry means MaxCalls: the
	// gateway does not know what an upstream can take, so only a
	// configured cap holds its calls back). The map is copied.
	UpstreamCalls map[string]int
	// MaxQueue caps the calls waiting for a slot (default twice MaxCalls;
	// zero means default). A call that finds a cap reached waits in turn,
	// its class (its user, else its session) served round robin with the
	// others; a call arriving at a full queue, or whose class already has
	// MaxUserCalls calls waiting, fails [CodeBusy] at once.
	// Nothing is sent upstream for a refused call.
	MaxQueue int
	// MaxWait bounds a call's wait in the queue (default 10s, at most 5m;
	// zero means default); a call still waiting then fails
	// [CodeWaitExpired].
	MaxWait time.Duration
	// Observer, when set, receives a "call" event for each call the gateway
	// refuses itself (a busy gateway, a tool no longer served). Calls that
	// reach a registration's Run are reported by the source's own observer.
	Observer func(context.Context, purramcp.Event)
	// ToolScopes maps a local tool name to the scopes a caller must hold
	// to see and call it. A caller is the subject and scopes of its
	// verified OAuth access token (see [OAuthOptions]); a caller without
	// one (stdio, a static bearer token) holds none. A tool whose scopes a
	// caller lacks is left out of its tools/list answers, and a call of it
	// fails mcp_scope_denied before anything is run. Tools not named need
	// nothing. The map is copied.
	ToolScopes map[string][]string
}

// A Gateway serves a [Source]'s tools as one go-sdk server. It is safe for
// concurrent use; [Gateway.Refresh] may run at any time, from any goroutine.
type Gateway struct {
	src        Source
	server     *mcp.Server
	observer   func(context.Context, purramcp.Event)
	admission  *admission
	tickets    tickets
	toolScopes map[string][]string // never changed after New

	// defs holds the registration each listed name runs and its upstream,
	// swapped whole by Refresh; a call reads it without a lock.
	defs atomic.Pointer[map[string]servedTool]

	// refreshMu serializes Refresh and guards listed.
	refreshMu sync.Mutex
	listed    map[string]listedTool
}

// A servedTool is the registration a listed name runs and its upstream.
type servedTool struct {
	def      purramcp.ToolDefinition
	upstream string
}

// A listedTool is one tool as the go-sdk server lists it.
type listedTool struct {
	server string    // the upstream's ID
	key    string    // the upstream's digest and the rendered tool: a new key re-adds it
	tool   *mcp.Tool // as listed
	def    purramcp.ToolDefinition
}

// New returns a gateway over src with nothing listed yet: call
// [Gateway.Refresh] once the source has settled, and on every change.
// A cap below zero, or a MaxWait below zero or over 5m, fails
// [purramcp.ErrBindingInvalid].
func New(src Source, opts Options) (*Gateway, error) {
	if src == nil || opts.MaxSessionCalls < 0 || opts.MaxUserCalls < 0 || opts.MaxCalls < 0 ||
		opts.MaxQueue < 0 || opts.MaxWait < 0 || opts.MaxWait > maxMaxWait {
		return nil, fmt.Errorf("gateway: invalid options: %w", purramcp.ErrBindingInvalid)
	}
	for _, n := range opts.UpstreamCalls {
		if n < 0 {
			return nil, fmt.Errorf("gateway: invalid options: %w", purramcp.ErrBindingInvalid)
		}
	}
	impl := &mcp.Implementation{Name: opts.Name, Version: opts.Version}
	if impl.Name == "" {
		impl.Name = "purramcp"
	}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	total := orDefault(opts.MaxCalls, DefaultMaxCalls())
	upstreams := maps.Clone(opts.UpstreamCalls)
	g := &Gateway{
		src:      src,
		observer: opts.Observer,
		admission: newAdmission(admitCaps{
			total:   total,
			user:    orDefault(opts.MaxUserCalls, max(1, total/2)),
			session: orDefault(opts.MaxSessionCalls, defaultMaxSessionCalls),
			queue:   orDefault(opts.MaxQueue, 2*total),
			upstream: func(id string) int {
				return orDefault(upstreams[id], total)
			},
			wait: cmp.Or(opts.MaxWait, defaultMaxWait),
		}),
		listed:     map[string]listedTool{},
		toolScopes: map[string][]string{},
	}
	for name, scopes := range opts.ToolScopes {
		if len(scopes) > 0 {
			g.toolScopes[name] = slices.Clone(scopes)
		}
	}
	g.tickets.init()
	g.defs.Store(&map[string]servedTool{})
	// The tools capability is declared up front: go-sdk infers it only from
	// tools present, and a 2026-07-28 client subscribes to list changes only
	// when the server declares it, so a gateway starting with every upstream
	// down would otherwise never tell it about tools arriving later.
	g.server = mcp.NewServer(impl, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	g.server.AddReceivingMiddleware(g.auditUnknown)
	if len(g.toolScopes) > 0 {
		g.server.AddReceivingMiddleware(g.filterList)
	}
	return g, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Server returns the go-sdk server the gateway maintains, to be run over a
// transport (server.Run) or served by [Gateway.HTTPHandler]. The caller must
// not add or remove tools on it.
func (g *Gateway) Server() *mcp.Server { return g.server }

// Tools returns the names the gateway lists, sorted.
func (g *Gateway) Tools() []string {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	return slices.Sorted(maps.Keys(g.listed))
}

// Refresh re-reads the source and updates the listed tools: a ready
// upstream's tools are listed as its registrations and snapshot give them;
// a connecting or backoff upstream keeps the tools it had (its registrations
// answer mcp_connection_closed meanwhile); any other upstream has none.
// Only tools whose upstream digest or rendering changed are re-added, so a
// recovery with the same digest changes nothing a client sees. It returns
// the names it could not list (a tool go-sdk refuses, such as an input
// schema whose root type is not "object"); those are served by no one.
func (g *Gateway) Refresh() []string {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	next := g.collect()
	var refused []string
	var add []*mcp.Tool
	for name, lt := range next {
		if old, ok := g.listed[name]; ok && old.key == lt.key {
			continue
		}
		add = append(add, lt.tool)
	}
	var remove []string
	for name := range g.listed {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
		}
	}
	defs := make(map[string]servedTool, len(next))
	for name, lt := range next {
		defs[name] = servedTool{def: lt.def, upstream: lt.server}
	}
	g.defs.Store(&defs)
	if len(remove) > 0 {
		slices.Sort(remove)
		g.server.RemoveTools(remove...)
	}
	slices.SortFunc(add, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, tool := range add {
		if err := addTool(g.server, tool, g.handle); err != nil {
			refused = append(refused, tool.Name)
			delete(next, tool.Name)
		}
	}
	if len(refused) > 0 {
		served := maps.Clone(defs) // defs is published: never changed in place
		for _, name := range refused {
			delete(served, name)
		}
		g.defs.Store(&served)
		g.server.RemoveTools(refused...) // an earlier rendering may be listed under the name
	}
	g.listed = next
	slices.Sort(refused)
	return refused
}

// collect reads the source into the tools to list, keyed by name.
func (g *Gateway) collect() map[string]listedTool {
	regs := map[string]purramcp.ToolDefinition{}
	for _, def := range g.src.Registrations() {
		regs[def.Name] = def
	}
	ups := g.src.Upstreams()
	slices.SortFunc(ups, func(a, b Upstream) int { return strings.Compare(a.ID, b.ID) })
	next := map[string]listedTool{}
	for _, up := range ups {
		switch up.State {
		case StateReady:
			tools := g.readyTools(up, regs)
			if tools == nil {
				// The registrations were read after the server left ready:
				// keep what it had until the next Refresh tells.
				tools = g.previous(up.ID)
			}
			for _, lt := range tools {
				if _, dup := next[lt.def.Name]; !dup {
					next[lt.def.Name] = lt
				}
			}
		case StateConnecting, StateBackoff:
			for _, lt := range g.previous(up.ID) {
				if _, dup := next[lt.def.Name]; !dup {
					next[lt.def.Name] = lt
				}
			}
		}
	}
	return next
}

// readyTools returns a ready upstream's tools, or nil when none of its
// snapshot's entries is registered.
func (g *Gateway) readyTools(up Upstream, regs map[string]purramcp.ToolDefinition) []listedTool {
	var tools []listedTool
	for _, entry := range up.Snapshot.Entries {
		def, ok := regs[entry.LocalName]
		if !ok {
			continue
		}
		tool, key, err := render(def, entry.OutputSchema, up.ID, up.Digest)
		if err != nil {
			continue // unreachable: the values came from JSON
		}
		tools = append(tools, listedTool{server: up.ID, key: key, tool: tool, def: def})
	}
	return tools
}

// previous returns the tools the gateway lists for an upstream now.
func (g *Gateway) previous(id string) []listedTool {
	var tools []listedTool
	for _, lt := range g.listed {
		if lt.server == id {
			tools = append(tools, lt)
		}
	}
	return tools
}

// render builds the tool go-sdk lists for def with the bound output schema
// (nil when none), and its key: the upstream's id and digest and the tool's
// JSON, so a new digest or any visible change re-adds it.
func render(def purramcp.ToolDefinition, output map[string]any, server, digest string) (*mcp.Tool, string, error) {
	tool := &mcp.Tool{
		Name:        def.Name,
		Title:       def.Policy.Title,
		Description: def.Description,
		InputSchema: def.InputSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	if output != nil {
		// The root $schema is dropped as purramcp drops it from the input
		// schema: the gateway has validated the result already, and a client
		// whose validator defaults to another draft would refuse the tool.
		out := maps.Clone(output)
		delete(out, "$schema")
		tool.OutputSchema = out
	}
	b, err := json.Marshal(tool)
	if err != nil {
		return nil, "", err
	}
	return tool, server + "\x00" + digest + "\x00" + string(b), nil
}

// addTool adds tool to server, reporting go-sdk's refusal as an error: the
// low-level AddTool panics on a schema it cannot serve (a root type other
// than "object", invalid header annotations), before changing anything.
func addTool(server *mcp.Server, tool *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gateway: tool %q refused by go-sdk", tool.Name)
		}
	}()
	if typ, _ := tool.InputSchema.(map[string]any)["type"].(string); typ != "object" {
		return fmt.Errorf("gateway: tool %q: input schema root type is not \"object\"", tool.Name)
	}
	server.AddTool(tool, h)
	return nil
}
