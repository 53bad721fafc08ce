// Command inspect connects to any MCP server and reports, tool by tool,
// whether purramcp can bind it under purra.output-schema/v1 and the default
// limits, and if not exactly why.
//
//	go run ./examples/inspect -- COMMAND [ARGS...]   # a stdio server
//	go run ./examples/inspect -url URL               # a streamable HTTP server
//	go run ./examples/inspect -json -- COMMAND ...   # the same as JSON
//	go run ./examples/inspect -catalog FILE          # a saved tools/list capture
//
// It sends only the handshake and tools/list requests: no tool is called.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

func main() {
	url := flag.String("url", "", "streamable HTTP endpoint of the server")
	catalog := flag.String("catalog", "", "a tools/list capture (scripts/capture-tools.mjs) served from memory")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	timeout := flag.Duration("timeout", 30*time.Second, "bound on the whole inspection")
	dialect := flag.Bool("dialect", false, "apply SchemaPolicy.DialectEquivalence (draft-07 and 2019-09 roots)")
	annotations := flag.Bool("annotations", false, "apply SchemaPolicy.Annotations (default, examples, format, ...)")
	extended := flag.Bool("extended", false, "apply SchemaPolicy.ExtendedKeywords (pattern, $ref, propertyNames, exclusive bounds, ...)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: inspect [-json] [-dialect] [-annotations] [-extended] [-timeout D] (-url URL | -catalog FILE | -- COMMAND [ARGS...])")
		flag.PrintDefaults()
	}
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var transport mcp.Transport
	switch {
	case *url != "" && *catalog == "" && flag.NArg() == 0:
		transport = &mcp.StreamableClientTransport{Endpoint: *url}
	case *catalog != "" && *url == "" && flag.NArg() == 0:
		t, stop, err := replayServer(ctx, *catalog)
		if err != nil {
			fmt.Fprintln(os.Stderr, "inspect:", err)
			os.Exit(1)
		}
		defer stop()
		transport = t
	case *url == "" && *catalog == "" && flag.NArg() > 0:
		transport = &mcp.CommandTransport{Command: exec.Command(flag.Arg(0), flag.Args()[1:]...)}
	default:
		flag.Usage()
		os.Exit(2)
	}
	policy := purramcp.SchemaPolicy{DialectEquivalence: *dialect, Annotations: *annotations, ExtendedKeywords: *extended}
	if err := run(ctx, transport, policy, os.Stdout, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "inspect:", err)
		os.Exit(1)
	}
}

// run connects over transport, inspects the catalog under policy and writes
// the report.
func run(ctx context.Context, transport mcp.Transport, policy purramcp.SchemaPolicy, w io.Writer, asJSON bool) error {
	monitor := purramcp.NewCatalogMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "purramcp-inspect", Version: "1"}, monitor.ClientOptions(nil))
	session, err := monitor.Connect(ctx, client, transport, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	// StaleRetries: servers such as server-everything announce a list change
	// right after initialization, which would fail the first listing.
	report, err := purramcp.InspectCatalog(ctx, session, "inspected",
		purramcp.DiscoveryOptions{Monitor: monitor, Policy: policy, StaleRetries: 2})
	if err != nil {
		return fmt.Errorf("inspect catalog: %w", err)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return writeTable(w, report, policy)
}

// writeTable prints one row per tool and a summary line.
func writeTable(w io.Writer, report *purramcp.CatalogReport, policy purramcp.SchemaPolicy) error {
	lim := purramcp.DefaultLimits()
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tBINDS\tREASON\tWITH POLICY\tDESC BYTES\tINPUT BYTES\tOUTPUT BYTES")
	bindable := 0
	for _, r := range report.Tools {
		verdict, reason, wider := "yes", "-", "-"
		if r.Bindable {
			bindable++
		} else {
			verdict, reason = "no", r.Code+" "+location(r)
			if r.BindsWith != "" {
				wider = r.BindsWith
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d/%d\t%d/%d\n", r.Name, verdict, reason, wider,
			r.DescriptionBytes, lim.MaxDescriptionBytes, r.InputSchemaBytes, lim.MaxSchemaBytes,
			r.OutputSchemaBytes, lim.MaxSchemaBytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	digest := report.RevisionDigest
	if digest == "" {
		digest = "(no bindable tool)"
	}
	_, err := fmt.Fprintf(w, "\npolicy %s, protocol %s: %d of %d tools bindable; revisionDigest with all bindable tools bound: %s\n",
		policy, report.ProtocolVersion, bindable, len(report.Tools), digest)
	return err
}

// location renders where a tool fails: "inputSchema $.properties.q pattern".
func location(r purramcp.ToolReport) string {
	s := r.Path + " " + r.Keyword
	if r.Schema != "" {
		s = r.Schema + " " + s
	}
	return s
}
