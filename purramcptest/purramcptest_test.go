package purramcptest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

var searchSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)

func TestStart_DiscoverAndCall(t *testing.T) {
	for _, version := range []string{purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) {
			srv := purramcptest.Start(t, purramcptest.Options{ProtocolVersion: version}, purramcptest.Tool{
				Tool:    &mcp.Tool{Name: "remote.search", Description: "Search.", InputSchema: searchSchema},
				Handler: purramcptest.Text(map[string]any{"n": 1.0}, "hit"),
			})
			if got := srv.Monitor.ProtocolVersion(); got != version {
				t.Fatalf("protocol %q, want %q", got, version)
			}
			catalog := srv.Discover(t, map[string]purramcp.ToolBinding{
				"remote.search": purramcptest.Binding("search"),
			}, purramcp.DiscoveryOptions{})
			if srv.Lists() != 1 || srv.Calls() != 0 {
				t.Fatalf("lists %d calls %d, want 1 and 0", srv.Lists(), srv.Calls())
			}
			defs := catalog.Registrations()
			if len(defs) != 1 || defs[0].Name != "search" {
				t.Fatalf("registrations %v", defs)
			}
			def := defs[0]
			res, err := def.Run(t.Context(), json.RawMessage(`{"q":"x"}`), purramcp.ToolContext{CallID: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := res.ModelJSON(), `{"structured":{"n":1},"text":["hit"]}`; got != want {
				t.Fatalf("ModelJSON %s, want %s", got, want)
			}
			args := srv.Arguments()
			if srv.Calls() != 1 || len(args) != 1 || string(args[0]) != `{"q":"x"}` {
				t.Fatalf("calls %d arguments %q", srv.Calls(), args)
			}
			res, err = def.Run(t.Context(), json.RawMessage(`{"q":1}`), purramcp.ToolContext{})
			if err != nil || res.ErrorCode != purramcp.CodeInvalidArguments || srv.Calls() != 1 {
				t.Fatalf("invalid arguments: %+v %v, calls %d", res, err, srv.Calls())
			}
		})
	}
}

func TestStart_ListChangeMakesCatalogStale(t *testing.T) {
	srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
		Tool: &mcp.Tool{Name: "remote.search", InputSchema: searchSchema}, Handler: purramcptest.Text(nil)})
	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{"remote.search": purramcptest.Binding("search")},
		purramcp.DiscoveryOptions{})
	before := srv.Monitor.Revision()
	srv.MCP.AddTool(&mcp.Tool{Name: "remote.other", InputSchema: searchSchema}, purramcptest.Text(nil))
	// The notification arrives asynchronously; wait on the monitor, not a clock.
	deadline := time.Now().Add(5 * time.Second)
	for srv.Monitor.Revision() == before {
		if time.Now().After(deadline) {
			t.Fatal("no list change arrived")
		}
		time.Sleep(time.Millisecond)
	}
	if !catalog.Stale() {
		t.Fatal("catalog not stale after a list change")
	}
}
