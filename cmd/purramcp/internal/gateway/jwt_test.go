package gateway_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// clock is a settable clock for the verifier.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newVerifier(t testing.TB, iss *testIssuer, c *clock) *gateway.JWTVerifier {
	t.Helper()
	v, err := gateway.NewJWTVerifier(t.Context(), gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource, Now: c.Now})
	require.NoError(t, err)
	return v
}

func TestJWTVerifier_Accepts(t *testing.T) {
	iss := newTestIssuer(t)
	c := &clock{now: time.Now()}
	v := newVerifier(t, iss, c)
	tok := iss.mint("k1", iss.valid(c.Now(), "ann", "docs:read  docs:write"))
	info, err := v.Verify(t.Context(), tok, nil)
	require.NoError(t, err)
	assert.Equal(t, "ann", info.UserID)
	assert.Equal(t, []string{"docs:read", "docs:write"}, info.Scopes)
	assert.Equal(t, c.Now().Add(5*time.Minute).Unix(), info.Expiration.Unix())

	// A trailing slash on the audience is the same resource; an RSA key
	// whose JWK says PS256 is as good as ECDSA.
	k := rsaKey(t)
	iss.mu.Lock()
	iss.keys["r1"] = k
	iss.algs["r1"] = "PS256"
	iss.mu.Unlock()
	c.add(61 * time.Second) // past the JWKS refetch interval
	cl := iss.valid(c.Now(), "bob", "")
	cl.Audience = jwt.Audience{testResource + "/"}
	info, err = v.Verify(t.Context(), signWith(t, jose.PS256, k, "r1", cl), nil)
	require.NoError(t, err)
	assert.Equal(t, "bob", info.UserID)
	assert.Empty(t, info.Scopes)

	// typ is compared case-insensitively, with or without "application/".
	for _, typ := range []string{"AT+JWT", "application/at+jwt", "Application/At+Jwt"} {
		_, err = v.Verify(t.Context(), signTyped(t, jose.ES256, iss.keys["k1"], "k1", typ, iss.valid(c.Now(), "ann", "")), nil)
		require.NoError(t, err, typ)
	}
}

// TestJWTVerifier_AccessTokensOnly: a token whose typ is not at+jwt (an ID
// token's JWT, none, logout+jwt) is refused by default, whatever it
// claims; JWTOptions.Types admits another typ, and even then a token with
// an ID token's claim is refused. A key verifies with one algorithm: an
// RSA key without alg only RS256, never PS256.
func TestJWTVerifier_AccessTokensOnly(t *testing.T) {
	iss := newTestIssuer(t)
	k := rsaKey(t)
	iss.mu.Lock()
	iss.keys["r1"] = k // no alg in its JWK
	iss.mu.Unlock()
	c := &clock{now: time.Now()}
	strict := newVerifier(t, iss, c)
	lax, err := gateway.NewJWTVerifier(t.Context(), gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource,
		Now: c.Now, Types: []string{"JWT"}})
	require.NoError(t, err)
	k1 := iss.keys["k1"]
	withClaim := func(name string) map[string]any {
		return map[string]any{"iss": iss.srv.URL, "sub": "ann", "aud": testResource,
			"exp": c.Now().Add(time.Minute).Unix(), name: "x"}
	}
	for _, tc := range []struct {
		name, token string
		lax         bool // whether the verifier with Types JWT accepts it
	}{
		{"ID token (typ JWT)", signTyped(t, jose.ES256, k1, "k1", "JWT", withClaim("nonce")), false},
		{"typ JWT", signTyped(t, jose.ES256, k1, "k1", "JWT", iss.valid(c.Now(), "ann", "")), true},
		{"typ jwt with at_hash", signTyped(t, jose.ES256, k1, "k1", "jwt", withClaim("at_hash")), false},
		{"typ JWT with c_hash", signTyped(t, jose.ES256, k1, "k1", "JWT", withClaim("c_hash")), false},
		{"no typ", signTyped(t, jose.ES256, k1, "k1", "", iss.valid(c.Now(), "ann", "")), false},
		{"logout+jwt", signTyped(t, jose.ES256, k1, "k1", "logout+jwt", iss.valid(c.Now(), "ann", "")), false},
		{"PS256 with an RSA key without alg", signWith(t, jose.PS256, k, "r1", iss.valid(c.Now(), "ann", "")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := strict.Verify(t.Context(), tc.token, nil)
			require.ErrorIs(t, err, auth.ErrInvalidToken)
			_, err = lax.Verify(t.Context(), tc.token, nil)
			if tc.lax {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, auth.ErrInvalidToken)
			}
		})
	}
	_, err = strict.Verify(t.Context(), signWith(t, jose.RS256, k, "r1", iss.valid(c.Now(), "ann", "")), nil)
	require.NoError(t, err, "RS256 with an RSA key without alg")
}

// TestJWTVerifier_Refuses: every token the gateway must not accept is
// auth.ErrInvalidToken, whose text names the check and never the token.
func TestJWTVerifier_Refuses(t *testing.T) {
	iss := newTestIssuer(t)
	other := newTestIssuer(t) // another issuer, with keys of its own
	c := &clock{now: time.Now()}
	v := newVerifier(t, iss, c)
	now := c.Now()
	pub, err := x509.MarshalPKIXPublicKey(iss.keys["k1"].Public())
	require.NoError(t, err)
	b64 := base64.RawURLEncoding.EncodeToString
	valid := func() claims { return iss.valid(now, "ann", "docs:read") }
	for _, tc := range []struct {
		name, token string
	}{
		{"another audience", func() string {
			c := valid()
			c.Audience = jwt.Audience{"https://other.example/mcp"}
			return iss.mint("k1", c)
		}()},
		{"no audience", func() string { c := valid(); c.Audience = nil; return iss.mint("k1", c) }()},
		{"expired beyond the skew", func() string {
			c := valid()
			c.Expiry = jwt.NewNumericDate(now.Add(-61 * time.Second))
			return iss.mint("k1", c)
		}()},
		{"not yet valid beyond the skew", func() string {
			c := valid()
			c.NotBefore = jwt.NewNumericDate(now.Add(2 * time.Minute))
			return iss.mint("k1", c)
		}()},
		{"no exp", func() string { c := valid(); c.Expiry = nil; return iss.mint("k1", c) }()},
		{"no sub", func() string { c := valid(); c.Subject = ""; return iss.mint("k1", c) }()},
		{"another issuer's claim", func() string { c := valid(); c.Issuer = other.srv.URL; return iss.mint("k1", c) }()},
		{"another issuer's key and claim", func() string {
			c := valid()
			c.Issuer = other.srv.URL
			return other.mint("k1", c) // same key ID, another key
		}()},
		{"an unknown key", func() string { other.addKey("k9"); return other.mint("k9", valid()) }()},
		{"alg none", b64([]byte(`{"alg":"none","kid":"k1"}`)) + "." + b64([]byte(`{"iss":"`+iss.srv.URL+`","aud":"`+testResource+`","exp":`+fmt.Sprint(now.Add(time.Hour).Unix())+`}`)) + "."},
		{"HS256 keyed with the public key", signWith(t, jose.HS256, pub, "k1", valid())},
		{"tampered payload", func() string {
			parts := strings.Split(iss.mint("k1", valid()), ".")
			parts[1] = b64([]byte(`{"iss":"` + iss.srv.URL + `","aud":"` + testResource + `","scope":"admin","exp":` + fmt.Sprint(now.Add(time.Hour).Unix()) + `}`))
			return strings.Join(parts, ".")
		}()},
		{"not a JWT", "opaque-token-value"},
		{"too long", iss.mint("k1", claims{Claims: valid().Claims, Scope: strings.Repeat("s ", 5000)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := v.Verify(t.Context(), tc.token, nil)
			require.ErrorIs(t, err, auth.ErrInvalidToken)
			assert.Nil(t, info)
			if len(tc.token) > 8 {
				for _, part := range strings.Split(tc.token, ".") {
					if len(part) > 8 {
						assert.NotContains(t, err.Error(), part)
					}
				}
			}
		})
	}
}

// TestJWTVerifier_CacheAndRotation: a verified token is served from the
// cache (no JWKS request); it stops being valid at its exp; after the
// issuer rotates its key, the first token signed by the new key fetches
// the set once, and a stolen token signed by the old key is then refused
// even though it was cached.
func TestJWTVerifier_CacheAndRotation(t *testing.T) {
	iss := newTestIssuer(t)
	c := &clock{now: time.Now()}
	v := newVerifier(t, iss, c)
	require.Equal(t, int32(1), iss.fetches.Load())
	cl := iss.valid(c.Now(), "ann", "docs:read")
	cl.Expiry = jwt.NewNumericDate(c.Now().Add(3 * time.Minute))
	stolen := iss.mint("k1", cl)
	for range 3 {
		_, err := v.Verify(t.Context(), stolen, nil)
		require.NoError(t, err)
	}

	iss.rotate("k2")
	c.add(61 * time.Second)
	_, err := v.Verify(t.Context(), stolen, nil)
	require.NoError(t, err, "cached: the verifier has not seen the rotation yet")
	fresh := iss.mint("k2", iss.valid(c.Now(), "bob", ""))
	_, err = v.Verify(t.Context(), fresh, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), iss.fetches.Load(), "the new key ID fetched the set once")
	_, err = v.Verify(t.Context(), stolen, nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken, "the rotated-out key's token is refused")

	c.add(6*time.Minute + time.Second)
	_, err = v.Verify(t.Context(), fresh, nil)
	require.ErrorIs(t, err, auth.ErrInvalidToken, "past exp plus the skew, the cached token is refused")
}

// TestJWTVerifier_UnknownKeysFetchOncePerMinute: tokens naming many
// unknown key IDs, concurrently, make at most one JWKS request a minute.
func TestJWTVerifier_UnknownKeysFetchOncePerMinute(t *testing.T) {
	iss := newTestIssuer(t)
	c := &clock{now: time.Now()}
	v := newVerifier(t, iss, c)
	c.add(time.Minute)
	other := newTestIssuer(t)
	var wg sync.WaitGroup
	for i := range 200 {
		kid := fmt.Sprintf("x%d", i)
		other.addKey(kid)
		tok := other.mint(kid, iss.valid(c.Now(), "eve", ""))
		wg.Go(func() {
			_, err := v.Verify(context.Background(), tok, nil)
			assert.ErrorIs(t, err, auth.ErrInvalidToken)
		})
	}
	wg.Wait()
	assert.Equal(t, int32(2), iss.fetches.Load(), "the first set and one refetch")
}

// newMemVerifier is a verifier of iss (an in-memory issuer) on the
// bubble's clock.
func newMemVerifier(t *testing.T, iss *testIssuer) *gateway.JWTVerifier {
	t.Helper()
	v, err := gateway.NewJWTVerifier(t.Context(), gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource,
		HTTPClient: iss.client()})
	require.NoError(t, err)
	return v
}

// TestJWTVerifier_HangUpsDoNotKeepARotatedKeyOut: once a minute the issuer
// rotates its key and, right after, a client sends a token naming an
// unknown key ID and hangs up while the JWKS fetch it started runs (the
// issuer takes 1 s to answer). The fetch is the verifier's, so it
// completes: the signed-in user's token under the new key is accepted 2 s
// after each rotation, with one JWKS request a minute.
func TestJWTVerifier_HangUpsDoNotKeepARotatedKeyOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		iss := newMemIssuer(t)
		v := newMemVerifier(t, iss)
		eve := newMemIssuer(t) // keys the issuer never published
		iss.mu.Lock()
		iss.delay = time.Second
		iss.mu.Unlock()
		for minute := 1; minute <= 4; minute++ {
			time.Sleep(time.Minute)
			kid := fmt.Sprintf("k%d", minute+1)
			iss.rotate(kid)
			junkKid := fmt.Sprintf("junk%d", minute)
			eve.addKey(junkKid)
			ctx, hangUp := context.WithTimeout(t.Context(), 100*time.Millisecond)
			_, err := v.Verify(ctx, eve.mint(junkKid, iss.valid(time.Now(), "eve", "")), nil)
			hangUp()
			require.ErrorIs(t, err, auth.ErrInvalidToken)
			time.Sleep(2 * time.Second)
			info, err := v.Verify(t.Context(), iss.mint(kid, iss.valid(time.Now(), "ann", "")), nil)
			require.NoError(t, err, "minute %d: ann 2 s after the rotation", minute)
			assert.Equal(t, "ann", info.UserID)
		}
		assert.Equal(t, int32(5), iss.fetches.Load(), "the first set and one fetch a minute")
	})
}

// TestJWTVerifier_OneFetchAtATimeAndRetry: concurrent requests naming the
// same unknown key wait for one fetch and are all accepted; a failed fetch
// is retried 5 s later, not a minute later; after a successful one, an
// unknown key ID fetches nothing for a minute.
func TestJWTVerifier_OneFetchAtATimeAndRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		iss := newMemIssuer(t)
		v := newMemVerifier(t, iss)
		setIssuer := func(delay time.Duration, status int) {
			iss.mu.Lock()
			defer iss.mu.Unlock()
			iss.delay, iss.jwksStatus = delay, status
		}
		time.Sleep(time.Minute)
		iss.rotate("k2")
		setIssuer(time.Second, 0)
		tok := iss.mint("k2", iss.valid(time.Now(), "ann", ""))
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				_, err := v.Verify(t.Context(), tok, nil)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		assert.Equal(t, int32(2), iss.fetches.Load(), "ten requests, one fetch")

		time.Sleep(time.Minute)
		iss.rotate("k3")
		setIssuer(0, http.StatusServiceUnavailable)
		tok = iss.mint("k3", iss.valid(time.Now(), "ann", ""))
		_, err := v.Verify(t.Context(), tok, nil)
		require.ErrorIs(t, err, auth.ErrInvalidToken, "the fetch failed")
		setIssuer(0, 0)
		time.Sleep(4 * time.Second)
		_, err = v.Verify(t.Context(), tok, nil)
		require.ErrorIs(t, err, auth.ErrInvalidToken, "within the backoff: no fetch")
		assert.Equal(t, int32(3), iss.fetches.Load())
		time.Sleep(time.Second)
		_, err = v.Verify(t.Context(), tok, nil)
		require.NoError(t, err, "5 s after the failure, a fetch")
		assert.Equal(t, int32(4), iss.fetches.Load())

		eve := newMemIssuer(t)
		eve.addKey("junk")
		time.Sleep(59 * time.Second)
		_, err = v.Verify(t.Context(), eve.mint("junk", iss.valid(time.Now(), "eve", "")), nil)
		require.ErrorIs(t, err, auth.ErrInvalidToken)
		assert.Equal(t, int32(4), iss.fetches.Load(), "no fetch within a minute of a successful one")
	})
}

// TestJWTVerifier_RefreshRevokes: the JWKS is fetched again in the
// background at its Cache-Control max-age bounded to [1 min, 1 h], every
// 15 min without one. A key the issuer removes while it keeps signing
// with one the verifier knows (so no unknown kid ever arrives) verifies
// nothing from the next refresh on, a cached token included, and so does
// a key ID that now names another key.
func TestJWTVerifier_RefreshRevokes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		iss := newMemIssuer(t)
		iss.addKey("k2")
		setCacheControl := func(cc string) {
			iss.mu.Lock()
			defer iss.mu.Unlock()
			iss.cacheControl = cc
		}
		setCacheControl("public, max-age=600")
		v := newMemVerifier(t, iss)
		cl := iss.valid(time.Now(), "eve", "docs:read")
		cl.Expiry = jwt.NewNumericDate(time.Now().Add(24 * time.Hour))
		stolen := iss.mint("k1", cl)
		cl.Subject = "ann"
		ann := iss.mint("k2", cl)
		for _, tok := range []string{stolen, ann} {
			_, err := v.Verify(t.Context(), tok, nil)
			require.NoError(t, err)
		}
		iss.mu.Lock()
		delete(iss.keys, "k1") // removed; the issuer signs with k2
		iss.mu.Unlock()
		setCacheControl("max-age=5") // below the bound: 1 min

		// expectFetchAfter sleeps until a second before d from now (no
		// fetch), then 2 s (one fetch): each call ends 1 s after a fetch.
		expectFetchAfter := func(d time.Duration, what string) {
			t.Helper()
			before := iss.fetches.Load()
			time.Sleep(d - time.Second)
			require.Equal(t, before, iss.fetches.Load(), "%s: not yet", what)
			time.Sleep(2 * time.Second)
			require.Equal(t, before+1, iss.fetches.Load(), "%s: one fetch", what)
		}
		time.Sleep(9 * time.Minute)
		_, err := v.Verify(t.Context(), stolen, nil)
		require.NoError(t, err, "before the refresh, the cached token stands")
		expectFetchAfter(time.Minute, "max-age=600")
		_, err = v.Verify(t.Context(), stolen, nil)
		require.ErrorIs(t, err, auth.ErrInvalidToken, "the removed key's cached token, after the refresh")
		_, err = v.Verify(t.Context(), ann, nil)
		require.NoError(t, err)

		setCacheControl("max-age=86400") // above the bound: 1 h
		expectFetchAfter(time.Minute-time.Second, "max-age=5")
		setCacheControl("")
		iss.addKey("k2") // the same kid, another key
		expectFetchAfter(time.Hour-time.Second, "max-age=86400")
		_, err = v.Verify(t.Context(), ann, nil)
		require.ErrorIs(t, err, auth.ErrInvalidToken, "k2 names another key now")
		expectFetchAfter(15*time.Minute-time.Second, "no Cache-Control")
	})
}

// TestNewJWTVerifier_Metadata: a verifier is built only from usable
// metadata: the issuer it names, a JWKS with a public signing key, a
// bounded body, https or loopback.
func TestNewJWTVerifier_Metadata(t *testing.T) {
	iss := newTestIssuer(t)
	for _, tc := range []struct {
		name   string
		issuer string
		jwks   []byte
	}{
		{"issuer with a trailing slash differs", iss.srv.URL + "/", nil},
		{"http off loopback", "http://auth.example.com", nil},
		{"no metadata", iss.srv.URL + "/tenant", nil},
		{"JWKS over 1 MiB", iss.srv.URL, []byte(`{"keys":[],"pad":"` + strings.Repeat("a", 1<<20) + `"}`)},
		{"JWKS without a usable key", iss.srv.URL, []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"h"}]}`)},
		{"JWKS not JSON", iss.srv.URL, []byte(`keys`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iss.mu.Lock()
			iss.jwks = tc.jwks
			iss.mu.Unlock()
			_, err := gateway.NewJWTVerifier(t.Context(), gateway.JWTOptions{Issuer: tc.issuer, Resource: testResource})
			require.ErrorIs(t, err, gateway.ErrIssuerMetadata)
		})
	}
}

// BenchmarkJWTVerifyCached is the verifier's cost for a token it has
// verified before: what every request after a client's first pays.
func BenchmarkJWTVerifyCached(b *testing.B) {
	iss := newTestIssuer(b)
	c := &clock{now: time.Now()}
	v := newVerifier(b, iss, c)
	tok := iss.mint("k1", iss.valid(c.Now(), "ann", "docs:read"))
	if _, err := v.Verify(b.Context(), tok, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(b.Context(), tok, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJWTVerifyFirst is the cost of a token's first verification
// (ES256 signature and claims), paid once per token.
func BenchmarkJWTVerifyFirst(b *testing.B) {
	iss := newTestIssuer(b)
	c := &clock{now: time.Now()}
	v := newVerifier(b, iss, c)
	toks := make([]string, 0, 1024)
	for i := range 1024 {
		toks = append(toks, iss.mint("k1", iss.valid(c.Now(), fmt.Sprint("user", i), "docs:read")))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(toks) {
			b.StopTimer()
			v = newVerifier(b, iss, c) // an empty cache
			i = 0
			b.StartTimer()
		}
		if _, err := v.Verify(b.Context(), toks[i], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestHTTP_HangUpsDoNotKeepARotatedKeyOut is the finding over HTTP: each
// minute the issuer rotates its key, a client sends GET /status with a
// token naming an unknown key and hangs up 100 ms later; the signed-in
// user's GET /status 2 s after each rotation is 200.
func TestHTTP_HangUpsDoNotKeepARotatedKeyOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		iss := newMemIssuer(t)
		v := newMemVerifier(t, iss)
		g := newGateway(t, newFakeFleet(t), gateway.Options{})
		h, err := g.HTTPHandler(gateway.HTTPOptions{OAuth: &gateway.OAuthOptions{Resource: testResource,
			Issuer: iss.srv.URL, Verify: v.Verify}})
		require.NoError(t, err)
		status := func(ctx context.Context, token string) int {
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/status", nil)
			req.Host = "127.0.0.1"
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code
		}
		eve := newMemIssuer(t)
		iss.mu.Lock()
		iss.delay = time.Second
		iss.mu.Unlock()
		for minute := 1; minute <= 4; minute++ {
			time.Sleep(time.Minute)
			kid := fmt.Sprintf("k%d", minute+1)
			iss.rotate(kid)
			junkKid := fmt.Sprintf("junk%d", minute)
			eve.addKey(junkKid)
			ctx, hangUp := context.WithTimeout(t.Context(), 100*time.Millisecond)
			assert.Equal(t, http.StatusUnauthorized, status(ctx, eve.mint(junkKid, iss.valid(time.Now(), "eve", ""))))
			hangUp()
			time.Sleep(2 * time.Second)
			assert.Equal(t, http.StatusOK, status(t.Context(), iss.mint(kid, iss.valid(time.Now(), "ann", ""))),
				"minute %d: ann 2 s after the rotation", minute)
		}
		assert.Equal(t, int32(5), iss.fetches.Load())
	})
}
