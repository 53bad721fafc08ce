package fleet_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// dueAtStart signs in to srv into a store in dir and makes the stored
// access token due: expired in the store and refused by the server.
func dueAtStart(t *testing.T, srv *oauthtest.Server, dir string) {
	t.Helper()
	store := &oauth.FileStore{Dir: dir}
	_, err, _ := login(t, srv, store, nil, 0)
	require.NoError(t, err)
	c, err := store.Load(context.Background(), srv.URL)
	require.NoError(t, err)
	c.Expiry = time.Now().Add(-time.Minute)
	require.NoError(t, store.Save(context.Background(), c))
	srv.ExpireAccessTokens()
}

func remoteConfig(t *testing.T, srv *oauthtest.Server) *fleet.Config {
	t.Helper()
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {"remote": {"type": "http", "url": "` + srv.URL + `",
		"limits": {"timeout": "5s"}, "tools": {"echo": {"as": "echo"}}}}}`))
	require.NoError(t, err)
	return cfg
}

// TestFleet_RefreshDueAtStartOnce: a fleet whose stored access token is
// already due when it starts refreshes it once. Against an authorization
// server that revokes the grant when a refresh token is presented twice
// (RFC 9700 §4.14.2), the supervisor's refresh before the handshake and
// the keeper's own collapse into one: no refresh token is presented twice
// and the server ends ready.
func TestFleet_RefreshDueAtStartOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{RevokeOnReuse: true})
	dir := t.TempDir() + "/tokens"
	dueAtStart(t, srv, dir)

	f := startFleet(t, remoteConfig(t, srv), fleet.Options{Backoff: fastBackoff, TokenStore: &oauth.FileStore{Dir: dir}})
	waitFor(t, "ready or unauthorized", func() bool {
		st := statusOf(t, f, "remote").State
		return st == fleet.StateReady || st == fleet.StateUnauthorized
	})
	assert.Equal(t, fleet.StateReady, statusOf(t, f, "remote").State, statusOf(t, f, "remote").Code)
	assert.Equal(t, 0, srv.Reused(), "a refresh token was presented twice")
	assert.Equal(t, 0, srv.Revoked())
	assert.Equal(t, 1, srv.Refreshes())
	assert.Equal(t, "", run(t, registration(t, f, "echo"), `{"text":"hi"}`))
	require.NoError(t, f.Close())
}

// TestFleet_RefreshOncePerCredentialAcrossConsumers: two fleets and a
// one-shot consumer (Connect, as purramcp lock does), each with its own
// FileStore value over one directory, share one credential of 1 s
// access tokens for at least 20 refreshes. Against an authorization
// server that revokes the grant on refresh token reuse, every refresh
// token is presented once (the store entry's lock is held around load,
// refresh and save, and a consumer adopts the token another one stored),
// and every consumer is ready at the end.
func TestFleet_RefreshOncePerCredentialAcrossConsumers(t *testing.T) {
	if testing.Short() {
		t.Skip("20 refresh cycles of 1 s tokens")
	}
	srv := oauthtest.New(t, oauthtest.Options{RevokeOnReuse: true, AccessTokenLifetime: time.Second})
	dir := t.TempDir() + "/tokens"
	dueAtStart(t, srv, dir)

	cfg := remoteConfig(t, srv)
	f1 := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: &oauth.FileStore{Dir: dir}})
	f2 := startFleet(t, cfg, fleet.Options{Backoff: fastBackoff, TokenStore: &oauth.FileStore{Dir: dir}})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	connect := func() error {
		s, err := fleet.Connect(ctx, cfg.Servers["remote"],
			fleet.ConnectOptions{Timeout: 5 * time.Second, TokenStore: &oauth.FileStore{Dir: dir}})
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Discover(ctx, "remote", nil)
		return err
	}
	var (
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		connects, failures int
	)
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the lock-like consumer, connecting again and again
		defer wg.Done()
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				err := connect()
				mu.Lock()
				connects++
				if err != nil {
					failures++
				}
				mu.Unlock()
			}
		}
	}()
	for srv.Refreshes() < 20 && srv.Revoked() == 0 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	close(stop)
	wg.Wait()
	require.NoError(t, ctx.Err(), "20 refreshes did not happen")

	assert.Equal(t, 0, srv.Reused(), "a refresh token was presented twice")
	assert.Equal(t, 0, srv.Revoked())
	for i, f := range []*fleet.Fleet{f1, f2} {
		waitFor(t, "ready at the end", func() bool { return statusOf(t, f, "remote").State == fleet.StateReady })
		assert.Equal(t, "", run(t, registration(t, f, "echo"), `{"text":"hi"}`), "fleet %d", i+1)
	}
	assert.NoError(t, connect(), "the one-shot consumer")
	t.Logf("%d refreshes; the one-shot consumer connected %d times, %d failed", srv.Refreshes(), connects, failures)
	require.NoError(t, f1.Close())
	require.NoError(t, f2.Close())
}

// TestConnect_RefusedRefreshAdoptsStoredLogin: when the authorization
// server refuses a refresh while other credentials reach the store (a
// login that finished meanwhile), the refusal does not mark the
// credentials expired: the stored ones are adopted and the session opens
// with them.
func TestConnect_RefusedRefreshAdoptsStoredLogin(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	dir := t.TempDir() + "/tokens"
	dueAtStart(t, srv, dir)
	fresh, err, _ := login(t, srv, &oauth.FileStore{Dir: t.TempDir() + "/other"}, nil, 0)
	require.NoError(t, err)
	store := &oauth.FileStore{Dir: dir}
	srv.Handle(oauthtest.PathToken, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NoError(t, store.Save(r.Context(), fresh)) // the login lands while the refresh is in flight
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
	}))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := fleet.Connect(ctx, remoteConfig(t, srv).Servers["remote"], fleet.ConnectOptions{TokenStore: store})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Discover(ctx, "remote", nil)
	require.NoError(t, err)
	assert.True(t, srv.Used(fresh.AccessToken))
}
