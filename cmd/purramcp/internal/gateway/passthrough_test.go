package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// passthroughPath is the floor a gateway's cost is measured against: the
// same two hops as gatewayPath (the upstream in memory, the client over
// pipes) through a proxy with no checks at all, a go-sdk server whose
// search handler forwards the call on a go-sdk client session and returns
// the upstream's result as it came.
func passthroughPath(tb testing.TB, ctx context.Context, u *upstream) callPath {
	serverT, clientT := mcp.NewInMemoryTransports()
	us, err := u.server.Connect(ctx, serverT, nil)
	require.NoError(tb, err)
	upstreamCS, err := mcp.NewClient(&mcp.Implementation{Name: "proxy", Version: "1"}, nil).Connect(ctx, clientT, nil)
	require.NoError(tb, err)

	var search *mcp.Tool
	for tool, err := range upstreamCS.Tools(ctx, nil) {
		require.NoError(tb, err)
		if tool.Name == "remote.search" {
			search = tool
		}
	}
	require.NotNil(tb, search)
	proxy := mcp.NewServer(&mcp.Implementation{Name: "proxy", Version: "1"}, nil)
	proxy.AddTool(&mcp.Tool{Name: "search", Description: search.Description, InputSchema: search.InputSchema,
		OutputSchema: search.OutputSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return upstreamCS.CallTool(ctx, &mcp.CallToolParams{Name: "remote.search", Arguments: req.Params.Arguments})
		})

	downR, downW := io.Pipe()
	upR, upW := io.Pipe()
	ps, err := proxy.Connect(ctx, &mcp.IOTransport{Reader: downR, Writer: upW}, nil)
	require.NoError(tb, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: upR, Writer: downW}, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		_ = cs.Close()
		_ = ps.Wait()
		_ = upstreamCS.Close()
		_ = us.Wait()
	})
	return callPath{session: cs, name: "search"}
}

// TestPassthroughPath: the floor answers as the other paths do, so the
// benchmark compares like with like.
func TestPassthroughPath(t *testing.T) {
	ctx := t.Context()
	u := newUpstream("Search documents")
	p := passthroughPath(t, ctx, u)
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "cats"}})
	require.NoError(t, err)
	got, err := json.Marshal(map[string]any{"content": res.Content, "structuredContent": res.StructuredContent})
	require.NoError(t, err)
	require.JSONEq(t, benchWant, string(got))
	require.Equal(t, int32(1), u.calls.Load())
}
