package fleet_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/oauth"
)

// TestConnect_RefreshesExpiredTokenWithResource: credentials loaded after
// their access token expired are refreshed before the handshake; the
// refresh_token grant carries the stored resource indicator (RFC 8707), so
// an authorization server that binds tokens to a resource mints the new
// one for this server, and the rotated refresh token is stored.
func TestConnect_RefreshesExpiredTokenWithResource(t *testing.T) {
	var (
		mu    sync.Mutex
		forms []url.Values
	)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		mu.Lock()
		forms = append(forms, r.PostForm)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "fresh-access", "token_type": "Bearer",
			"expires_in": 3600, "refresh_token": "rotated-refresh"})
	}))
	defer as.Close()

	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fresh-access" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer rs.Close()

	ctx := context.Background()
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	require.NoError(t, store.Save(ctx, &oauth.Credentials{ServerURL: rs.URL + "/mcp", Resource: rs.URL + "/mcp",
		Issuer: as.URL, TokenURL: as.URL + "/token", ClientID: "client-1", AuthStyle: "params",
		AccessToken: "stale-access", Expiry: time.Now().Add(-time.Hour), RefreshToken: "first-refresh"}))

	s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: rs.URL + "/mcp"}, fleet.ConnectOptions{Timeout: 10 * time.Second, TokenStore: store})
	require.NoError(t, err)
	s.Close()

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, forms, 1)
	assert.Equal(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"first-refresh"},
		"resource": {rs.URL + "/mcp"}, "client_id": {"client-1"}}, forms[0])
	got, err := store.Load(ctx, rs.URL+"/mcp")
	require.NoError(t, err)
	assert.Equal(t, "fresh-access", got.AccessToken)
	assert.Equal(t, "rotated-refresh", got.RefreshToken)
	assert.WithinDuration(t, time.Now().Add(time.Hour), got.Expiry, time.Minute)
}
