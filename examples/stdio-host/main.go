// Command stdio-host is a minimal, complete purramcp host for an MCP server
// that runs as a child process over stdio. It binds units.list and
// units.convert (see examples/stdio-server), calls each under timeouts and
// rediscovers whenever the catalog goes stale.
//
//	go run ./examples/stdio-host -- go run ./examples/stdio-server
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
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: stdio-host -- COMMAND [ARG...]")
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr // go-sdk leaves the child's standard error unwired
	if err := run(context.Background(), os.Stdout, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}); err != nil {
		log.Fatal(err)
	}
}

// run connects, discovers and runs calls; closing the session stops the child.
func run(ctx context.Context, w io.Writer, transport mcp.Transport) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // bounds the whole run
	defer cancel()
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-host", Version: "1"}, monitor.ClientOptions(nil))
	session, err := client.Connect(ctx, monitor.Transport(transport), nil)
	if err != nil {
		return err
	}
	defer session.Close() // closes the child's stdin and waits for it to exit
	if err := monitor.Attach(session); err != nil {
		return err
	}
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
