package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// testIntrospectionIssuer is the issuer the introspection endpoint speaks for.
const testIntrospectionIssuer = "https://as.example.com"

// introspectionEndpoint is a scripted RFC 7662 endpoint: it checks the
// gateway's Basic credentials and the form, counts the requests, and
// answers what answer returns for the token.
type introspectionEndpoint struct {
	srv    *httptest.Server
	calls  atomic.Int32
	answer func(token string) (status int, body string)
}

func newIntrospectionEndpoint(t *testing.T, answer func(token string) (int, string)) *introspectionEndpoint {
	e := &introspectionEndpoint{answer: answer}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		id, secret, ok := r.BasicAuth()
		if !ok || id != "gateway" || secret != "s3cret" || r.Method != http.MethodPost || r.ParseForm() != nil ||
			r.PostForm.Get("token_type_hint") != "access_token" {
			http.Error(w, "unauthorized client", http.StatusUnauthorized)
			return
		}
		status, body := e.answer(r.PostForm.Get("token"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func newIntrospector(t *testing.T, e *introspectionEndpoint, c *clock) *gateway.IntrospectionVerifier {
	t.Helper()
	v, err := gateway.NewIntrospectionVerifier(gateway.IntrospectionOptions{Endpoint: e.srv.URL,
		Issuer: testIntrospectionIssuer, Resource: testResource, ClientID: "gateway", ClientSecret: "s3cret",
		CacheFor: 30 * time.Second, Now: c.Now, Rate: 1000, RatePerAddress: 1000})
	require.NoError(t, err)
	return v
}

// activeAnswer is an active answer for subject with scope, expiring at exp,
// with the members of extra replacing or adding to it.
func activeAnswer(subject, scope string, exp time.Time, extra map[string]any) string {
	a := map[string]any{"active": true, "sub": subject, "scope": scope, "iss": testIntrospectionIssuer,
		"aud": []string{testResource}, "token_type": "Bearer", "exp": exp.Unix(), "client_id": "c1"}
	for k, v := range extra {
		if v == nil {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	b, _ := json.Marshal(a)
	return string(b)
}

// TestIntrospectionVerifier_Accepts: an active token's subject, scopes and
// exp; its answer is reused for CacheFor, never past exp; once reuse ends
// the endpoint is asked again, and a token revoked there is then refused.
func TestIntrospectionVerifier_Accepts(t *testing.T) {
	c := &clock{now: time.Now()}
	var revoked atomic.Bool
	exp := c.Now().Add(2 * time.Minute)
	e := newIntrospectionEndpoint(t, func(token string) (int, string) {
		if token != "opaque-1" || revoked.Load() {
			return http.StatusOK, `{"active":false}`
		}
		return http.StatusOK, activeAnswer("ann", "docs:read docs:write", exp, map[string]any{"aud": testResource})
	})
	v := newIntrospector(t, e, c)
	for range 3 {
		info, err := v.Verify(t.Context(), "opaque-1", nil)
		require.NoError(t, err)
		assert.Equal(t, "ann", info.UserID)
		assert.Equal(t, []string{"docs:read", "docs:write"}, info.Scopes)
		assert.Equal(t, exp.Unix(), info.Expiration.Unix())
	}
	assert.Equal(t, int32(1), e.calls.Load(), "the answer is reused")

	revoked.Store(true)
	c.add(29 * time.Second)
	_, err := v.Verify(t.Context(), "opaque-1", nil)
	require.NoError(t, err, "still within CacheFor")
	c.add(2 * time.Second)
	_, err = v.Verify(t.Context(), "opaque-1", nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken, "asked again: revoked")
	assert.Equal(t, int32(2), e.calls.Load())

	// A refusal is reused for 10 s.
	revoked.Store(false)
	c.add(9 * time.Second)
	_, err = v.Verify(t.Context(), "opaque-1", nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken, "the refusal, reused")
	assert.Equal(t, int32(2), e.calls.Load())
	c.add(time.Second)

	// A token expiring within CacheFor is reused only until its exp.
	exp = c.Now().Add(5 * time.Second)
	_, err = v.Verify(t.Context(), "opaque-1", nil)
	require.NoError(t, err)
	c.add(6 * time.Second)
	_, err = v.Verify(t.Context(), "opaque-1", nil)
	require.NoError(t, err, "asked again past exp, within the 60 s skew")
	assert.Equal(t, int32(4), e.calls.Load(), "not reused past exp")
	c.add(time.Minute)
	_, err = v.Verify(t.Context(), "opaque-1", nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken, "past exp and the skew")
}

// TestIntrospectionVerifier_Refuses: every answer the server does not
// vouch with is auth.ErrInvalidToken (a 401), and every answer that is no
// usable answer is an error that is not (a 500, not a refusal); neither
// names the token nor the server's text.
func TestIntrospectionVerifier_Refuses(t *testing.T) {
	c := &clock{now: time.Now()}
	exp := c.Now().Add(time.Minute)
	answers := map[string][2]any{
		"inactive":        {http.StatusOK, `{"active":false,"sub":"ann"}`},
		"other-issuer":    {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"iss": "https://evil.example.com"})},
		"other-audience":  {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"aud": "https://other.example.com/mcp"})},
		"no-audience":     {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"aud": nil})},
		"refresh-token":   {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"token_type": "refresh_token"})},
		"expired":         {http.StatusOK, activeAnswer("ann", "", c.Now().Add(-2*time.Minute), nil)},
		"no-exp":          {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"exp": nil})},
		"no-sub":          {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"sub": nil})},
		"not-yet":         {http.StatusOK, activeAnswer("ann", "", exp, map[string]any{"nbf": c.Now().Add(5 * time.Minute).Unix()})},
		"server-error":    {http.StatusInternalServerError, `{"error":"CANARY server text"}`},
		"not-json":        {http.StatusOK, `<html>CANARY</html>`},
		"no-active":       {http.StatusOK, `{"sub":"ann"}`},
		"active-a-string": {http.StatusOK, `{"active":"true"}`},
		"huge":            {http.StatusOK, `{"active":true,"x":"` + strings.Repeat("a", 2<<20) + `"}`},
	}
	e := newIntrospectionEndpoint(t, func(token string) (int, string) {
		a := answers[strings.TrimPrefix(token, "tok-")]
		return a[0].(int), a[1].(string)
	})
	v := newIntrospector(t, e, c)
	for name := range answers {
		token := "tok-" + name
		_, err := v.Verify(t.Context(), token, nil)
		require.Error(t, err, name)
		refusal := name != "server-error" && name != "not-json" && name != "no-active" &&
			name != "active-a-string" && name != "huge"
		assert.Equal(t, refusal, isInvalidToken(err), "%s: %v", name, err)
		assert.NotContains(t, err.Error(), token)
		assert.NotContains(t, err.Error(), "CANARY")
	}
	_, err := v.Verify(t.Context(), strings.Repeat("t", 9<<10), nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken, "over the token bound: not sent")
	assert.Equal(t, int32(len(answers)), e.calls.Load())

	// The endpoint refusing the gateway's own credentials is no answer.
	bad, err := gateway.NewIntrospectionVerifier(gateway.IntrospectionOptions{Endpoint: e.srv.URL,
		Issuer: testIntrospectionIssuer, Resource: testResource, ClientID: "gateway", ClientSecret: "wrong"})
	require.NoError(t, err)
	_, err = bad.Verify(t.Context(), "tok-inactive", nil)
	require.Error(t, err)
	assert.False(t, isInvalidToken(err))
}

func isInvalidToken(err error) bool { return errors.Is(err, auth.ErrInvalidToken) }

// TestIntrospectionVerifier_BoundedInFlight: many distinct tokens at once
// against a slow endpoint run at most 16 introspections at a time, and a
// caller whose ctx ends while waiting returns at once.
func TestIntrospectionVerifier_BoundedInFlight(t *testing.T) {
	c := &clock{now: time.Now()}
	var inFlight, most atomic.Int32
	release := make(chan struct{})
	e := newIntrospectionEndpoint(t, func(token string) (int, string) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inFlight.Add(-1)
		return http.StatusOK, activeAnswer(token, "", c.Now().Add(time.Minute), nil)
	})
	v := newIntrospector(t, e, c)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			_, err := v.Verify(t.Context(), fmt.Sprintf("tok-%d", i), nil)
			assert.NoError(t, err)
		})
	}
	require.Eventually(t, func() bool { return e.calls.Load() == 16 }, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := v.Verify(ctx, "waiting", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(16), most.Load())
	assert.Equal(t, int32(40), e.calls.Load())
}

// TestHTTP_IntrospectionBudget: 200 requests with distinct junk tokens
// from one client address make RatePerAddress (3) introspections, the
// others 429 with Retry-After and no call; 200 more from 200 addresses
// make Rate (8) in all; a refused token is refused again from the cache
// (401, no call, no budget) for 10 s; a second later the budget is back.
func TestHTTP_IntrospectionBudget(t *testing.T) {
	c := &clock{now: time.Now()}
	e := newIntrospectionEndpoint(t, func(string) (int, string) { return http.StatusOK, `{"active":false}` })
	v, err := gateway.NewIntrospectionVerifier(gateway.IntrospectionOptions{Endpoint: e.srv.URL,
		Issuer: testIntrospectionIssuer, Resource: testResource, ClientID: "gateway", ClientSecret: "s3cret",
		Now: c.Now, Rate: 8, RatePerAddress: 3})
	require.NoError(t, err)
	g := newGateway(t, newFakeFleet(t), gateway.Options{})
	h, err := g.HTTPHandler(gateway.HTTPOptions{OAuth: &gateway.OAuthOptions{Resource: testResource,
		Issuer: testIntrospectionIssuer, Verify: v.Verify}})
	require.NoError(t, err)
	get := func(addr, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/status", nil)
		req.Host = "127.0.0.1"
		req.RemoteAddr = addr + ":40000"
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	statuses := map[int]int{}
	for i := range 200 {
		rec := get("127.0.0.2", fmt.Sprintf("junk-%d", i))
		statuses[rec.Code]++
		if rec.Code == http.StatusTooManyRequests {
			assert.Equal(t, "1", rec.Header().Get("Retry-After"))
		}
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 3, http.StatusTooManyRequests: 197}, statuses)
	assert.Equal(t, int32(3), e.calls.Load(), "one address: its budget")
	clear(statuses)
	for i := range 200 {
		statuses[get(fmt.Sprintf("127.0.1.%d", i), fmt.Sprintf("other-%d", i)).Code]++
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: 195}, statuses)
	assert.Equal(t, int32(8), e.calls.Load(), "every address: the overall budget")

	c.add(9 * time.Second)
	for i := range 3 {
		assert.Equal(t, http.StatusUnauthorized, get("127.0.0.2", fmt.Sprintf("junk-%d", i)).Code, "refused, from the cache")
	}
	assert.Equal(t, int32(8), e.calls.Load())
	c.add(time.Second)
	assert.Equal(t, http.StatusUnauthorized, get("127.0.0.2", "junk-0").Code, "10 s on: asked again")
	assert.Equal(t, int32(9), e.calls.Load())
}
