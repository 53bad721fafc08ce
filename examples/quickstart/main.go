// Command quickstart is a newcomer's tour of purramcp that needs no flags and
// no network. It starts a go-sdk MCP server in memory (server.go), wires a
// client exactly as the README's "Host wiring" shows, binds an allowlist of
// tools, prints the snapshot, runs a few calls that succeed and fail, makes
// the server change its tool list, and rediscovers.
//
//	go run ./examples/quickstart
//
// The output is the same on every run: a revisionDigest is a content
// identity of the catalog, so it changes only when the catalog does.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run is the whole tour. It writes to w and returns the first unexpected
// outcome; every goroutine and session it starts has ended when it returns.
func run(w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// The server connects first: the client's Connect performs the handshake.
	t := &tour{ctx: ctx, w: w, server: newDocsServer(), tc: purramcp.ToolContext{RunID: "run-1"}}
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, err := t.server.Connect(ctx, serverTransport, nil)
	if err != nil {
		return err
	}
	defer func() { // after session.Close below; also ends the server on an early return
		serverSession.Close()
		serverSession.Wait()
	}()
	session, err := t.connect(clientTransport)
	if err != nil {
		return err
	}
	defer session.Close()
	steps := []func() error{t.rejectPattern, t.discover, t.calls, t.listChange, t.rediscover}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return t.closeSession(session)
}

// tour is the state the steps share.
type tour struct {
	ctx      context.Context
	w        io.Writer
	server   *docsServer
	monitor  *purramcp.CatalogMonitor
	session  *mcp.ClientSession
	bindings map[string]purramcp.ToolBinding
	catalog  *purramcp.Catalog
	before   purramcp.Snapshot
	tc       purramcp.ToolContext
}

// connect wires the client exactly as the README's "Host wiring" shows.
func (t *tour) connect(transport mcp.Transport) (*mcp.ClientSession, error) {
	fmt.Fprintln(t.w, "1. Connect, wired as in the README")
	t.monitor = purramcp.NewCatalogMonitor()
	client := t.monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	// Connect wraps the transport in the monitor's bounding layer, connects
	// and attaches; a mis-wired client fails here, its session closed.
	session, err := t.monitor.Connect(t.ctx, client, transport, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(t.w, "   negotiated protocol %s\n", t.monitor.ProtocolVersion())
	t.session = session
	// The allowlist: remote name -> local name, read policy and scope.
	t.bindings = map[string]purramcp.ToolBinding{
		"docs.search": {LocalName: "search_docs", Scope: requireRun,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search documents"}},
		"docs.get": {LocalName: "get_doc", Scope: publicOnly,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Read a document"}},
		"docs.stats": {LocalName: "docs_stats", Scope: purramcp.Unscoped,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Document statistics"}},
	}
	return session, nil
}

// options are the README's: StaleRetries settles a discovery that a list
// change interrupts (a server announcing one right after initialization).
func (t *tour) options() purramcp.DiscoveryOptions {
	return purramcp.DiscoveryOptions{Monitor: t.monitor, StaleRetries: 2}
}

// rejectPattern shows that one schema outside the profile fails the whole
// discovery rather than being weakened.
func (t *tour) rejectPattern() error {
	fmt.Fprintln(t.w, "2. Bind docs.lookup too: its input schema uses \"pattern\"")
	withLookup := maps.Clone(t.bindings)
	withLookup["docs.lookup"] = purramcp.ToolBinding{LocalName: "lookup_doc", Scope: publicOnly,
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Look up a document"}}
	_, err := purramcp.DiscoverTools(t.ctx, t.session, "docs", withLookup, t.options())
	fmt.Fprintf(t.w, "   DiscoverTools: %s (nothing is bound; the schema is never weakened)\n", purramcp.CodeOf(err))
	return nil
}

// discover binds the allowlist and prints the snapshot and its digest.
func (t *tour) discover() error {
	fmt.Fprintln(t.w, "3. Discover docs.search, docs.get and docs.stats")
	catalog, err := purramcp.DiscoverTools(t.ctx, t.session, "docs", t.bindings, t.options())
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	t.catalog, t.before = catalog, catalog.Snapshot()
	snapshot, err := json.Marshal(t.before)
	if err != nil {
		return err
	}
	fmt.Fprint(t.w, "   ")
	if err := writeJSON(t.w, snapshot, "   ", 3); err != nil {
		return err
	}
	fmt.Fprintf(t.w, "\n   revisionDigest %s\n", t.before.RevisionDigest)
	return nil
}

// calls runs calls that succeed and calls that fail, each with its code.
func (t *tour) calls() error {
	fmt.Fprintln(t.w, "4. Run")
	steps := []struct{ tool, args string }{
		{"search_docs", `{"q":"cat","limit":5}`},
		{"search_docs", `{"q":"cat","limit":"five"}`}, // not an integer
		{"get_doc", `{"id":"cats-101"}`},
		{"get_doc", `{"id":"private/salaries"}`}, // publicOnly denies it
		{"get_doc", `{"id":"missing"}`},          // the server answers isError
	}
	for _, s := range steps {
		if err := call(t.ctx, t.w, t.server, t.catalog, s.tool, s.args, t.tc); err != nil {
			return err
		}
	}
	return nil
}

// listChange makes the server replace a tool: the catalog turns stale.
func (t *tour) listChange() error {
	fmt.Fprintln(t.w, "5. The server replaces docs.stats (new description and output schema)")
	t.server.replaceStats()
	if err := waitFor(t.ctx, t.catalog.Stale); err != nil {
		return fmt.Errorf("waiting for the list change: %w", err)
	}
	fmt.Fprintf(t.w, "   catalog.Stale() = %t\n", t.catalog.Stale())
	return call(t.ctx, t.w, t.server, t.catalog, "docs_stats", `{}`, t.tc)
}

// rediscover swaps in a new catalog and reports what changed.
func (t *tour) rediscover() error {
	fmt.Fprintln(t.w, "6. Rediscover and swap catalogs")
	catalog, err := purramcp.DiscoverTools(t.ctx, t.session, "docs", t.bindings, t.options())
	if err != nil {
		return fmt.Errorf("rediscover: %w", err)
	}
	t.catalog = catalog
	after := catalog.Snapshot()
	fmt.Fprintf(t.w, "   revisionDigest %s\n", after.RevisionDigest)
	for _, change := range changes(t.before, after) {
		fmt.Fprintf(t.w, "   changed: %s\n", change)
	}
	return call(t.ctx, t.w, t.server, t.catalog, "docs_stats", `{}`, t.tc)
}

// closeSession ends the session: the monitor closes and Run fails closed.
func (t *tour) closeSession(session *mcp.ClientSession) error {
	fmt.Fprintln(t.w, "7. Close the session")
	if err := session.Close(); err != nil {
		return err
	}
	closed := func() bool { return errors.Is(t.monitor.Check(t.monitor.Revision()), purramcp.ErrConnectionClosed) }
	if err := waitFor(t.ctx, closed); err != nil {
		return fmt.Errorf("waiting for the monitor to close: %w", err)
	}
	return call(t.ctx, t.w, t.server, t.catalog, "search_docs", `{"q":"cat"}`, t.tc)
}

// requireRun is the README's scope: calls outside a run are denied.
func requireRun(_ context.Context, _ map[string]any, call purramcp.ToolContext) error {
	if call.RunID == "" {
		return purramcp.Deny("missing run")
	}
	return nil
}

// publicOnly denies private documents. It sees the validated arguments.
func publicOnly(_ context.Context, args map[string]any, _ purramcp.ToolContext) error {
	if id, _ := args["id"].(string); strings.HasPrefix(id, "private/") {
		return purramcp.Deny("private document")
	}
	return nil
}

// waitFor polls cond every millisecond until it holds, for at most 5s: a
// list change or a close reaches the monitor asynchronously.
func waitFor(ctx context.Context, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
