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
	mu      sync.Mutex   // guards keys
	keys    map[string]crypto.Signer
	// jwks, when set, replaces the JWKS body.
	jwks []byte
}

const testResource = "http://127.0.0.1/mcp" // the audience tokens are minted for

func newTestIssuer(t testing.TB) *testIssuer {
	iss := &testIssuer{t: t, keys: map[string]crypto.Signer{}}
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
		if iss.jwks != nil {
			_, _ = w.Write(iss.jwks)
			return
		}
		var set jose.JSONWebKeySet
		for kid, k := range iss.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: kid, Use: "sig"})
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
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

// signWith signs c with alg and key under kid.
func signWith(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, c claims) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
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
