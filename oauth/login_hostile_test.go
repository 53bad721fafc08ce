package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// hostileTimeout is each OAuth request's bound in the hostile-peer tests.
const hostileTimeout = 300 * time.Millisecond

// streamed answers 200 with a JSON document that starts with prefix and
// goes on with filler up to n bytes, written in 64 KiB pieces until the
// client stops reading; wrote counts the bytes it managed to write.
func streamed(prefix string, n int64, wrote *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		k, _ := w.Write([]byte(prefix))
		wrote.Add(int64(k))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for sent := int64(len(prefix)); sent < n; sent += int64(len(chunk)) {
			k, err := w.Write(chunk)
			wrote.Add(int64(k))
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
	})
}

// stalled never answers: it reads the request (so that the server sees
// the client hang up) and holds it until the client gives up.
var stalled = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
})

// jsonHandler answers v as JSON.
func jsonHandler(v any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
}

// TestLogin_HostilePeers: each hostile OAuth peer ends the login with its
// code, within a time set by the per-request bound (not by the peer), with
// nothing stored, at most 16 MiB of what the peer sent accepted by the
// sockets (1 MiB read, the rest kernel buffers), and no goroutine left (TestMain).
func TestLogin_HostilePeers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(srv *oauthtest.Server, wrote *atomic.Int64)
		code   string
		took   time.Duration // the bound on the whole login
	}{
		{
			name: "resource metadata of 100 MiB",
			script: func(srv *oauthtest.Server, wrote *atomic.Int64) {
				srv.Handle(oauthtest.PathResourceMetadata, streamed(`{"resource":"`, 100<<20, wrote))
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 3 * time.Second,
		},
		{
			name: "resource metadata that never answers",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathResourceMetadata, stalled)
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 4 * hostileTimeout,
		},
		{
			name: "resource metadata redirecting to itself",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathResourceMetadata, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, r.URL.Path, http.StatusFound)
				}))
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 2 * time.Second,
		},
		{
			name: "authorization server metadata of 100 MiB",
			script: func(srv *oauthtest.Server, wrote *atomic.Int64) {
				srv.Handle(oauthtest.PathAuthMetadata, streamed(`{"issuer":"`, 100<<20, wrote))
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 3 * time.Second,
		},
		{
			name: "authorization server metadata that never answers",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathAuthMetadata, stalled)
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 6 * hostileTimeout,
		},
		{
			name: "an issuer that is not the metadata's",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathAuthMetadata, jsonHandler(map[string]any{
					"issuer": "https://issuer.invalid", "authorization_endpoint": srv.Issuer + oauthtest.PathAuthorize,
					"token_endpoint": srv.Issuer + oauthtest.PathToken, "registration_endpoint": srv.Issuer + oauthtest.PathRegister,
					"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
				}))
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 2 * time.Second,
		},
		{
			name: "resource metadata naming a plain-http authorization server off loopback",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathResourceMetadata, jsonHandler(map[string]any{
					"resource": srv.URL, "authorization_servers": []string{"http://auth.example.com"},
				}))
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 2 * time.Second,
		},
		{
			name: "a token endpoint off loopback over plain http",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathAuthMetadata, jsonHandler(map[string]any{
					"issuer": srv.Issuer, "authorization_endpoint": srv.Issuer + oauthtest.PathAuthorize,
					"token_endpoint": "http://auth.example.com/token", "registration_endpoint": srv.Issuer + oauthtest.PathRegister,
					"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
				}))
			},
			code: purramcp.CodeAuthDiscoveryFailed, took: 2 * time.Second,
		},
		{
			name: "a registration answer of 20 MiB",
			script: func(srv *oauthtest.Server, wrote *atomic.Int64) {
				srv.Handle(oauthtest.PathRegister, streamed(`{"client_id":"`, 20<<20, wrote))
			},
			code: purramcp.CodeAuthRegistrationFailed, took: 3 * time.Second,
		},
		{
			name: "a token answer of 20 MiB",
			script: func(srv *oauthtest.Server, wrote *atomic.Int64) {
				srv.Handle(oauthtest.PathToken, streamed(`{"access_token":"`, 20<<20, wrote))
			},
			code: purramcp.CodeAuthTokenFailed, took: 3 * time.Second,
		},
		{
			name: "a token endpoint that never answers",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathToken, stalled)
			},
			code: purramcp.CodeAuthTokenFailed, took: 2*time.Second + 2*hostileTimeout,
		},
		{
			name: "a token answer without a token type of bearer",
			script: func(srv *oauthtest.Server, _ *atomic.Int64) {
				srv.Handle(oauthtest.PathToken, jsonHandler(map[string]any{
					"access_token": "oauthtest-at-mac", "token_type": "mac", "expires_in": 3600}))
			},
			code: purramcp.CodeAuthTokenFailed, took: 2 * time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := oauthtest.New(t, oauthtest.Options{})
			var wrote atomic.Int64
			tc.script(srv, &wrote)
			store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
			c, err, took := login(t, srv, store, nil, hostileTimeout)
			if got := purramcp.CodeOf(err); got != tc.code || c != nil {
				t.Errorf("login = %v, %v (code %q); want code %q", c, err, got, tc.code)
			}
			if took > tc.took {
				t.Errorf("login took %s, want at most %s", took, tc.took)
			}
			if n := wrote.Load(); n > 16<<20 {
				t.Errorf("the peer wrote %d bytes before the login stopped reading, want at most 16 MiB", n)
			}
			t.Logf("%s in %s; the peer's sockets took %d bytes", purramcp.CodeOf(err), took.Round(time.Millisecond), wrote.Load())
			if got, err := store.Load(context.Background(), srv.URL); got != nil || err != nil {
				t.Errorf("stored %v, %v; want nothing", got, err)
			}
			if err != nil && strings.Contains(err.Error(), "oauthtest-") {
				t.Errorf("the error %q carries a peer's value", err)
			}
		})
	}
}
