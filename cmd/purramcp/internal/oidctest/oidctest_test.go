package oidctest_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/oidctest"
	"purra.dev/purramcp/oauth"
)

// initialize posts an MCP initialize to url with token ("" for none) and
// returns the status and WWW-Authenticate.
func initialize(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestProvider_LoginExpiryRevoke: oauth.Login signs in through the
// provider's own login and consent pages; the MCP server takes the JWT
// and refuses none, an expired or a foreign one; a revoked refresh token
// no longer refreshes.
func TestProvider_LoginExpiryRevoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	p := oidctest.Start(t, oidctest.Options{AccessTokenTTL: 2 * time.Second})

	code, challenge := initialize(t, p.URL, "")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, `Bearer resource_metadata="`+strings.TrimSuffix(p.URL, oidctest.PathMCP)+oidctest.PathResourceMetadata+
		`", scope="`+oidctest.Scope+`"`, challenge)

	store := &oauth.FileStore{Dir: filepath.Join(t.TempDir(), "tokens")}
	creds, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: p.URL, Store: store, Browse: p.Browse})
	require.NoError(t, err)
	assert.Equal(t, p.Issuer, creds.Issuer)
	assert.Equal(t, p.URL, creds.Resource)
	assert.NotEmpty(t, creds.RefreshToken)
	assert.Equal(t, map[string]int{"registration": 1, "interaction:login": 1, "interaction:consent": 1,
		"grant:authorization_code": 1}, p.Counts())
	assert.InDelta(t, 2, time.Until(creds.Expiry).Seconds(), 1.5)
	secrets := p.Secrets()
	assert.Len(t, secrets, 4, "code, verifier, access token, refresh token")
	assert.Contains(t, secrets, creds.AccessToken)
	assert.Contains(t, secrets, creds.RefreshToken)

	code, _ = initialize(t, p.URL, creds.AccessToken)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, []string{creds.AccessToken}, p.AccessTokens())
	code, _ = initialize(t, p.URL, creds.AccessToken+"x")
	assert.Equal(t, http.StatusUnauthorized, code)
	time.Sleep(time.Until(creds.Expiry) + 100*time.Millisecond)
	code, _ = initialize(t, p.URL, creds.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, code, "expired")
	assert.Equal(t, 2, p.Rejected())

	// A second login reuses the registration and the provider session:
	// no sign-in page, and the consent already given.
	again, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: p.URL, Store: store, Browse: p.Browse})
	require.NoError(t, err)
	assert.Equal(t, creds.ClientID, again.ClientID)
	assert.Equal(t, 1, p.Count("registration"))
	assert.Equal(t, 1, p.Count("interaction:login"))

	require.NoError(t, p.RevokeRefreshToken(ctx, again.ClientID, again.RefreshToken))
	require.Eventually(t, func() bool { return p.Count("grant_revoked") == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 0, p.Errors())
	resp, err := http.PostForm(again.TokenURL, url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {again.RefreshToken}, "client_id": {again.ClientID}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a revoked refresh token is refused")
	require.Eventually(t, func() bool { return p.Count("grant_error:InvalidGrant") == 1 }, 5*time.Second, 10*time.Millisecond)
}
