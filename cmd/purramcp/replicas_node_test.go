package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe_StatelessReplicasBehindHAProxyBothEras: two `serve --http
// --stateless` replicas behind HAProxy (round robin, no stickiness).
// go-sdk's client at its default (2026-07-28) and pinned at 2025-11-25,
// and the TypeScript SDK v2 client with each of its negotiations, list
// twice and call four times; every request may land on either replica.
func TestServe_StatelessReplicasBehindHAProxyBothEras(t *testing.T) {
	haproxyBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	dir := serveSetup(t, true)
	t.Setenv("PURRAMCP_TEST_TOKEN", "r3plica")
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	var backends []string
	for range 2 {
		s := startServe(t, serveCtx, dir, "--http", "127.0.0.1:0", "--stateless", "--token-env", "PURRAMCP_TEST_TOKEN")
		backends = append(backends, listenAddr(t, s))
	}
	port := freePort(t)
	startHAProxyProbe(t, ctx, port, backends, "/mcp", func(status int) bool { return status == http.StatusUnauthorized })
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)

	for _, tc := range []struct{ ask, protocol string }{{"", "2026-07-28"}, {"2025-11-25", "2025-11-25"}} {
		client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
			HTTPClient: &http.Client{Transport: bearerTransport{"r3plica"}}}, &mcp.ClientSessionOptions{ProtocolVersion: tc.ask})
		require.NoError(t, err, "go-sdk client asking %q", tc.ask)
		assert.Equal(t, tc.protocol, cs.InitializeResult().ProtocolVersion)
		for range 2 {
			assert.Equal(t, []string{"units_convert", "units_list"}, serveToolNames(t, ctx, cs))
		}
		for i := range 4 {
			assert.JSONEq(t, convertResult, serveCall(t, ctx, cs, "units_convert", `{"value":1,"from":"km","to":"m"}`), "call %d", i)
		}
		_ = cs.Close()
	}

	clients, node := nodeClients(t)
	if _, err := os.Stat(filepath.Join(clients, "node_modules", "@modelcontextprotocol", "client", "package.json")); err != nil {
		t.Skip("the TypeScript SDK v2 client is not installed in " + clients)
	}
	for _, tc := range []struct{ negotiation, protocol string }{
		{"default", "2025-11-25"}, {"legacy", "2025-11-25"}, {"auto", "2026-07-28"}, {"2026-07-28", "2026-07-28"},
	} {
		plan := `{"sdk":2,"transport":"http","url":"` + url + `","token":"r3plica","negotiation":"` + tc.negotiation +
			`","calls":` + sdkPlanCalls + `}`
		var got struct {
			ProtocolVersion string            `json:"protocolVersion"`
			Tools           []string          `json:"tools"`
			Results         []json.RawMessage `json:"results"`
		}
		require.NoError(t, json.Unmarshal([]byte(runNode(t, ctx, clients, node, "sdk-client.mjs", plan)), &got))
		assert.Equal(t, tc.protocol, got.ProtocolVersion, tc.negotiation)
		assert.Equal(t, []string{"units_convert", "units_list"}, got.Tools, tc.negotiation)
		require.Len(t, got.Results, 3, tc.negotiation)
		assert.Contains(t, string(got.Results[0]), `"text":"1 km = 1000 m"`, tc.negotiation)
		assert.Contains(t, string(got.Results[1]), `mcp_invalid_arguments`, tc.negotiation)
	}
	stop()
}
