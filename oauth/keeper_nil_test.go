package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"purra.dev/purramcp/oauth"
)

// TestKeeper_NilStoreMeansNoOAuth: a keeper without a store loads nothing
// and its Transport sends no Authorization header.
func TestKeeper_NilStoreMeansNoOAuth(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	k := oauth.NewKeeper(nil, srv.URL+"/mcp", "")
	if changed, err := k.Load(ctx); changed || err != nil {
		t.Fatalf("Load = %t, %v", changed, err)
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: &oauth.Transport{Base: base, Keeper: k}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if len(got) != 1 || got[0] != "" {
		t.Errorf("Authorization headers: %q", got)
	}
}
