package fleet_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
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

// jsonHandler answers v as JSON.
func jsonHandler(v any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
}

// TestLogin_ForeignAuthorizationServer: after a sign-in with its own
// authorization server, the server's resource metadata names another one.
// A running fleet keeps refreshing at the token endpoint it stored and
// never sends anything to the other server; a new login uses only the
// server the metadata names, presents the stored registration nowhere (it
// registers anew there), and when that server will not mint a token for
// this resource, fails mcp_auth_token_failed and leaves the stored
// credentials as they were.
func TestLogin_ForeignAuthorizationServer(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{AccessTokenLifetime: 2 * time.Second})
	foreign := oauthtest.New(t, oauthtest.Options{TokenPrefix: "foreign-"})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	first, err, _ := login(t, srv, store, nil, 0)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	srv.Handle(oauthtest.PathResourceMetadata, jsonHandler(map[string]any{
		"resource": srv.URL, "authorization_servers": []string{foreign.Issuer}}))

	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"tools": {"echo": {"as": "echo"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: store})
	waitFor(t, "ready", func() bool { return statusOf(t, f, "remote").State == fleet.StateReady })
	waitFor(t, "a background refresh", func() bool { return srv.Refreshes() >= 1 })
	if got := run(t, registration(t, f, "echo"), `{"text":"hi"}`); got != "" {
		t.Errorf("call after the refresh: %q", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := foreign.TokenRequests() + foreign.Registrations(); n != 0 {
		t.Errorf("the fleet sent %d requests to the foreign authorization server", n)
	}
	stored, err := store.Load(context.Background(), srv.URL)
	if err != nil || stored == nil || stored.Issuer != srv.Issuer {
		t.Fatalf("stored after the refresh: %v, %v", stored, err)
	}

	c, err, _ := login(t, srv, store, nil, hostileTimeout)
	if purramcp.CodeOf(err) != purramcp.CodeAuthTokenFailed || c != nil {
		t.Errorf("login = %v, %v; want %s", c, err, purramcp.CodeAuthTokenFailed)
	}
	if foreign.TokenRequests() != 1 {
		t.Errorf("foreign token requests = %d, want the one exchange it refused", foreign.TokenRequests())
	}
	if foreign.Registrations() != 1 || srv.Registrations() != 1 {
		t.Errorf("registrations: foreign %d, own %d; want 1 and 1 (the stored client is not presented to the foreign server)",
			foreign.Registrations(), srv.Registrations())
	}
	after, err := store.Load(context.Background(), srv.URL)
	if err != nil || after == nil || after.Issuer != srv.Issuer || after.ClientID != first.ClientID ||
		after.RefreshToken != stored.RefreshToken || after.AccessToken != stored.AccessToken {
		t.Errorf("stored after the failed login: %v, %v; want the credentials as they were", after, err)
	}
}

// TestFleet_HostileRefresh: a token endpoint that answers a refresh with
// 20 MiB takes the server out (unauthorized, mcp_auth_expired) without
// replacing the stored credentials, and at most 1 MiB of it is read.
func TestFleet_HostileRefresh(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{AccessTokenLifetime: 2 * time.Second})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	first, err, _ := login(t, srv, store, nil, 0)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	var wrote atomic.Int64
	srv.Handle(oauthtest.PathToken, streamed(`{"access_token":"`, 20<<20, &wrote))
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"tools": {"echo": {"as": "echo"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: store})
	waitFor(t, "unauthorized once the refresh fails", func() bool {
		return statusOf(t, f, "remote").State == fleet.StateUnauthorized
	})
	if st := statusOf(t, f, "remote"); st.Code != purramcp.CodeAuthExpired {
		t.Errorf("code = %q, want %q", st.Code, purramcp.CodeAuthExpired)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := wrote.Load(); n > 16<<20 {
		t.Errorf("the token endpoint's sockets took %d bytes, want at most 16 MiB", n)
	}
	after, err := store.Load(context.Background(), srv.URL)
	if err != nil || after == nil || after.AccessToken != first.AccessToken || after.RefreshToken != first.RefreshToken {
		t.Errorf("stored after the failed refresh: %v, %v; want the login's credentials", after, err)
	}
}

// TestFleet_RefreshRetriedWhenUnanswered: a token endpoint that hangs up
// without answering is a failure to reach it, not a refusal: the keeper
// tries again (every 5 s) and, once it answers, the fleet serves with the
// refreshed token without a login. Hung-up attempts count no refresh.
func TestFleet_RefreshRetriedWhenUnanswered(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{AccessTokenLifetime: 2 * time.Second})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	first, err, _ := login(t, srv, store, nil, 0)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	var hangups atomic.Int32
	srv.Handle(oauthtest.PathToken, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hangups.Add(1)
		panic(http.ErrAbortHandler) // the connection is closed with no answer
	}))
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"tools": {"echo": {"as": "echo"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: store})
	waitFor(t, "a refresh attempt", func() bool { return hangups.Load() >= 1 })
	srv.Handle(oauthtest.PathToken, nil) // answers again
	waitFor(t, "the retried refresh, stored", func() bool {
		c, err := store.Load(context.Background(), srv.URL)
		return err == nil && c != nil && c.AccessToken != first.AccessToken
	})
	// Ready may still be the first session's: a call on it finds the old
	// token due and waits for the refresh in flight (one per credential),
	// so it carries the refreshed token either way. A handshake that met
	// the expired token (a start slower than its 2 s) left the server
	// unauthorized until the keeper's refresh:
	// TestFleet_RefusedAtConnectRefreshedByKeeper.
	waitFor(t, "ready with the refreshed token", func() bool { return statusOf(t, f, "remote").State == fleet.StateReady })
	if got := run(t, registration(t, f, "echo"), `{"text":"hi"}`); got != "" {
		t.Errorf("call with the refreshed token: %q", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
