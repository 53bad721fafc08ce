package purramcptest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Canary is in every error text a [Fixture]'s server and host produce: a
// test asserts it never reaches a model or a request to a vendor.
const Canary = "CANARY-purramcptest-remote-secret"

// Schemas of a [Fixture]'s tools. StrictSchema is eligible for every
// vendor's strict mode as it is; LooseSchema is not (an optional property
// and a numeric bound).
var (
	StrictSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"],"additionalProperties":false}`)
	LooseSchema  = json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","minimum":1},"verbose":{"type":"boolean"}},"required":["id"],"additionalProperties":false}`)
)

// A Fixture is a [Server] with one tool per outcome an integration renders,
// discovered with [Fixture.Bindings]; remote remote.X is bound as X:
//
//   - search (StrictSchema): answers "hits for <q>"; its ScopeFunc records
//     each call's ToolContext.CallID ([Fixture.CallIDs]);
//   - lookup (LooseSchema): answers "one" and structured {"id":1};
//   - fail: answers isError, with Canary in its text (mcp_tool_error);
//   - deny: its ScopeFunc denies, with Canary in the reason
//     (mcp_scope_denied);
//   - host: its ScopeFunc fails with a host error holding Canary
//     (host_failure);
//   - broken: answers a JSON-RPC error holding Canary (mcp_protocol_error).
type Fixture struct {
	// Server is the running server.
	Server *Server
	// Catalog is the discovered catalog.
	Catalog *purramcp.Catalog

	mu      sync.Mutex // guards callIDs
	callIDs []string
}

// NewFixture starts a Fixture's server and discovers its tools; everything
// is closed when tb's test ends.
func NewFixture(tb testing.TB) *Fixture {
	tb.Helper()
	f := &Fixture{}
	f.Server = Start(tb, Options{},
		Tool{Tool: &mcp.Tool{Name: "remote.search", Description: "Search the index.", InputSchema: StrictSchema}, Handler: echo},
		Tool{Tool: &mcp.Tool{Name: "remote.lookup", Description: "Look up one record.", InputSchema: LooseSchema},
			Handler: Text(map[string]any{"id": 1.0}, "one")},
		Tool{Tool: &mcp.Tool{Name: "remote.fail", Description: "Always fails.", InputSchema: StrictSchema}, Handler: failing},
		Tool{Tool: &mcp.Tool{Name: "remote.deny", Description: "Denied by the host.", InputSchema: StrictSchema}, Handler: echo},
		Tool{Tool: &mcp.Tool{Name: "remote.host", Description: "Host scope fails.", InputSchema: StrictSchema}, Handler: echo},
		Tool{Tool: &mcp.Tool{Name: "remote.broken", Description: "Answers an error.", InputSchema: StrictSchema}, Handler: broken},
	)
	f.Catalog = f.Server.Discover(tb, f.Bindings(), purramcp.DiscoveryOptions{})
	return f
}

// Bindings returns the fixture's bindings (fresh each call), for a
// rediscovery.
func (f *Fixture) Bindings() map[string]purramcp.ToolBinding {
	search := Binding("search")
	search.Scope = func(_ context.Context, _ map[string]any, call purramcp.ToolContext) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.callIDs = append(f.callIDs, call.CallID)
		return nil
	}
	deny := Binding("deny")
	deny.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return purramcp.Deny(Canary) }
	host := Binding("host")
	host.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return errors.New(Canary) }
	return map[string]purramcp.ToolBinding{
		"remote.search": search,
		"remote.lookup": Binding("lookup"),
		"remote.fail":   Binding("fail"),
		"remote.deny":   deny,
		"remote.host":   host,
		"remote.broken": Binding("broken"),
	}
}

// CallIDs returns the call ids the search tool's ScopeFunc saw, in order.
func (f *Fixture) CallIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.callIDs...)
}

// MakeStale adds a tool to the server, which sends
// notifications/tools/list_changed, and waits until the catalog is stale.
func (f *Fixture) MakeStale(tb testing.TB) {
	tb.Helper()
	f.Server.MCP.AddTool(&mcp.Tool{Name: "remote.added", InputSchema: StrictSchema}, Text(nil, "x"))
	WaitStale(tb, f.Catalog)
}
