package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

const inspectAbout = `Connect to one server through purramcp's bounding layer, list its tools once
(no tool is called) and report, per tool, whether it binds under the policy
and, if not, the code, schema, path and keyword, and the narrowest policy
that binds it, in the config's words ("policy": ["dialect", "annotations"]).

The server is one of: --server ID from the config (its policy, limits and
bindings apply), --url URL (streamable HTTP), --catalog FILE (a saved
tools/list capture, served from memory), or -- COMMAND [ARG...] (stdio).
Without --server no policy is assumed unless --policy names one. With
--server, a server the lock file approved is connected at the approved
protocol version while it still speaks it, as lock --check and the fleet
connect.

--suggest prints {"tools": {...}} to merge into the server's config entry:
every tool that binds and is annotated readOnlyHint true and not
destructive; the other tools are listed on stderr as comments only.`

// An inspectTarget is the server inspect connects to and what applies to
// it: the policy, the limits, and with --server the config's bindings.
type inspectTarget struct {
	id       string // --server ID, else ""
	ep       endpoint
	policy   purramcp.SchemaPolicy
	limits   purramcp.Limits // resolved: every field set
	readOnly bool            // the server sets requireReadOnlyHint
	// bound maps remote names to the config's local names (--server).
	bound map[string]boundTool
	// taken holds the local names other servers of the config use.
	taken map[string]bool
}

// A boundTool is one tool a config binds, as a suggestion repeats it.
type boundTool struct {
	As              string `json:"as"`
	Title           string `json:"title,omitempty"`
	ConcurrencySafe bool   `json:"concurrencySafe,omitempty"`
}

// An inspectReport is what `purramcp inspect --json` prints.
type inspectReport struct {
	// Server is the --server id, or "" for a command, URL or catalog.
	Server string `json:"server"`
	// ProtocolVersion is the version the handshake negotiated.
	ProtocolVersion string `json:"protocolVersion"`
	// Policy is the policy applied, in the config's words ([] for none).
	Policy []string `json:"policy"`
	// Binds counts the tools that bind under Policy.
	Binds int `json:"binds"`
	// Tools has one report per listed tool, sorted by name.
	Tools []toolReport `json:"tools"`
	// Missing lists the remote names the config binds (--server) that the
	// server does not list; [] without --server.
	Missing []string `json:"missing"`
}

// A toolReport is one tool of an inspectReport.
type toolReport struct {
	// Name is the remote tool name, as the server sent it.
	Name string `json:"name"`
	// Binds reports whether the tool binds under the report's policy (and,
	// when the server requires it, carries readOnlyHint true).
	Binds bool `json:"binds"`
	// As is the local name the config binds the tool to (--server), or "".
	As string `json:"as,omitempty"`
	// Code, Schema, Path and Keyword say why a tool does not bind: the
	// mcp_* code discovery fails with, "inputSchema" or "outputSchema",
	// the JSON path in it ("$" for the root) and the keyword, or for a
	// limit the Limits field.
	Code    string `json:"code,omitempty"`
	Schema  string `json:"schema,omitempty"`
	Path    string `json:"path,omitempty"`
	Keyword string `json:"keyword,omitempty"`
	// BindsWith is the narrowest policy under which a tool that does not
	// bind would, in the config's words; absent when it binds or none does.
	BindsWith []string `json:"bindsWith,omitempty"`
	// ReadOnlyHint and DestructiveHint are the tool's annotations
	// (DestructiveHint true only when the tool says so).
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	// The sizes the limits check: description UTF-8 bytes, compact JSON
	// bytes of each schema (0 without an output schema).
	DescriptionBytes  int `json:"descriptionBytes"`
	InputSchemaBytes  int `json:"inputSchemaBytes"`
	OutputSchemaBytes int `json:"outputSchemaBytes"`
}

// inspectOptions are the flags of inspect.
type inspectOptions struct {
	server, url, catalog, config, policy string
	lock                                 string
	suggest, asJSON, legacy              bool
	timeout                              time.Duration
	command                              []string // after "--"
}

// parseInspect parses inspect's flags; when ok is false inspect ends with
// code.
func parseInspect(args []string, s *streams) (o inspectOptions, code int, ok bool) {
	fs := newFlags("inspect", "[--server ID | --url URL | --catalog FILE | -- COMMAND [ARG...]]", inspectAbout, s)
	fs.StringVar(&o.server, "server", "", "inspect the server with this `id` in the config")
	fs.StringVar(&o.url, "url", "", "inspect the streamable HTTP server at `URL`")
	fs.StringVar(&o.catalog, "catalog", "", "inspect a saved tools/list capture `file`, served from memory")
	fs.StringVar(&o.config, "config", defaultConfig, "the config `file` --server reads")
	fs.StringVar(&o.lock, "lock", defaultLock, "the lock `file` whose protocol version --server connects at while the server speaks it")
	fs.StringVar(&o.policy, "policy", "", "apply this comma-separated `list` of dialect, annotations, extended, headers\n(default: the server's own with --server, else none)")
	fs.BoolVar(&o.suggest, "suggest", false, "print the {\"tools\": ...} entry of every tool that binds and says it only reads")
	fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON (see README.md)")
	fs.BoolVar(&o.legacy, "legacy-protocols", false, "also accept MCP 2024-11-05 and 2025-03-26 (a config's \"legacyProtocols\")")
	timeout := connectTimeoutFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return o, code, false
	}
	o.timeout, o.command = *timeout, fs.Args()
	sources := 0
	for _, set := range []bool{o.server != "", o.url != "", o.catalog != "", len(o.command) > 0} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		s.errorf("inspect", "name exactly one server: --server ID, --url URL, --catalog FILE or -- COMMAND [ARG...]")
		return o, exitUsage, false
	}
	if err := checkTimeout(o.timeout); err != nil {
		s.errorf("inspect", "%v", err)
		return o, exitUsage, false
	}
	return o, exitOK, true
}

// target returns the server o names and what applies to it.
func (o inspectOptions) target() (*inspectTarget, error) {
	target := &inspectTarget{limits: purramcp.DefaultLimits()}
	switch {
	case o.server != "":
		t, err := configTarget(o.config, o.server)
		if err != nil {
			return nil, err
		}
		lock, err := loadLock(o.lock)
		if err != nil {
			return nil, err
		}
		t.ep.pin = lock.ProtocolVersion(o.server)
		target = t
	case o.url != "":
		target.ep.sc.URL = o.url
	case o.catalog != "":
		target.ep.dial = savedCatalog(o.catalog)
	default:
		target.ep.sc.Command, target.ep.sc.Args = o.command[0], o.command[1:]
	}
	target.ep.sc.LegacyProtocols = target.ep.sc.LegacyProtocols || o.legacy
	if o.policy != "" {
		p, err := parsePolicy(strings.Split(o.policy, ","))
		if err != nil {
			return nil, fmt.Errorf("--policy: %w", err)
		}
		target.policy = p
	}
	return target, nil
}

// runInspect is `purramcp inspect`.
func runInspect(ctx context.Context, args []string, s *streams) int {
	o, code, ok := parseInspect(args, s)
	if !ok {
		return code
	}
	target, err := o.target()
	if err != nil {
		s.errorf("inspect", "%v", err)
		return exitUsage
	}
	report, err := inspect(ctx, target, o.timeout)
	switch {
	case err != nil:
		reportFailure(s, "inspect", target.id, err)
		return exitFail
	case o.suggest:
		return printSuggestion(s, target, report)
	case o.asJSON:
		err = writeJSON(s.out, report)
	default:
		err = writeInspectTable(s.out, target, report)
	}
	if err != nil {
		return exitFail
	}
	return exitOK
}

// inspect connects to target, lists its tools once through
// purramcp.InspectCatalog (discovery's own paging, limits and byte measure)
// and reports on each.
func inspect(ctx context.Context, target *inspectTarget, timeout time.Duration) (*inspectReport, error) {
	c, err := dial(ctx, target.ep, timeout)
	if err != nil {
		return nil, err
	}
	defer c.close()
	serverID := target.id
	if serverID == "" {
		serverID = "inspect" // names only the digest, which inspect does not print
	}
	catalog, err := purramcp.InspectCatalog(ctx, c.session, serverID, purramcp.DiscoveryOptions{Monitor: c.monitor,
		Limits: target.limits, Policy: target.policy, StaleRetries: listStaleRetries})
	if err != nil {
		return nil, &listError{err: listFailure(err, target.limits), stderr: c.stderrLines()}
	}
	report := &inspectReport{Server: target.id, ProtocolVersion: catalog.ProtocolVersion,
		Policy: fleet.PolicyWords(target.policy), Tools: []toolReport{}, Missing: []string{}}
	listed := map[string]bool{}
	for _, tr := range catalog.Tools { // sorted by name
		listed[tr.Name] = true
		r := reportTool(tr, target)
		if r.Binds {
			report.Binds++
		}
		report.Tools = append(report.Tools, r)
	}
	for _, remote := range slices.Sorted(maps.Keys(target.bound)) {
		if !listed[remote] {
			report.Missing = append(report.Missing, remote)
		}
	}
	return report, nil
}

// reportTool turns purramcp's report on one tool into the command's, with
// its configured local name and the server's requireReadOnlyHint applied.
func reportTool(tr purramcp.ToolReport, target *inspectTarget) toolReport {
	r := toolReport{Name: tr.Name, Binds: tr.Bindable, Code: tr.Code, Schema: tr.Schema, Path: tr.Path,
		Keyword: tr.Keyword, As: target.bound[tr.Name].As, ReadOnlyHint: tr.ReadOnlyHint,
		DestructiveHint: tr.DestructiveHint, DescriptionBytes: tr.DescriptionBytes,
		InputSchemaBytes: tr.InputSchemaBytes, OutputSchemaBytes: tr.OutputSchemaBytes}
	if tr.BindsWith != "" {
		r.BindsWith = strings.Split(tr.BindsWith, "+")
	}
	// A server with requireReadOnlyHint fails discovery of a bound tool
	// without the hint, after its schemas compile.
	if r.Binds && target.readOnly && !r.readOnly() {
		r.Binds, r.Code, r.Keyword = false, purramcp.CodeAnnotationConflict, "readOnlyHint"
	}
	return r
}

// readOnly reports whether the tool says it only reads: readOnlyHint true
// and destructiveHint not true, what RequireReadOnlyHint requires.
func (r toolReport) readOnly() bool { return r.ReadOnlyHint && !r.DestructiveHint }

// reason renders why a tool does not bind: "mcp_schema_unsupported
// inputSchema $.properties.q pattern".
func (r toolReport) reason() string {
	parts := []string{r.Code}
	for _, p := range []string{r.Schema, r.Path, r.Keyword} {
		if p != "" {
			parts = append(parts, shown(p))
		}
	}
	return strings.Join(parts, " ")
}

// widerPolicy renders BindsWith for the table: `"policy": [...]`, or
// "none" when no policy binds the tool.
func (r toolReport) widerPolicy() string {
	if r.Binds {
		return "-"
	}
	if r.BindsWith == nil {
		return "none"
	}
	p, _ := parsePolicy(r.BindsWith) // words purramcp itself named
	return policyJSON(p)
}

// writeInspectTable prints the report as a table and a summary line.
func writeInspectTable(w io.Writer, target *inspectTarget, report *inspectReport) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	header := "TOOL\tBINDS\tREAD-ONLY\t"
	if target.id != "" {
		header += "AS\t"
	}
	fmt.Fprintln(tw, header+"WHY NOT\tBINDS WITH")
	for _, r := range report.Tools {
		row := shown(r.Name) + "\t" + yesNo(r.Binds) + "\t" + r.readOnlyCell() + "\t"
		if target.id != "" {
			row += orDash(r.As) + "\t"
		}
		why := "-"
		if !r.Binds {
			why = r.reason()
		}
		fmt.Fprintln(tw, row+why+"\t"+r.widerPolicy())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	name := "the server"
	if target.id != "" {
		name = "server " + target.id
	}
	fmt.Fprintf(w, "\n%s, protocol %s: %d of %d tools bind under %s\n", name, report.ProtocolVersion,
		report.Binds, len(report.Tools), policyJSON(target.policy))
	for _, m := range report.Missing {
		fmt.Fprintf(w, "configured but not listed: %s\n", shown(m))
	}
	return nil
}

// readOnlyCell renders what the tool says of itself: "yes" for
// readOnlyHint true and not destructive, "no", or "no (destructive)" for a
// tool that says both.
func (r toolReport) readOnlyCell() string {
	switch {
	case r.readOnly():
		return "yes"
	case r.ReadOnlyHint:
		return "no (destructive)"
	}
	return "no"
}

// yesNo renders a boolean cell.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// listStaleRetries is how many more times a listing starts over when a
// tool list change arrives while it runs (DiscoveryOptions.StaleRetries),
// as a config's default staleRetries: some servers announce a change right
// after initializing.
const listStaleRetries = 2

// A listError is a listing that failed after the connection was made.
type listError struct {
	err    error
	stderr []string
}

// Error says that the listing failed and why.
func (e *listError) Error() string { return "listing tools: " + e.err.Error() }

// Unwrap returns the listing's error.
func (e *listError) Unwrap() error { return e.err }

// listFailure says why purramcp.InspectCatalog failed under lim: the limit
// by its config name, or what the code means; never remote text.
func listFailure(err error, lim purramcp.Limits) error {
	var de *purramcp.DiscoveryError
	if errors.As(err, &de) && de.RemoteName == "" {
		switch de.Keyword {
		case "MaxPages":
			return fmt.Errorf("more than %d pages (limits.maxPages)", lim.MaxPages)
		case "MaxTools":
			return fmt.Errorf("more than %d tools (limits.maxTools)", lim.MaxTools)
		case "MaxCatalogBytes":
			return fmt.Errorf("more than %d bytes of tools/list results (limits.maxCatalogBytes)", lim.MaxCatalogBytes)
		}
	}
	switch code := purramcp.CodeOf(err); code {
	case purramcp.CodeTimeout:
		return fmt.Errorf("no answer to tools/list within %s (limits.timeout)", lim.Timeout)
	case purramcp.CodePaginationInvalid:
		return errors.New("the server repeated a cursor or sent one over 512 bytes")
	case purramcp.CodeCatalogStale:
		return errors.New("the tool list kept changing while it was listed")
	case purramcp.CodeNameConflict:
		return errors.New("the server listed a tool name twice (" + code + ")")
	case purramcp.CodeToolsUnavailable:
		return errors.New("the server does not offer tools (" + code + ")")
	case purramcp.CodeProtocolError:
		return errors.New("the server answered tools/list with an error (" + code + ")")
	case purramcp.CodeConnectionClosed:
		return errors.New("the connection is closed (" + code + ")")
	case purramcp.CodeTransportError:
		return errors.New("the connection failed while tools were listed (" + code + ")")
	case purramcp.CodeResultInvalid:
		return errors.New("the tools/list result could not be decoded (" + code + ")")
	case "":
		return errors.New("canceled") // ErrCanceled: ctx ended
	default:
		return errors.New(code)
	}
}

// reportFailure prints a failed connection or listing of server id (""
// for one named on the command line) and the child's last stderr lines.
func reportFailure(s *streams, cmd, id string, err error) {
	who := "server"
	if id != "" {
		who = "server " + id
	}
	s.errorf(cmd, "%s: %s", who, paint(s.errColour, red, err.Error()))
	for _, line := range stderrOf(err) {
		fmt.Fprintf(s.err, "  | %s\n", line)
	}
}

// stderrOf returns the child's stderr lines a failure carries.
func stderrOf(err error) []string {
	var ce *connectError
	var le *listError
	switch {
	case errors.As(err, &ce):
		return ce.stderr
	case errors.As(err, &le):
		return le.stderr
	}
	return nil
}
