package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func ExampleParseConfig() {
	_, err := fleet.ParseConfig([]byte(`{"mcpServers": {"fs": {"command": "fs-server",
		"tools": {"remote.search": {"as": "fs-search"}}}}}`))
	var ce *fleet.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Path)
		fmt.Println(ce.Reason)
	}
	// Output:
	// mcpServers.fs.tools["remote.search"].as
	// invalid local name
}

func ExampleFleet() {
	// An in-memory server stands in for a real one; a config file would
	// name a command or a URL instead of Dial.
	server := mcp.NewServer(&mcp.Implementation{Name: "units", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "units.list", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ft, km, m, mi"}}}, nil
		})
	dial := func(ctx context.Context) (mcp.Transport, error) {
		serverSide, clientSide := mcp.NewInMemoryTransports()
		if _, err := server.Connect(ctx, serverSide, nil); err != nil {
			return nil, err
		}
		return clientSide, nil
	}
	cfg := &fleet.Config{Servers: map[string]fleet.ServerConfig{
		"units": {Dial: dial, Tools: map[string]fleet.ToolConfig{"units.list": {As: "list_units"}}},
	}}
	f, err := fleet.New(cfg, fleet.Options{Lock: &fleet.Lock{}}) // an empty lock: nothing approved yet
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := f.Start(context.Background()); err != nil {
		panic(err)
	}
	st := f.Status()[0]
	fmt.Println(st.ID, st.State, len(f.Registrations()))
	_, changes, _ := f.Pending("units")
	for _, c := range changes {
		fmt.Println(c.LocalName, c.Kind)
	}
	if err := f.Approve("units", st.Digest); err != nil { // after a person reviewed the changes
		panic(err)
	}
	res, err := f.Registrations()[0].Run(context.Background(), nil, purramcp.ToolContext{})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Status()[0].State, res.Content.Text)
	// f.Lock().WriteFile("purramcp-lock.json") would record the approval.

	// Output:
	// units unapproved 0
	//  changed
	// list_units added
	// ready [ft, km, m, mi]
}
