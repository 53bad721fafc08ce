package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// A callPath is one way to call the search tool: straight to the upstream
// server, or through the gateway; both over in-process stdio pipes.
type callPath struct {
	session *mcp.ClientSession
	name    string // the tool's name on that path
}

const benchWant = `{"content":[{"type":"text","text":"found cats"}],"structuredContent":{"count":4}}`

func (p callPath) call(tb testing.TB, ctx context.Context) {
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: p.name, Arguments: json.RawMessage(`{"q":"cats"}`)})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "found cats" {
		tb.Fatalf("call on %s: %v %+v", p.name, err, res)
	}
}

// directPath connects a client to the upstream server over pipes.
func directPath(tb testing.TB, ctx context.Context, u *upstream) callPath {
	downR, downW := io.Pipe()
	upR, upW := io.Pipe()
	ss, err := u.server.Connect(ctx, &mcp.IOTransport{Reader: downR, Writer: upW}, nil)
	require.NoError(tb, err)
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: upR, Writer: downW}, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return callPath{session: cs, name: "remote.search"}
}

// gatewayPath connects a client over pipes to a gateway whose upstream is u.
func gatewayPath(tb testing.TB, ctx context.Context, u *upstream) callPath {
	f := newFakeFleet(tb)
	f.connect(ctx, "docs", u, "", "")
	g, err := gateway.New(f, gateway.Options{})
	require.NoError(tb, err)
	g.Refresh()
	cs, served := pipeClient(tb, ctx, g)
	tb.Cleanup(func() { _ = cs.Close(); <-served })
	return callPath{session: cs, name: "search"}
}

// BenchmarkCall compares one search call straight to the upstream server,
// through a pass-through proxy with no checks (the second hop alone) and
// through the gateway; gateway minus passthrough in allocs/op is what the
// gateway itself adds (purramcp's checks, its server's wiring), passthrough
// minus direct what any second hop costs.
func BenchmarkCall(b *testing.B) {
	for _, tc := range []struct {
		name string
		path func(testing.TB, context.Context, *upstream) callPath
	}{{"direct", directPath}, {"passthrough", passthroughPath}, {"gateway", gatewayPath}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := b.Context()
			p := tc.path(b, ctx, newUpstream("Search documents"))
			b.ReportAllocs()
			for b.Loop() {
				p.call(b, ctx)
			}
		})
	}
}
