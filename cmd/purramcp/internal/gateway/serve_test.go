package gateway_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// pipeClient connects a go-sdk client to a gateway served by ServeStdio
// over in-process pipes; closing the returned session ends ServeStdio.
func pipeClient(t testing.TB, ctx context.Context, g *gateway.Gateway) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	downR, downW := io.Pipe() // client -> gateway
	upR, upW := io.Pipe()     // gateway -> client
	served := make(chan error, 1)
	go func() {
		served <- g.ServeStdio(ctx, downR, upW)
		_ = upW.Close()
		_ = downR.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: upR, Writer: downW}, nil)
	require.NoError(t, err)
	return cs, served
}

func TestServeStdio(t *testing.T) {
	ctx, _, _, g := docsGateway(t)
	cs, served := pipeClient(t, ctx, g)
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	assert.Equal(t, []string{"big", "block", "fail", "search"}, toolNames(t, ctx, cs))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"found cats"}],"structuredContent":{"count":4}}`,
		call(t, ctx, cs, "search", `{"q":"cats"}`))
	require.NoError(t, cs.Close())
	select {
	case err := <-served:
		assert.NoError(t, err, "the client closing stdin ends ServeStdio cleanly")
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after the client closed")
	}
}

func TestServeStdio_ContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	serveCtx, stop := context.WithCancel(ctx)
	cs, served := pipeClient(t, serveCtx, g)
	stop()
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after its context ended")
	}
	_ = cs.Close()
}

func TestServeHTTP_ShutdownClosesSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	f.connect(ctx, "docs", newUpstream("Search documents"), "", "")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- g.ServeHTTP(serveCtx, ln, gateway.HTTPOptions{Token: testToken}) }()

	// A stateful session, with its standalone stream open.
	cs := connectHTTP(t, ctx, "http://"+ln.Addr().String()+"/mcp", testToken)
	assert.Equal(t, []string{"big", "block", "fail", "search"}, toolNames(t, ctx, cs))
	start := time.Now()
	stop()
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("ServeHTTP did not return after its context ended")
	}
	assert.Less(t, time.Since(start), 6*time.Second)
	_, err = cs.ListTools(ctx, nil)
	assert.Error(t, err, "the gateway is gone")
	_ = cs.Close()
}

func TestServeHTTP_InvalidOptionsClosesListener(t *testing.T) {
	g := newGateway(t, newFakeFleet(t), gateway.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	assert.Error(t, g.ServeHTTP(t.Context(), ln, gateway.HTTPOptions{MaxBodyBytes: -1}))
	_, err = ln.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
}
