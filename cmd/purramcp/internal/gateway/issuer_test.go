package gateway_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"
)

// testIssuer is an authorization server's metadata and JWKS, with keys the
// test mints tokens with and may rotate.
type testIssuer struct {
	t       testing.TB
	srv     *httptest.Server
	fetches atomic.Int32 // JWKS requests served
	mu      sync.Mutex   // guards keys, algs and the fields below
	keys    map[string]crypto.Signer
	algs    map[string]string // a key's JWK alg, when set
	// jwks, when set, replaces the JWKS body.
	jwks []byte
	// jwksStatus, when set, is the JWKS answer's status (with no body).
	jwksStatus int
	// cacheControl, when set, is the JWKS answer's Cache-Control.
	cacheControl string
	// delay, for an in-memory issuer, is how long each answer takes.
	delay   time.Duration
	handler http.Handler
}

const testResource = "http://127.0.0.1/mcp" // the audience tokens are minted for

func newTestIssuer(t testing.TB) *testIssuer {
	iss := newIssuer(t)
	iss.srv = httptest.NewServer(iss.handler)
	t.Cleanup(iss.srv.Close)
	return iss
}

// newMemIssuer returns an issuer that no socket serves: its URL is a
// loopback one nothing listens on, reached only through iss.client, so it
// runs inside a synctest bubble.
func newMemIssuer(t testing.TB) *testIssuer {
	iss := newIssuer(t)
	iss.srv = &httptest.Server{URL: "http://127.0.0.1:9"}
	return iss
}

// client is an HTTP client whose requests iss's handler answers in memory,
// each after iss.delay unless the request's context ends first.
func (iss *testIssuer) client() *http.Client {
	return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		iss.mu.Lock()
		delay := iss.delay
		iss.mu.Unlock()
		if delay > 0 {
			timer := time.NewTimer(delay)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		rec := httptest.NewRecorder()
		iss.handler.ServeHTTP(rec, req)
		return rec.Result(), nil
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func newIssuer(t testing.TB) *testIssuer {
	iss := &testIssuer{t: t, keys: map[string]crypto.Signer{}, algs: map[string]string{}}
	iss.addKey("k1")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/jwks",
			"authorization_endpoint": iss.srv.URL + "/authorize", "token_endpoint": iss.srv.URL + "/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		iss.mu.Lock()
		defer iss.mu.Unlock()
		if iss.cacheControl != "" {
			w.Header().Set("Cache-Control", iss.cacheControl)
		}
		if iss.jwksStatus != 0 {
			w.WriteHeader(iss.jwksStatus)
			return
		}
		if iss.jwks != nil {
			_, _ = w.Write(iss.jwks)
			return
		}
		var set jose.JSONWebKeySet
		for kid, k := range iss.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: kid, Use: "sig", Algorithm: iss.algs[kid]})
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	iss.handler = mux
	return iss
}

// addKey adds an ECDSA P-256 key under kid.
func (iss *testIssuer) addKey(kid string) crypto.Signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(iss.t, err)
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.keys[kid] = k
	return k
}

// rotate replaces every key by a new one under kid.
func (iss *testIssuer) rotate(kid string) {
	iss.mu.Lock()
	clear(iss.keys)
	iss.mu.Unlock()
	iss.addKey(kid)
}

// claims are a token's claims, for mint.
type claims struct {
	jwt.Claims
	Scope string `json:"scope,omitempty"`
}

// valid returns the claims of a token for testResource from iss, valid
// for 5 minutes from now, for subject sub with scope.
func (iss *testIssuer) valid(now time.Time, sub, scope string) claims {
	return claims{Claims: jwt.Claims{
		Issuer: iss.srv.URL, Subject: sub, Audience: jwt.Audience{"https://other.example/mcp", testResource},
		Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute)), IssuedAt: jwt.NewNumericDate(now),
	}, Scope: scope}
}

// mint signs c with the key kid (ES256).
func (iss *testIssuer) mint(kid string, c claims) string {
	iss.mu.Lock()
	k := iss.keys[kid]
	iss.mu.Unlock()
	require.NotNil(iss.t, k, "no key %s", kid)
	return signWith(iss.t, jose.ES256, k, kid, c)
}

// signWith signs c with alg and key under kid, typ at+jwt.
func signWith(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, c claims) string {
	return signTyped(t, alg, key, kid, "at+jwt", c)
}

// signTyped signs the claims c (any JSON object) with alg and key under kid
// with the header typ ("" for none).
func signTyped(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, c any) string {
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, opts)
	require.NoError(t, err)
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	require.NoError(t, err)
	return tok
}

// rsaKey returns a fresh 2048-bit RSA key.
func rsaKey(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k
}
