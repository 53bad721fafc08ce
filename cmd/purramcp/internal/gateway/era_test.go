package gateway_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// TestHTTP_BothErasOneEndpoint: on the default endpoint a client at
// 2026-07-28 is served statelessly and a legacy client with a session,
// side by side; each lists, calls, hears of a list change (the modern one
// through subscriptions/listen) and gets the call's progress.
func TestHTTP_BothErasOneEndpoint(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	srv := serveHTTP(t, g, gateway.HTTPOptions{Token: testToken})

	type client struct {
		cs      *mcp.ClientSession
		changed chan struct{}
	}
	clients := map[string]*client{}
	for _, version := range []string{"", purramcp.ProtocolVersion20251125} {
		c := &client{changed: make(chan struct{}, 8)}
		c.cs = connectHTTPAt(t, ctx, srv.URL+"/mcp", testToken, version, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.changed <- struct{}{} },
		})
		clients[c.cs.InitializeResult().ProtocolVersion] = c
	}
	modern, legacy := clients[purramcp.ProtocolVersion20260728], clients[purramcp.ProtocolVersion20251125]
	require.NotNil(t, modern)
	require.NotNil(t, legacy)
	assert.Empty(t, modern.cs.ID(), "no session at 2026-07-28")
	assert.NotEmpty(t, legacy.cs.ID())
	for _, c := range []*client{modern, legacy} {
		assert.Equal(t, []string{"big", "block", "fail", "search"}, toolNames(t, ctx, c.cs))
		assert.JSONEq(t, `{"content":[{"type":"text","text":"found cats"}],"structuredContent":{"count":4}}`,
			call(t, ctx, c.cs, "search", `{"q":"cats"}`))
	}

	f.connect(ctx, "docs", newUpstream("Search documents, v2"), "", "")
	g.Refresh()
	for name, c := range map[string]*client{"modern": modern, "legacy": legacy} {
		select {
		case <-c.changed:
		case <-ctx.Done():
			t.Fatalf("%s client: no list change", name)
		}
		res, err := c.cs.ListTools(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, "Search documents, v2", res.Tools[3].Description, name)
	}
}

// TestHTTP_ProgressBothEras: a call's progress reaches a client of either
// era on the default endpoint.
func TestHTTP_ProgressBothEras(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	u := newStepsUpstream()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := u.server.Connect(ctx, st, nil)
	require.NoError(t, err)
	monitor := purramcp.NewCatalogMonitor()
	up, err := monitor.Connect(ctx, monitor.NewClient(&mcp.Implementation{Name: "fleet", Version: "1"}, nil), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close(); _ = ss.Wait() })
	catalog, err := purramcp.DiscoverTools(ctx, up, "steps", map[string]purramcp.ToolBinding{"remote.steps": {
		LocalName: "steps", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Steps"}, Scope: purramcp.Unscoped,
	}}, purramcp.DiscoveryOptions{Monitor: monitor})
	require.NoError(t, err)
	g, err := gateway.New(staticSource{defs: catalog.Registrations(), ups: []gateway.Upstream{{ID: "steps",
		State: gateway.StateReady, Digest: catalog.Snapshot().RevisionDigest, Snapshot: catalog.Snapshot()}}}, gateway.Options{})
	require.NoError(t, err)
	require.Empty(t, g.Refresh())
	srv := serveHTTP(t, g, gateway.HTTPOptions{Token: testToken})

	for _, version := range []string{"", purramcp.ProtocolVersion20251125} {
		progress := make(chan float64, 16)
		cs := connectHTTPAt(t, ctx, srv.URL+"/mcp", testToken, version, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				progress <- r.Params.Progress
			},
		})
		params := &mcp.CallToolParams{Name: "steps", Arguments: json.RawMessage(`{"n":3,"end":100}`)}
		params.SetProgressToken("t-1")
		res, err := cs.CallTool(ctx, params)
		require.NoError(t, err, "version %q", version)
		assert.Equal(t, []mcp.Content{&mcp.TextContent{Text: "done"}}, res.Content)
		// go-sdk runs notification handlers apart from the result, and the
		// gateway coalesces a value reported while the previous one is
		// being sent into the latest: wait for the first value (bounded by
		// ctx), then take what follows within a short drain.
		var got []float64
		select {
		case p := <-progress:
			got = append(got, p)
		case <-ctx.Done():
			t.Fatalf("%s: no progress", cs.InitializeResult().ProtocolVersion)
		}
		drain := time.NewTimer(500 * time.Millisecond)
	collect:
		for {
			select {
			case p := <-progress:
				got = append(got, p)
			case <-drain.C:
				break collect
			}
		}
		assert.Subset(t, []float64{1, 2, 3}, got, cs.InitializeResult().ProtocolVersion)
		assert.IsIncreasing(t, got, "each value once, in order")
	}
}
