// Command host is a minimal, complete purramcp host for an MCP server that
// runs as a child process over stdio, or that it reaches over streamable
// HTTP with -url. It binds units.list and units.convert (see
// examples/stdio-server), calls each under timeouts and rediscovers whenever
// the catalog goes stale.
//
//	go run ./examples/host -- go run ./examples/stdio-server
//
//	go run ./examples/stdio-server -http 127.0.0.1:8080 &
//	go run ./examples/host -url http://127.0.0.1:8080
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"purra.dev/purramcp"
)

// bindings is the allowlist: nothing else the server lists is exposed.
var bindings = map[string]purramcp.ToolBinding{
	"units.list":    {LocalName: "list_units", Scope: purramcp.Unscoped, Policy: purramcp.ToolPolicy{Mode: "read", Title: "List units"}},
	"units.convert": {LocalName: "convert_units", Scope: purramcp.Unscoped, Policy: purramcp.ToolPolicy{Mode: "read", Title: "Convert units"}},
}

// calls stand in for what an agent core would ask for.
var calls = []struct{ tool, args string }{{"list_units", `{}`}, {"convert_units", `{"value":10,"from":"km","to":"mi"}`}}

func main() {
	url := flag.String("url", "", "the server's streamable HTTP endpoint (else: -- COMMAND [ARG...] over stdio)")
	flag.Parse()
	var transport mcp.Transport
	switch {
	case *url != "":
		transport = &mcp.StreamableClientTransport{Endpoint: *url}
	case flag.NArg() > 0:
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		cmd.Stderr = os.Stderr // go-sdk leaves the child's standard error unwired
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	default:
		log.Fatal("usage: host -url URL | host -- COMMAND [ARG...]")
	}
	if err := run(context.Background(), os.Stdout, transport); err != nil {
		log.Fatal(err)
	}
}

// run connects, discovers and runs calls, and closes the session (over
// stdio that stops the child, over HTTP it sends a DELETE). w must take
// concurrent writes: the list-change handler uses it.
func run(ctx context.Context, w io.Writer, transport mcp.Transport) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // bounds the whole run
	defer cancel()
	monitor := purramcp.NewCatalogMonitor()
	own := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		fmt.Fprintln(w, "tool list changed: rediscovering before the next call") // after the monitor counted it
	}}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(own))
	// Connect: the bounding layer (Transport), client.Connect and Attach in one call.
	session, err := monitor.Connect(ctx, client, transport, nil)
	if err != nil {
		return err
	}
	defer session.Close()
	// StaleRetries: a discovery a list change interrupts starts over (never after it returns).
	opts := purramcp.DiscoveryOptions{Monitor: monitor, Limits: purramcp.Limits{Timeout: 10 * time.Second}, StaleRetries: 2}
	var catalog *purramcp.Catalog
	for _, call := range calls {
		if catalog == nil || catalog.Stale() { // first use, or a list change: swap catalogs
			if catalog, err = purramcp.DiscoverTools(ctx, session, "units", bindings, opts); err != nil {
				return err // purramcp.CodeOf(err) is the mcp_* code
			}
			fmt.Fprintf(w, "catalog %s (%s)\n", catalog.Snapshot().RevisionDigest, monitor.ProtocolVersion())
		}
		tool, ok := catalog.Registration(call.tool) // every binding is there
		if !ok {
			return fmt.Errorf("no registration %s", call.tool)
		}
		res, err := tool.Run(ctx, json.RawMessage(call.args), purramcp.ToolContext{RunID: "run-1"})
		if err != nil {
			return err // ErrCanceled
		}
		envelope, _ := json.Marshal(res.Content) // empty when ErrorCode is set
		fmt.Fprintf(w, "%s %s -> %s %s\n", call.tool, call.args, cmp.Or(res.ErrorCode, "ok"), envelope)
	}
	return nil
}
