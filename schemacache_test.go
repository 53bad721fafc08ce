package purramcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// TestSchemaCache_Rediscovery: at both protocols, rediscovering the
// distinct-schema catalog on one session (served from the monitor's schema
// cache) gives exactly the snapshot and digest a fresh session's first
// discovery gives; after the server changes one tool's schema and announces
// it, the rediscovery reflects the new schema exactly as a fresh session does,
// and a tool that calls through a cached contract validates as before.
func TestSchemaCache_Rediscovery(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		ctx := context.Background()
		server, bindings := distinctCatalog()
		cs, monitor := connectSDK(t, server, version)
		opts := purramcp.DiscoveryOptions{Monitor: monitor}
		first, err := purramcp.DiscoverTools(ctx, cs, "bench", bindings, opts)
		require.NoError(t, err)
		again, err := purramcp.DiscoverTools(ctx, cs, "bench", bindings, opts)
		require.NoError(t, err)
		freshSession, freshMonitor := connectSDK(t, server, version)
		fresh, err := purramcp.DiscoverTools(ctx, freshSession, "bench", bindings,
			purramcp.DiscoveryOptions{Monitor: freshMonitor})
		require.NoError(t, err)
		require.Equal(t, fresh.Snapshot(), first.Snapshot())
		require.Equal(t, fresh.Snapshot(), again.Snapshot())

		// A cached contract still validates: a call through the rediscovered
		// catalog with arguments its input schema rejects fails locally.
		def, ok := again.Registration("search_007")
		require.True(t, ok)
		res, err := def.Run(ctx, json.RawMessage(`{"query":""}`), purramcp.ToolContext{})
		require.NoError(t, err)
		require.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode)
		res, err = def.Run(ctx, json.RawMessage(`{"query":"q","limit":3}`), purramcp.ToolContext{})
		require.NoError(t, err)
		require.Empty(t, res.ErrorCode)

		// Tool 7's input bound changes: the rediscovery must not reuse the
		// old contract.
		changed := distinctTool(7)
		changed.InputSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":0}},` +
			`"required":["query"],"additionalProperties":false}`)
		server.AddTool(changed, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}},
				StructuredContent: map[string]any{"count": 0, "nextCursor": nil, "items": []any{}}}, nil
		})
		require.Eventually(t, again.Stale, 5*time.Second, 5*time.Millisecond)
		after, err := purramcp.DiscoverTools(ctx, cs, "bench", bindings, opts)
		require.NoError(t, err)
		s3, m3 := connectSDK(t, server, version)
		freshAfter, err := purramcp.DiscoverTools(ctx, s3, "bench", bindings, purramcp.DiscoveryOptions{Monitor: m3})
		require.NoError(t, err)
		require.Equal(t, freshAfter.Snapshot(), after.Snapshot())
		require.NotEqual(t, fresh.Snapshot().RevisionDigest, after.Snapshot().RevisionDigest)
		def, ok = after.Registration("search_007")
		require.True(t, ok)
		res, err = def.Run(ctx, json.RawMessage(`{"query":""}`), purramcp.ToolContext{})
		require.NoError(t, err)
		require.Empty(t, res.ErrorCode, "the changed schema admits an empty query")
	})
}
