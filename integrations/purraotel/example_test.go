package purraotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraotel"
)

// countingIDs numbers trace and span ids 1, 2, ..., so that the example's
// output is the same on every run (a real host keeps the SDK's random ids).
type countingIDs struct {
	mu sync.Mutex
	n  byte
}

func (g *countingIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return trace.TraceID{15: g.n}, trace.SpanID{7: g.n}
}

func (g *countingIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return trace.SpanID{7: g.n}
}

// Example wires the instrumentation (its Observe and StartCall) and the
// propagator into the quickstart's discovery and calls, and prints each
// span with the stdout exporter (timestamps left out, ids counted, so the
// output is stable). Each tools/call span is started before its request is
// written, so the traceparent the server receives names it.
func Example() {
	ctx := context.Background()
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(os.Stdout), stdouttrace.WithoutTimestamps())
	if err != nil {
		panic(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter), sdktrace.WithResource(resource.Empty()),
		sdktrace.WithIDGenerator(&countingIDs{}))
	defer tp.Shutdown(ctx)

	// A server with one tool, in memory.
	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	type args struct {
		Query string `json:"query" jsonschema:"what to search for"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "docs.search", Description: "Search the docs."},
		func(context.Context, *mcp.CallToolRequest, args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 pages"}}}, nil, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Wait()

	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, ct, &mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	if err != nil {
		panic(err)
	}
	defer session.Close()

	otel := purraotel.New(tp, noopmetric.NewMeterProvider(), purraotel.Options{})
	catalog, err := purramcp.DiscoverTools(ctx, session, "docs", map[string]purramcp.ToolBinding{
		"docs.search": {LocalName: "search_docs", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search docs"},
			Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{
		Monitor:         monitor,
		Observer:        otel.Observe,
		CallStart:       otel.StartCall,
		TracePropagator: purraotel.Propagator(nil),
	})
	if err != nil {
		panic(err)
	}
	reg, _ := catalog.Registration("search_docs")
	turn, span := tp.Tracer("host").Start(ctx, "agent turn")
	res, err := reg.Run(turn, json.RawMessage(`{"query":"otel"}`), purramcp.ToolContext{CallID: "c1"})
	if err != nil {
		panic(err)
	}
	res, err = reg.Run(turn, json.RawMessage(`{}`), purramcp.ToolContext{CallID: "c2"})
	if err != nil {
		panic(err)
	}
	span.End()
	fmt.Println(res.ErrorCode)
	// Output:
	// {"Name":"tools/list","SpanContext":{"TraceID":"00000000000000000000000000000001","SpanID":"0000000000000001","TraceFlags":"01","TraceState":"","Remote":false},"Parent":{"TraceID":"00000000000000000000000000000000","SpanID":"0000000000000000","TraceFlags":"00","TraceState":"","Remote":false},"SpanKind":3,"StartTime":"0001-01-01T00:00:00Z","EndTime":"0001-01-01T00:00:00Z","Attributes":[{"Key":"mcp.method.name","Value":{"Type":"STRING","Value":"tools/list"}},{"Key":"mcp.protocol.version","Value":{"Type":"STRING","Value":"2025-11-25"}},{"Key":"purramcp.transport","Value":{"Type":"STRING","Value":"memory"}},{"Key":"purramcp.server_id","Value":{"Type":"STRING","Value":"docs"}},{"Key":"purramcp.revision_digest","Value":{"Type":"STRING","Value":"fe45bfce2f002161aacb95fd7ac15f35b08d8becea4f1212f1242ac9293ddf77"}},{"Key":"purramcp.attempt","Value":{"Type":"INT64","Value":1}},{"Key":"purramcp.pages","Value":{"Type":"INT64","Value":1}}],"Events":null,"Links":null,"Status":{"Code":"Unset","Description":""},"DroppedAttributes":0,"DroppedEvents":0,"DroppedLinks":0,"ChildSpanCount":0,"Resource":null,"InstrumentationScope":{"Name":"purra.dev/purramcp/integrations/purraotel","Version":"","SchemaURL":"","Attributes":null},"InstrumentationLibrary":{"Name":"purra.dev/purramcp/integrations/purraotel","Version":"","SchemaURL":"","Attributes":null}}
	// {"Name":"tools/call search_docs","SpanContext":{"TraceID":"00000000000000000000000000000002","SpanID":"0000000000000003","TraceFlags":"01","TraceState":"","Remote":false},"Parent":{"TraceID":"00000000000000000000000000000002","SpanID":"0000000000000002","TraceFlags":"01","TraceState":"","Remote":false},"SpanKind":3,"StartTime":"0001-01-01T00:00:00Z","EndTime":"0001-01-01T00:00:00Z","Attributes":[{"Key":"mcp.method.name","Value":{"Type":"STRING","Value":"tools/call"}},{"Key":"gen_ai.operation.name","Value":{"Type":"STRING","Value":"execute_tool"}},{"Key":"gen_ai.tool.name","Value":{"Type":"STRING","Value":"search_docs"}},{"Key":"gen_ai.tool.call.id","Value":{"Type":"STRING","Value":"c1"}},{"Key":"mcp.protocol.version","Value":{"Type":"STRING","Value":"2025-11-25"}},{"Key":"purramcp.transport","Value":{"Type":"STRING","Value":"memory"}},{"Key":"purramcp.server_id","Value":{"Type":"STRING","Value":"docs"}},{"Key":"purramcp.revision_digest","Value":{"Type":"STRING","Value":"fe45bfce2f002161aacb95fd7ac15f35b08d8becea4f1212f1242ac9293ddf77"}},{"Key":"purramcp.remote_name","Value":{"Type":"STRING","Value":"docs.search"}},{"Key":"purramcp.requests","Value":{"Type":"INT64","Value":1}},{"Key":"purramcp.argument_bytes","Value":{"Type":"INT64","Value":16}},{"Key":"purramcp.result_bytes","Value":{"Type":"INT64","Value":46}}],"Events":null,"Links":null,"Status":{"Code":"Unset","Description":""},"DroppedAttributes":0,"DroppedEvents":0,"DroppedLinks":0,"ChildSpanCount":0,"Resource":null,"InstrumentationScope":{"Name":"purra.dev/purramcp/integrations/purraotel","Version":"","SchemaURL":"","Attributes":null},"InstrumentationLibrary":{"Name":"purra.dev/purramcp/integrations/purraotel","Version":"","SchemaURL":"","Attributes":null}}
	// {"Name":"tools/call search_docs","SpanContext":{"TraceID":"00000000000000000000000000000002","SpanID":"0000000000000004","TraceFlags":"01","TraceState":"","Remote":false},"Parent":{"TraceID":"00000000000000000000000000000002","SpanID":"0000000000000002","TraceFlags":"01","TraceState":"","Remote":false},"SpanKind":3,"StartTime":"0001-01-01T00:00:00Z","EndTime":"0001-01-01T00:00:00Z","Attributes":[{"Key":"mcp.method.name","Value":{"Type":"STRING","Value":"tools/call"}},{"Key":"gen_ai.operation.name","Value":{"Type":"STRING","Value":"execute_tool"}},{"Key":"gen_ai.tool.name","Value":{"Type":"STRING","Value":"search_docs"}},{"Key":"gen_ai.tool.call.id","Value":{"Type":"STRING","Value":"c2"}},{"Key":"mcp.protocol.version","Value":{"Type":"STRING","Value":"2025-11-25"}},{"Key":"purramcp.transport","Value":{"Type":"STRING","Value":"memory"}},{"Key":"purramcp.server_id","Value":{"Type":"STRING","Value":"docs"}},{"Key":"purramcp.revision_digest","Value":{"Type":"STRING","Value":"fe45bfce2f002161aacb95fd7ac15f35b08d8becea4f1212f1242ac9293ddf77"}},{"Key":"purramcp.remote_name","Value":{"Type":"STRING","Value":"docs.search"}},{"Key":"purramcp.requests","Value":{"Type":"INT64","Value":0}},{"Key":"purramcp.argument_bytes","Value":{"Type":"INT64","Value":2}},{"Key":"purramcp.result_bytes","Value":{"Type":"INT64","Value":0}},{"Key":"error.type","Value":{"Type":"STRING","Value":"mcp_invalid_arguments"}},{"Key":"purramcp.code","Value":{"Type":"STRING","Value":"mcp_invalid_arguments"}}],"Events":null,"Links":null,"Status":{"Code":"Error","Description":"mcp_invalid_arguments"},"DroppedAttributes":0,"DroppedEvents":0,"DroppedLinks":0,"ChildSpanCount":0,"Resource":null,"InstrumentationScope":{"Name":"purra.dev/purramcp/integrations/purraotel","Version":"","SchemaURL":"","Attributes":null},"InstrumentationLibrary":{"Name":"purra.dev/purramcp/integrations/purraotel","Version":"","SchemaURL":"","Attributes":null}}
	// {"Name":"agent turn","SpanContext":{"TraceID":"00000000000000000000000000000002","SpanID":"0000000000000002","TraceFlags":"01","TraceState":"","Remote":false},"Parent":{"TraceID":"00000000000000000000000000000000","SpanID":"0000000000000000","TraceFlags":"00","TraceState":"","Remote":false},"SpanKind":1,"StartTime":"0001-01-01T00:00:00Z","EndTime":"0001-01-01T00:00:00Z","Attributes":null,"Events":null,"Links":null,"Status":{"Code":"Unset","Description":""},"DroppedAttributes":0,"DroppedEvents":0,"DroppedLinks":0,"ChildSpanCount":2,"Resource":null,"InstrumentationScope":{"Name":"host","Version":"","SchemaURL":"","Attributes":null},"InstrumentationLibrary":{"Name":"host","Version":"","SchemaURL":"","Attributes":null}}
	// mcp_invalid_arguments
}
