package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// TestKeeper_RefusalOnAnyPathIsLost: a refresh refused on a path other
// than Keep's own is reported to Keep's lost, once, so that the server's
// session ends: a caller's Refresh while Keep waits for the token to be
// due, and the Transport's refresh of a due token before a request (the
// request then goes without a token and gets the server's 401, which
// wakes Keep with nothing left to refresh). The refused refresh token is
// presented once.
func TestKeeper_RefusalOnAnyPathIsLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		due  bool                                               // the stored access token is past its expiry
		run  func(t *testing.T, k *oauth.Keeper, mcpURL string) // the refresh outside Keep
		keep bool                                               // Keep runs before the refresh
	}{
		{name: "Refresh while Keep waits", keep: true, run: func(t *testing.T, k *oauth.Keeper, _ string) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			assert.Equal(t, purramcp.CodeAuthExpired, purramcp.CodeOf(k.Refresh(ctx)))
		}},
		{name: "Transport's refresh, then a 401", due: true, run: func(t *testing.T, k *oauth.Keeper, mcpURL string) {
			post(t, k, mcpURL)
		}},
		{name: "Transport's refresh while Keep runs, then a 401", due: true, keep: true,
			run: func(t *testing.T, k *oauth.Keeper, mcpURL string) { post(t, k, mcpURL) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := oauthtest.New(t, oauthtest.Options{}) // one-hour access tokens
			store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
			_, err, _ := login(t, srv, store, nil, 0)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tc.due {
				c, err := store.Load(ctx, srv.URL)
				require.NoError(t, err)
				c.Expiry = time.Now().Add(-time.Second)
				require.NoError(t, store.Save(ctx, c))
			}
			k := oauth.NewKeeper(store, srv.URL, "")
			_, err = k.Load(ctx)
			require.NoError(t, err)
			srv.RevokeRefreshTokens()
			before := srv.TokenRequests()

			lost := make(chan string, 4)
			kctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			keep := func() {
				go func() {
					defer close(done)
					k.Keep(kctx, func(code string) { lost <- code })
				}()
			}
			if tc.keep {
				keep() // with a due token, Keep's refresh and the Transport's race: one is asked, once
			}
			tc.run(t, k, srv.URL)
			if !tc.keep {
				keep()
			}
			select {
			case code := <-lost:
				assert.Equal(t, purramcp.CodeAuthExpired, code)
			case <-ctx.Done():
				t.Fatal("Keep never reported the refused refresh: the server's session would stand")
			}
			stop()
			<-done
			assert.Zero(t, len(lost), "reported once")
			assert.Equal(t, purramcp.CodeAuthExpired, k.Reason())
			assert.Equal(t, 1, srv.TokenRequests()-before, "the revoked refresh token is presented once")
		})
	}
}

// post sends an MCP request through k's Transport: its due token is
// refreshed first, the refusal leaves no token to send, and the server's
// 401 is purramcp.ErrUnauthorized.
func post(t *testing.T, k *oauth.Keeper, mcpURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	base := &http.Transport{DisableKeepAlives: true}
	defer base.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Transport: &oauth.Transport{Base: base, Keeper: k}}).Do(req)
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.True(t, errors.Is(err, purramcp.ErrUnauthorized), "the server's 401: %v", err)
}
