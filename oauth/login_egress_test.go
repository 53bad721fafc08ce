package oauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// TestLogin_MetadataCannotPointInward: a (loopback) MCP server whose
// metadata names an authorization server at 169.254.169.254 (cloud
// metadata), whose authorization server metadata redirects there, or
// whose registration endpoint is there, ends the sign-in with
// mcp_auth_discovery_failed and nothing is sent there: the egress rule's
// dialer refuses the address before it connects (go-sdk's own metadata
// check, which stays on, refuses the registration endpoint's literal
// address first). The base transport would record any connection it
// were asked for off loopback (and fail it without dialing); it is never
// asked. (The address and scheme rules of every zone are
// TestAuthClient_EgressRule's.)
func TestLogin_MetadataCannotPointInward(t *testing.T) {
	const metadata = "https://169.254.169.254"
	for _, tc := range []struct {
		name, path string
		handler    func(srv *oauthtest.Server) http.Handler
		want       string
	}{
		{"resource metadata names it", oauthtest.PathResourceMetadata, func(srv *oauthtest.Server) http.Handler {
			return jsonHandler(map[string]any{"resource": srv.URL, "authorization_servers": []string{metadata}})
		}, purramcp.CodeAuthDiscoveryFailed},
		{"authorization server metadata redirects there", oauthtest.PathAuthMetadata, func(*oauthtest.Server) http.Handler {
			return http.RedirectHandler(metadata+"/latest/meta-data/", http.StatusTemporaryRedirect)
		}, purramcp.CodeAuthDiscoveryFailed},
		{"registration endpoint there", oauthtest.PathAuthMetadata, func(srv *oauthtest.Server) http.Handler {
			return jsonHandler(map[string]any{"issuer": srv.Issuer, "authorization_endpoint": srv.Issuer + oauthtest.PathAuthorize,
				"token_endpoint": srv.Issuer + oauthtest.PathToken, "registration_endpoint": metadata + "/register",
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
		}, purramcp.CodeAuthDiscoveryFailed}, // go-sdk's own metadata check refuses the literal address first
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := oauthtest.New(t, oauthtest.Options{})
			srv.Handle(tc.path, tc.handler(srv))
			var (
				mu       sync.Mutex
				recorded []string
			)
			base := &http.Transport{DisableKeepAlives: true}
			base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if strings.HasPrefix(addr, "127.0.0.1:") {
					return (&net.Dialer{}).DialContext(ctx, network, addr)
				}
				mu.Lock()
				recorded = append(recorded, addr)
				mu.Unlock()
				return nil, errors.New("recorded, not dialed")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
			_, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: srv.URL, Store: store, Browse: oauthtest.Browse,
				HTTPClient: &http.Client{Transport: base}})
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("Login: %v, want %s", err, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(recorded) != 0 {
				t.Errorf("connections off loopback asked for: %q", recorded)
			}
			if c, _ := store.Load(ctx, srv.URL); c != nil {
				t.Error("credentials stored")
			}
		})
	}
}
