package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// A Go host with its own session (monitor.Connect over
// mcp.StreamableClientTransport) uses an OAuth-protected MCP server: it
// signs in once into a file store, then gives its HTTP client an
// oauth.Transport, whose Keeper puts the stored token on the server's
// requests and refreshes it in the background.
func Example() {
	ctx := context.Background()
	// A protected MCP server and its authorization server, on loopback.
	srv := oauthtest.Start(oauthtest.Options{})
	defer srv.Close()
	dir, err := os.MkdirTemp("", "oauth-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store := &oauth.FileStore{Dir: filepath.Join(dir, "tokens")}

	// Sign in once. A command opens a browser on the authorization URL;
	// this follows it headlessly.
	if _, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: srv.URL, Store: store, Browse: oauthtest.Browse}); err != nil {
		log.Fatal(purramcp.CodeOf(err))
	}

	// The keeper of the stored credentials, refreshing in the background.
	keeper := oauth.NewKeeper(store, srv.URL, "")
	if _, err := keeper.Load(ctx); err != nil {
		log.Fatal(purramcp.CodeOf(err))
	}
	kctx, stop := context.WithCancel(ctx)
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		keeper.Keep(kctx, func(code string) { log.Println("sign in again:", code) })
	}()
	defer func() { stop(); <-kept }()

	// The host's own session, its HTTP client authorized by the keeper.
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	session, err := monitor.Connect(ctx, client, &mcp.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: &oauth.Transport{Base: base, Keeper: keeper}}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	catalog, err := purramcp.DiscoverTools(ctx, session, "remote", map[string]purramcp.ToolBinding{
		"echo": {LocalName: "echo", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Echo"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		log.Fatal(purramcp.CodeOf(err))
	}
	res, err := catalog.Registrations()[0].Run(ctx, json.RawMessage(`{"text":"hi"}`), purramcp.ToolContext{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q %v\n", res.ErrorCode, res.Content.Structured)
	// Output:
	// "" map[text:hi]
}
