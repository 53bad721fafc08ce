package fleet_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// TestFleet_OAuthLifecycle follows one OAuth-protected server through a
// fleet's life: unauthorized until a login lands in the store, ready
// without a restart after it, served through background refreshes of a
// 2 s access token with every call sent exactly once, unauthorized again
// (mcp_auth_expired) once the refresh token is revoked, and back after the
// next login. No token ever shows in the fleet's status.
func TestFleet_OAuthLifecycle(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{AccessTokenLifetime: 2 * time.Second})
	store := &orderStore{Store: &oauth.FileStore{Dir: t.TempDir() + "/tokens"}, used: srv.Used}
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"limits": {"timeout": "5s"}, "tools": {"echo": {"as": "echo"}}}}}`))
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: store})

	st := statusOf(t, f, "remote")
	require.Equal(t, fleet.StateUnauthorized, st.State)
	assert.Equal(t, purramcp.CodeAuthRequired, st.Code)
	assert.Empty(t, f.Registrations())

	_, err, _ = login(t, srv, store, nil, 0)
	require.NoError(t, err)
	waitFor(t, "ready after the login", func() bool { return statusOf(t, f, "remote").State == fleet.StateReady })
	digest := statusOf(t, f, "remote").Digest

	// Calls for 5 s, over about two access-token lifetimes: the keeper
	// refreshes ahead of expiry and no call is refused or sent twice.
	calls := 0
	for start := time.Now(); time.Since(start) < 5*time.Second; calls++ {
		require.Equal(t, "", run(t, registration(t, f, "echo"), `{"text":"hi"}`), "call %d", calls)
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, calls, srv.ToolCalls("echo"), "every call reached the server once")
	assert.GreaterOrEqual(t, srv.Refreshes(), 2, "refreshed in the background")
	saves := store.log()
	require.GreaterOrEqual(t, len(saves), 3, "the login and the refreshes")
	seen := map[string]bool{}
	for i, sv := range saves {
		assert.False(t, sv.usedFirst, "save %d: the access token was sent before it was stored", i)
		assert.False(t, seen[sv.refresh], "save %d: the refresh token was rotated", i)
		seen[sv.refresh] = true
	}

	creds, err := store.Load(context.Background(), srv.URL)
	require.NoError(t, err)
	status, err := json.Marshal(f.Status())
	require.NoError(t, err)
	for _, secret := range []string{creds.AccessToken, creds.RefreshToken} {
		assert.NotContains(t, string(status), secret)
	}

	// Revoked: the next refresh is refused and the server is taken out.
	srv.RevokeRefreshTokens()
	srv.ExpireAccessTokens()
	before := srv.ToolCalls("echo")
	code := run(t, registration(t, f, "echo"), `{"text":"hi"}`)
	assert.Contains(t, []string{purramcp.CodeUnauthorized, purramcp.CodeConnectionClosed}, code)
	assert.Equal(t, before, srv.ToolCalls("echo"), "the refused call was not replayed")
	waitFor(t, "unauthorized after the revocation", func() bool {
		return statusOf(t, f, "remote").State == fleet.StateUnauthorized
	})
	assert.Equal(t, purramcp.CodeAuthExpired, statusOf(t, f, "remote").Code)
	assert.Empty(t, f.Registrations())

	_, err, _ = login(t, srv, store, nil, 0)
	require.NoError(t, err)
	waitFor(t, "ready after the second login", func() bool { return statusOf(t, f, "remote").State == fleet.StateReady })
	assert.Equal(t, digest, statusOf(t, f, "remote").Digest)
	assert.Equal(t, "", run(t, registration(t, f, "echo"), `{"text":"hi"}`))
	assert.False(t, strings.Contains(string(status), "Bearer"))
	require.NoError(t, f.Close())
}

// orderStore records each Save: the refresh token it stored and whether
// the server had already seen its access token, which must never happen
// (a rotated refresh token is persisted before the new access token is
// used).
type orderStore struct {
	oauth.Store
	used func(accessToken string) bool

	mu    sync.Mutex
	saves []saved
}

type saved struct {
	refresh   string
	usedFirst bool
}

func (s *orderStore) Save(ctx context.Context, c *oauth.Credentials) error {
	s.mu.Lock()
	s.saves = append(s.saves, saved{refresh: c.RefreshToken, usedFirst: s.used(c.AccessToken)})
	s.mu.Unlock()
	return s.Store.Save(ctx, c)
}

func (s *orderStore) log() []saved {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]saved(nil), s.saves...)
}

// TestFleet_StoredCredentialsOfAnotherClient: credentials stored for one
// client are never used for a server configured with another client ID:
// the fleet finds no usable token (mcp_auth_required) and the server
// never sees the stored access token; a login then signs in as the
// configured client, without reusing the stored registration, and the
// fleet recovers with it.
func TestFleet_StoredCredentialsOfAnotherClient(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	srv.AddClient("oauthtest-client-configured", "")
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	other, err, _ := login(t, srv, store, nil, 0) // dynamic registration: another client
	require.NoError(t, err)
	require.NotEqual(t, "oauthtest-client-configured", other.ClientID)

	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"oauth": {"clientId": "oauthtest-client-configured"}, "tools": {"echo": {"as": "echo"}}}}}`))
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: store})
	st := statusOf(t, f, "remote")
	require.Equal(t, fleet.StateUnauthorized, st.State)
	assert.Equal(t, purramcp.CodeAuthRequired, st.Code)
	assert.False(t, srv.Used(other.AccessToken), "the other client's token was sent")

	creds, err, _ := login(t, srv, store, cfg.Servers["remote"].OAuth, 0)
	require.NoError(t, err)
	assert.Equal(t, "oauthtest-client-configured", creds.ClientID)
	assert.Equal(t, 1, srv.Registrations(), "the configured client is not registered again")
	waitFor(t, "ready after the login as the configured client", func() bool {
		return statusOf(t, f, "remote").State == fleet.StateReady
	})
	assert.Equal(t, "", run(t, registration(t, f, "echo"), `{"text":"hi"}`))
	assert.False(t, srv.Used(other.AccessToken), "the other client's token was never sent")
	require.NoError(t, f.Close())
}

// A refresh refused while the session is up ends the session and makes
// the server unauthorized at once: the supervisor does not back off and
// reconnect with a token the keeper cannot renew. The back-off here is a
// minute, so a reconnect would leave the server out of the wait below.
func TestFleet_RefusedRefreshIsUnauthorizedAtOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{AccessTokenLifetime: 2 * time.Second})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"limits": {"timeout": "5s"}, "tools": {"echo": {"as": "echo"}}}}}`))
	require.NoError(t, err)
	_, err, _ = login(t, srv, store, nil, 0)
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fleet.Backoff{Initial: time.Minute, Max: time.Minute}, TokenStore: store})
	waitFor(t, "ready", func() bool { return statusOf(t, f, "remote").State == fleet.StateReady })

	srv.RevokeRefreshTokens() // the access token in hand stays valid until it expires
	waitFor(t, "unauthorized once the keeper's refresh is refused", func() bool {
		st := statusOf(t, f, "remote")
		return st.State == fleet.StateUnauthorized
	})
	assert.Equal(t, purramcp.CodeAuthExpired, statusOf(t, f, "remote").Code)
	assert.Empty(t, f.Registrations())
	require.NoError(t, f.Close())
}

// TestFleet_RefusedAtConnectRefreshedByKeeper: a server that refuses the
// access token at the handshake while its token endpoint cannot be
// reached is unauthorized only until the keeper's retried refresh lands:
// the keeper renews the credentials on its own (no login changes the
// store after it), and the server comes back with them, after exactly one
// refresh and no new registration.
func TestFleet_RefusedAtConnectRefreshedByKeeper(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	_, err, _ := login(t, srv, store, nil, 0)
	require.NoError(t, err)
	ctx := context.Background()
	creds, err := store.Load(ctx, srv.URL)
	require.NoError(t, err)
	const refused = "an-access-token-the-server-refuses"
	creds.AccessToken = refused // not due for an hour: no refresh before the handshake
	require.NoError(t, store.Save(ctx, creds))
	var hangups atomic.Int32
	srv.Handle(oauthtest.PathToken, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		hangups.Add(1)
		panic(http.ErrAbortHandler) // no answer: the keeper tries again in 5 s
	}))

	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"limits": {"timeout": "5s"}, "tools": {"echo": {"as": "echo"}}}}}`))
	require.NoError(t, err)
	f := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: store})
	st := statusOf(t, f, "remote")
	require.Equal(t, fleet.StateUnauthorized, st.State, "the handshake was refused and no refresh answered")
	assert.Equal(t, purramcp.CodeAuthExpired, st.Code)
	assert.True(t, srv.Used(refused), "the handshake presented the refused token")
	assert.NotZero(t, hangups.Load(), "a refresh was tried")

	srv.Handle(oauthtest.PathToken, nil) // answers again
	waitFor(t, "ready with the keeper's refreshed token", func() bool {
		return statusOf(t, f, "remote").State == fleet.StateReady
	})
	assert.Equal(t, "", run(t, registration(t, f, "echo"), `{"text":"hi"}`))
	assert.Equal(t, 1, srv.Refreshes())
	assert.Equal(t, 1, srv.Registrations(), "no new login")
	require.NoError(t, f.Close())
}
