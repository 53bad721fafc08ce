package oauth_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// login runs oauth.Login against srv into store, bounded by 20 s.
func login(t *testing.T, srv *oauthtest.Server, store oauth.Store, oc *oauth.Config, timeout time.Duration) (*oauth.Credentials, error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	c, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: srv.URL, OAuth: oc, Store: store, Timeout: timeout,
		Browse: oauthtest.Browse, HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	return c, err, time.Since(start)
}

func TestLoginDynamicRegistration(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	c, err, took := login(t, srv, store, nil, 0)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if took > 5*time.Second {
		t.Errorf("login took %s", took)
	}
	if c.Issuer != srv.Issuer || c.Resource != srv.URL || !strings.HasPrefix(c.AccessToken, "oauthtest-at-") ||
		!strings.HasPrefix(c.RefreshToken, "oauthtest-rt-") || srv.Registrations() != 1 || srv.TokenRequests() != 1 {
		t.Fatalf("creds %v, registrations %d, token requests %d", c, srv.Registrations(), srv.TokenRequests())
	}
	got, err := store.Load(context.Background(), srv.URL)
	if err != nil || got == nil || got.AccessToken != c.AccessToken {
		t.Fatalf("stored %v, %v", got, err)
	}
	// A second login reuses the stored registration.
	c2, err, _ := login(t, srv, store, nil, 0)
	if err != nil {
		t.Fatalf("second login: %v", err)
	}
	if srv.Registrations() != 1 || c2.ClientID != c.ClientID || c2.AccessToken == c.AccessToken {
		t.Fatalf("second login: registrations %d, client %q vs %q", srv.Registrations(), c2.ClientID, c.ClientID)
	}
}
