package fleet_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// login signs in to srv with oauth.Login into store, headlessly.
func login(t *testing.T, srv *oauthtest.Server, store oauth.Store, oc *fleet.OAuthConfig, timeout time.Duration) (*oauth.Credentials, error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	c, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: srv.URL, OAuth: oc, Store: store, Timeout: timeout,
		Browse: oauthtest.Browse, HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	return c, err, time.Since(start)
}
