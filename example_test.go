package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// A host needs two of the monitor's methods: NewClient for the client and
// Connect, which wraps the transport in the monitor's bounding layer
// (Transport), connects and attaches the session (Attach). The monitor then
// follows the session: a list change makes earlier catalogs stale, the
// session's end closes it.
func ExampleNewCatalogMonitor() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "server", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "remote.echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
		})
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}

	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, clientTransport, nil) // Transport, client.Connect, Attach
	if err != nil {
		log.Fatal(err)
	}
	revision := monitor.Revision() // what a catalog records when discovered
	fmt.Println("negotiated:", monitor.ProtocolVersion(), "current:", monitor.Check(revision) == nil)

	// The server's tool list changes; the client NewClient built counts it.
	server.AddTool(&mcp.Tool{Name: "remote.new", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
		})
	for monitor.Revision() == revision {
		runtime.Gosched() // the notification is on its way to the client
	}
	fmt.Println("after a list change:", purramcp.CodeOf(monitor.Check(revision)))

	_ = session.Close() // the host's; Attach's goroutine then closes the monitor
	_ = serverSession.Wait()
	for monitor.Check(monitor.Revision()) == nil {
		runtime.Gosched() // the goroutine Attach started is about to close it
	}
	fmt.Println("after the session ended:", purramcp.CodeOf(monitor.Check(monitor.Revision())))
	// Output:
	// negotiated: 2026-07-28 current: true
	// after a list change: mcp_catalog_stale
	// after the session ended: mcp_connection_closed
}

// DiscoverTools over an in-memory go-sdk server, wired as the README shows:
// one bound tool, its snapshot digest, and one call.
func ExampleDiscoverTools() {
	ctx := context.Background()

	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "remote.search",
		Description: "Search documents",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":64}},
			"required":["q"],"additionalProperties":false}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 documents"}}}, nil
	})
	server.AddTool(&mcp.Tool{Name: "remote.delete", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil) // the server connects first
	if err != nil {
		log.Fatal(err)
	}
	defer serverSession.Wait()

	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, clientTransport, nil) // Transport, client.Connect, Attach
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	// Only remote.search is bound; remote.delete is never compiled or exposed.
	catalog, err := purramcp.DiscoverTools(ctx, session, "documents", map[string]purramcp.ToolBinding{
		"remote.search": {
			LocalName: "search_documents",
			Policy:    purramcp.ToolPolicy{Mode: "read", Title: "Search documents"},
			Scope: func(ctx context.Context, args map[string]any, call purramcp.ToolContext) error {
				if call.RunID == "" {
					return purramcp.Deny("missing run")
				}
				return nil
			},
		},
	}, purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		log.Fatal(purramcp.CodeOf(err))
	}

	snap := catalog.Snapshot()
	fmt.Println("protocol:", snap.ProtocolVersion)
	fmt.Println("revisionDigest:", snap.RevisionDigest)
	for _, tool := range catalog.Registrations() {
		fmt.Println("tool:", tool.Name, tool.Policy.Mode)
		res, err := tool.Run(ctx, json.RawMessage(`{"q":"cats"}`), purramcp.ToolContext{RunID: "run-1"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("with a run: %q %q\n", res.ErrorCode, res.Content.Text)
		res, err = tool.Run(ctx, json.RawMessage(`{"q":"cats"}`), purramcp.ToolContext{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("without: %q %q\n", res.ErrorCode, res.Content.Text)
	}
	// Output:
	// protocol: 2026-07-28
	// revisionDigest: 077c56529b4846ff87ca587dc0a507895a2dd8f547ee88f5e0863196fce65101
	// tool: search_documents read
	// with a run: "" ["3 documents"]
	// without: "mcp_scope_denied" []
}

// Key order and number spelling do not change a digest.
func ExampleIdentityDigest() {
	fromMap, err := purramcp.IdentityDigest(map[string]any{"b": 1, "a": 2})
	if err != nil {
		log.Fatal(err)
	}
	fromText, err := purramcp.IdentityDigest(json.RawMessage(`{"a":2.0,"b":1e0}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fromMap)
	fmt.Println(fromMap == fromText)
	_, err = purramcp.IdentityDigest(json.RawMessage(`{"a":1,"a":2}`))
	fmt.Println("duplicate key:", err != nil)
	// Output:
	// e3648e3e8bdc8194becfe4a09af9ceadbbef5b1c8863eda625922d07ff950dd0
	// true
	// duplicate key: true
}

// A contract compiles a schema under purra.output-schema/v1 or rejects it
// whole; nothing is stripped to make it fit.
func ExampleNewContract() {
	contract, err := purramcp.NewContract(purramcp.ContractOptions{
		SchemaID:      "label",
		SchemaVersion: "1",
		Schema: json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","maxLength":16}},
			"required":["label"],"additionalProperties":false}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("mode:", contract.Mode())
	fmt.Println("schemaDigest:", contract.SchemaDigest())
	fmt.Println("contractDigest:", contract.ContractDigest())

	_, err = purramcp.NewContract(purramcp.ContractOptions{
		SchemaID:      "label",
		SchemaVersion: "1",
		Schema:        json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","pattern":"^[a-z]+$"}}}`),
	})
	var ce *purramcp.ContractError
	if errors.As(err, &ce) {
		fmt.Println("pattern:", ce.Code, ce.Keyword, ce.Path)
	}
	// Output:
	// mode: local
	// schemaDigest: 8e25c6e88a9cc4a2758eaba9e7324d32045de10cc140e3b3b37038693a861f14
	// contractDigest: 9c2a024ae602e017ea65bbcd1e9ee46b5b24c9fd3b5ab842f0eb8431a9dbd99e
	// pattern: structured_output_schema_invalid schema $
}

// Parse reads strict JSON and validates it without coercion. A failure
// names the violated keyword and where, never the rejected text.
func ExampleContract_Parse() {
	contract, err := purramcp.NewContract(purramcp.ContractOptions{
		SchemaID:      "label",
		SchemaVersion: "1",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"label":{"type":"string","maxLength":16},
			"tags":{"type":"array","items":{"type":"string"},"maxItems":2}},
			"required":["label"],"additionalProperties":false}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	value, err := contract.Parse(`{"label":"cats","tags":["pets"]}`)
	fmt.Println(value, err)

	for _, text := range []string{
		`{"label":"cats","tags":["pets",7]}`,
		`{"label":"a label much too long"}`,
		`{"tags":[]}`,
		`{"label":"cats","label":"dogs"}`,
	} {
		_, err := contract.Parse(text)
		var ce *purramcp.ContractError
		if errors.As(err, &ce) {
			fmt.Println(ce.Code, ce.Keyword, ce.Path)
		}
	}
	// Output:
	// map[label:cats tags:[pets]] <nil>
	// structured_output_schema_mismatch type $.tags[1]
	// structured_output_schema_mismatch maxLength $.label
	// structured_output_schema_mismatch required $.label
	// structured_output_invalid_json document $
}

// CodeOf returns the stable code of any adapter or contract error, wrapped
// or not; errors.Is compares codes.
func ExampleCodeOf() {
	wrapped := fmt.Errorf("refreshing tools: %w", purramcp.ErrCatalogStale)
	fmt.Println(purramcp.CodeOf(wrapped))
	fmt.Println(errors.Is(wrapped, purramcp.ErrCatalogStale))
	fmt.Println(purramcp.CodeOf(&purramcp.ContractError{Code: purramcp.CodeSchemaMismatch}))
	fmt.Printf("%q\n", purramcp.CodeOf(purramcp.ErrCanceled))
	fmt.Println(errors.Is(purramcp.ErrCanceled, context.Canceled))
	fmt.Printf("%q\n", purramcp.CodeOf(errors.New("some other error")))
	// Output:
	// mcp_catalog_stale
	// true
	// structured_output_schema_mismatch
	// ""
	// true
	// ""
}

// WithProgress on one call: the server's progress reaches the function as
// each notification is read, before Run returns; its message does not.
func ExampleWithProgress() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "indexer", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "remote.index", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3,
					Message: "server text, never shown"})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "indexed"}}}, nil
		})
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer serverSession.Wait()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	catalog, err := purramcp.DiscoverTools(ctx, session, "indexer", map[string]purramcp.ToolBinding{
		"remote.index": {LocalName: "index", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Index"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		log.Fatal(err)
	}

	ctx = purramcp.WithProgress(ctx, func(progress, total float64) {
		fmt.Printf("progress %v of %v\n", progress, total) // must return quickly
	})
	res, err := catalog.Registrations()[0].Run(ctx, nil, purramcp.ToolContext{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content.Text)
	// Output:
	// progress 1 of 3
	// progress 2 of 3
	// progress 3 of 3
	// [indexed]
}
