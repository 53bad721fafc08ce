package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// TestLogin_CallbackIgnoresOtherRequests: requests to the loopback
// callback that do not carry the state of the sign-in's authorization (a
// local process or a web page that found the port: a code with a wrong
// state, an error with none, nothing at all) are answered 400 and do not
// end the sign-in; the authorization server's answer then completes it.
func TestLogin_CallbackIgnoresOtherRequests(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var statuses []int
	browse := func(ctx context.Context, authURL string) error {
		au, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		cb := au.Query().Get("redirect_uri")
		for _, q := range []string{"?code=planted&state=wrong", "?error=access_denied", "", "?code=planted"} {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, cb+q, nil)
			if err != nil {
				return err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		return oauthtest.Browse(ctx, authURL)
	}
	c, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: srv.URL, Store: store, Browse: browse,
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	require.NoError(t, err)
	assert.Equal(t, []int{400, 400, 400, 400}, statuses)
	got, err := store.Load(ctx, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, c.AccessToken, got.AccessToken)
}

// TestLogin_DiscoversOnce: the resource and authorization server metadata
// are each fetched once, and the flow uses the endpoints that discovery
// checked: an authorization server whose metadata names another token
// endpoint on a second fetch never gets that endpoint asked (the code
// goes to the first one) and the sign-in completes.
func TestLogin_DiscoversOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	var switched atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switched.Add(1)
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer elsewhere.Close()
	var prmFetches, asmFetches atomic.Int32
	srv.Handle(oauthtest.PathResourceMetadata, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prmFetches.Add(1)
		jsonHandler(map[string]any{"resource": srv.URL, "authorization_servers": []string{srv.Issuer}}).ServeHTTP(w, r)
	}))
	srv.Handle(oauthtest.PathAuthMetadata, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := srv.Issuer + oauthtest.PathToken
		if asmFetches.Add(1) > 1 {
			token = elsewhere.URL + "/token" // the bait after the check
		}
		jsonHandler(map[string]any{"issuer": srv.Issuer, "authorization_endpoint": srv.Issuer + oauthtest.PathAuthorize,
			"token_endpoint": token, "registration_endpoint": srv.Issuer + oauthtest.PathRegister,
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"authorization_response_iss_parameter_supported": true,
			"token_endpoint_auth_methods_supported":          []string{"none"}}).ServeHTTP(w, r)
	}))
	_, err, _ := login(t, srv, &oauth.FileStore{Dir: t.TempDir() + "/tokens"}, nil, 0)
	require.NoError(t, err)
	assert.Equal(t, int32(1), prmFetches.Load(), "resource metadata fetches")
	assert.Equal(t, int32(1), asmFetches.Load(), "authorization server metadata fetches")
	assert.Zero(t, switched.Load(), "the token endpoint of a second fetch was asked")
}
