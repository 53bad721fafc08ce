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
	server := newDocsServer()
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		return err
	}
	defer func() { // after session.Close below; also ends the server on an early return
		serverSession.Close()
		serverSession.Wait()
	}()

	fmt.Fprintln(w, "1. Connect, wired as in the README")
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"},
		monitor.ClientOptions(nil))
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		return err
	}
	defer session.Close()
	if err := monitor.Attach(session); err != nil {
		return err
	}
	fmt.Fprintf(w, "   negotiated protocol %s\n", monitor.ProtocolVersion())

	// The allowlist: remote name -> local name, read policy and scope.
	bindings := map[string]purramcp.ToolBinding{
		"docs.search": {LocalName: "search_docs", Scope: requireRun,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search documents"}},
		"docs.get": {LocalName: "get_doc", Scope: publicOnly,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Read a document"}},
		"docs.stats": {LocalName: "docs_stats", Scope: purramcp.Unscoped,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Document statistics"}},
	}
	opts := purramcp.DiscoveryOptions{Monitor: monitor}

	fmt.Fprintln(w, "2. Bind docs.lookup too: its input schema uses \"pattern\"")
	withLookup := maps.Clone(bindings)
	withLookup["docs.lookup"] = purramcp.ToolBinding{LocalName: "lookup_doc", Scope: publicOnly,
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Look up a document"}}
	_, err = purramcp.DiscoverTools(ctx, session, "docs", withLookup, opts)
	fmt.Fprintf(w, "   DiscoverTools: %s (nothing is bound; the schema is never weakened)\n", purramcp.CodeOf(err))

	fmt.Fprintln(w, "3. Discover docs.search, docs.get and docs.stats")
	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", bindings, opts)
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	before := catalog.Snapshot()
	snapshot, err := json.Marshal(before)
	if err != nil {
		return err
	}
	fmt.Fprint(w, "   ")
	if err := writeJSON(w, snapshot, "   ", 3); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n   revisionDigest %s\n", before.RevisionDigest)

	fmt.Fprintln(w, "4. Run")
	tc := purramcp.ToolContext{RunID: "run-1"}
	steps := []struct{ tool, args string }{
		{"search_docs", `{"q":"cat","limit":5}`},
		{"search_docs", `{"q":"cat","limit":"five"}`}, // not an integer
		{"get_doc", `{"id":"cats-101"}`},
		{"get_doc", `{"id":"private/salaries"}`}, // publicOnly denies it
		{"get_doc", `{"id":"missing"}`},          // the server answers isError
	}
	for _, s := range steps {
		if err := call(ctx, w, server, catalog, s.tool, s.args, tc); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "5. The server replaces docs.stats (new description and output schema)")
	server.replaceStats()
	if err := waitFor(ctx, catalog.Stale); err != nil {
		return fmt.Errorf("waiting for the list change: %w", err)
	}
	fmt.Fprintf(w, "   catalog.Stale() = %t\n", catalog.Stale())
	if err := call(ctx, w, server, catalog, "docs_stats", `{}`, tc); err != nil {
		return err
	}

	fmt.Fprintln(w, "6. Rediscover and swap catalogs")
	catalog, err = purramcp.DiscoverTools(ctx, session, "docs", bindings, opts)
	if err != nil {
		return fmt.Errorf("rediscover: %w", err)
	}
	after := catalog.Snapshot()
	fmt.Fprintf(w, "   revisionDigest %s\n", after.RevisionDigest)
	for _, change := range changes(before, after) {
		fmt.Fprintf(w, "   changed: %s\n", change)
	}
	if err := call(ctx, w, server, catalog, "docs_stats", `{}`, tc); err != nil {
		return err
	}

	fmt.Fprintln(w, "7. Close the session")
	if err := session.Close(); err != nil {
		return err
	}
	closed := func() bool { return errors.Is(monitor.Check(monitor.Revision()), purramcp.ErrConnectionClosed) }
	if err := waitFor(ctx, closed); err != nil {
		return fmt.Errorf("waiting for the monitor to close: %w", err)
	}
	return call(ctx, w, server, catalog, "search_docs", `{"q":"cat"}`, tc)
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
