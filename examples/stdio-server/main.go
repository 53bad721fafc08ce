// Command stdio-server is a small MCP server that speaks over its standard
// input and output, for examples/host and for tests. It has two read
// tools whose schemas purra.output-schema/v1 accepts as they are:
//
//   - units.list: {} -> the length units, as text;
//   - units.convert: {value, from, to} -> {value, unit}, structured.
//
// Both carry annotations saying they only read (readOnlyHint true,
// destructiveHint false), so `purramcp inspect --suggest` proposes them.
//
// It exits when its input closes. examples/host/purramcp.json runs it with
// go run:
//
//	go run ./examples/host -approve
//
// With -http it serves the same tools over streamable HTTP instead, for a
// config entry with "url", and prints its URL on standard error:
//
//	go run ./examples/stdio-server -http 127.0.0.1:8080
//
// With -calls FILE it appends "start PID" to FILE when it starts and
// "call ARGUMENTS" for every tools/call it receives, before answering, so
// that tests can count what reached it.
//
// Two flags change the catalog, for tests of drift review (a lock check
// must notice each): -list-description TEXT replaces the description of
// units.list, and -omit NAME leaves the named tool out. -era legacy
// speaks only the versions up to 2025-11-25 (an SDK before 2026-07-28),
// -era modern only 2026-07-28 (initialize is refused), for tests of the
// protocol version a lock pins.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metres is the length of each unit in metres.
var metres = map[string]float64{"ft": 0.3048, "km": 1000, "m": 1, "mi": 1609.344}

const unitSchema = `{"type":"string","enum":["ft","km","m","mi"]}`

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on `address` instead of stdio")
	calls := flag.String("calls", "", "append the start and every tools/call to `file`")
	listDescription := flag.String("list-description", "List the length units", "the `text` units.list describes itself with")
	omit := flag.String("omit", "", "leave the tool `name`d out of the catalog")
	era := flag.String("era", "", "speak only the `legacy` versions (to 2025-11-25) or only the `modern` one (2026-07-28); default both")
	flag.Parse()
	server := mcp.NewServer(&mcp.Implementation{Name: "units", Version: "1"}, eraOptions(*era))
	if *era == "modern" {
		refuseInitialize(server)
	}
	if *calls != "" {
		record(server, *calls)
	}
	add := func(tool *mcp.Tool, handler mcp.ToolHandler) {
		if tool.Name != *omit {
			server.AddTool(tool, handler)
		}
	}
	add(&mcp.Tool{
		Name:        "units.list",
		Description: *listDescription,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Annotations: readOnly(),
	}, list)
	add(&mcp.Tool{
		Name:        "units.convert",
		Description: "Convert a length between units",
		Annotations: readOnly(),
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"value":{"type":"number","minimum":-1e9,"maximum":1e9},
			"from":` + unitSchema + `,"to":` + unitSchema + `},
			"required":["value","from","to"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{
			"value":{"type":"number"},"unit":` + unitSchema + `},
			"required":["value","unit"],"additionalProperties":false}`),
	}, convert)
	if *addr != "" {
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
		handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		log.Fatal(http.Serve(ln, handler))
	}
	// Run returns when the client closes our standard input.
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err) // standard error; standard output carries the protocol
	}
}

// eraOptions returns the server options for -era: the versions the server
// speaks.
func eraOptions(era string) *mcp.ServerOptions {
	all := mcp.SupportedProtocolVersions() // newest first
	switch era {
	case "":
		return nil
	case "legacy":
		return &mcp.ServerOptions{SupportedProtocolVersions: all[1:]}
	case "modern":
		return &mcp.ServerOptions{SupportedProtocolVersions: all[:1]}
	}
	log.Fatalf("-era %q: want legacy or modern", era)
	return nil
}

// refuseInitialize makes the server answer initialize with -32022, as a
// server that speaks only 2026-07-28 (server/discover) does.
func refuseInitialize(server *mcp.Server) {
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				return nil, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported protocol version"}
			}
			return next(ctx, method, req)
		}
	})
}

// readOnly returns the annotations of a tool that only reads: readOnlyHint
// true and destructiveHint false, both stated.
func readOnly() *mcp.ToolAnnotations {
	destructive := false
	return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &destructive}
}

// record appends "start PID" to path, and "call ARGUMENTS" for every
// tools/call the server receives.
func record(server *mcp.Server, path string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(f, "start %d\n", os.Getpid())
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				var args bytes.Buffer
				_ = json.Compact(&args, p.Arguments)
				fmt.Fprintf(f, "call %s\n", args.String())
			}
			return next(ctx, method, req)
		}
	})
}

func list(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ft, km, m, mi"}}}, nil
}

func convert(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// A server checks its own input: not every client is purramcp.
	var args struct {
		Value float64 `json:"value"`
		From  string  `json:"from"`
		To    string  `json:"to"`
	}
	dec := json.NewDecoder(bytes.NewReader(req.Params.Arguments))
	dec.DisallowUnknownFields()
	err := dec.Decode(&args)
	from, okFrom := metres[args.From]
	to, okTo := metres[args.To]
	if err != nil || !okFrom || !okTo {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad arguments"}}}, nil
	}
	value := math.Round(args.Value*from/to*1e6) / 1e6
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%g %s = %g %s", args.Value, args.From, value, args.To)}},
		StructuredContent: map[string]any{"value": value, "unit": args.To},
	}, nil
}
