package gateway

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// JWT verification bounds.
const (
	// maxTokenBytes is the longest access token parsed; a longer one is
	// refused before any decoding.
	maxTokenBytes = 8 << 10
	// maxFetchBytes bounds the authorization server's metadata and JWKS.
	maxFetchBytes = 1 << 20
	// fetchTimeout bounds one metadata or JWKS request.
	fetchTimeout = 10 * time.Second
	// jwksMinInterval is the shortest time between a successful JWKS
	// fetch and the next one an unknown key ID starts, so tokens naming
	// random key IDs cannot flood the issuer.
	jwksMinInterval = time.Minute
	// jwksRetryBackoff is how long after a failed JWKS fetch the next one
	// may start: a failure (the issuer down, a timeout) does not spend the
	// minute.
	jwksRetryBackoff = 5 * time.Second
	// The JWKS is fetched again in the background after its
	// Cache-Control max-age, bounded to [jwksMinRefresh, jwksMaxRefresh],
	// or after jwksDefaultRefresh when the answer gives none: a key the
	// issuer removes stops verifying within that time.
	jwksMinRefresh     = time.Minute
	jwksMaxRefresh     = time.Hour
	jwksDefaultRefresh = 15 * time.Minute
	// clockSkew is the leeway for exp, nbf and iat.
	clockSkew = 60 * time.Second
)

// signatureAlgorithms are the only JWS algorithms accepted: asymmetric
// ones, so neither "none" nor an HMAC keyed with a public key can pass.
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// JWTOptions configure [NewJWTVerifier].
type JWTOptions struct {
	// Issuer is the authorization server's issuer URL. Its metadata (RFC
	// 8414, else OpenID discovery) must name exactly this issuer and a
	// jwks_uri; https is required except on loopback hosts.
	Issuer string
	// Resource is the gateway's resource URL (RFC 8707): a token's aud
	// must contain it (a trailing slash aside), so a token minted for
	// another server is refused.
	Resource string
	// HTTPClient fetches the metadata and the JWKS; nil means a client
	// that follows at most 3 redirects. Every request is bounded to 1 MiB
	// and 10 s.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Types are the JWS "typ" values admitted besides at+jwt (RFC 9068),
	// for identity providers that issue access tokens as, say, "JWT".
	// Every typ is compared case-insensitively, with or without its
	// "application/" prefix. A token of one of these types that carries
	// an ID token's claim (nonce, at_hash, c_hash) is still refused.
	Types []string
}

// A JWTVerifier verifies JWT access tokens (RFC 9068) locally: a typ of
// at+jwt (or one of [JWTOptions].Types), the signature against the
// issuer's JWKS with the one algorithm of the key (its JWK's alg, else
// RS256 for RSA, ES256, ES384 or ES512 for the P-256, P-384 or P-521
// curve, EdDSA for Ed25519), iss
// exactly the issuer, aud containing the resource, exp and sub required,
// and nbf and iat honored with 60 s of skew. The scopes are the
// space-separated "scope" claim; the subject is "sub", which also binds a
// stateful session to its user (another user's token cannot use it). A
// verified token is cached (by its SHA-256, never the token itself) until
// it expires.
//
// The verifier fetches the JWKS itself, never on a request's context: one
// fetch at a time, each bounded to 10 s, on the context given to
// [NewJWTVerifier]. An unknown key ID starts a fetch when the last
// successful one is at least a minute old and no failed one is less than
// 5 s old; requests meeting a fetch in flight wait for it (within their
// own context), so a client that hangs up cancels nothing. The set is
// also fetched again in the background, after its Cache-Control max-age
// bounded to between 1 minute and 1 hour (15 minutes when it gives none;
// 5 s after a failed fetch). From the fetch on, a key that left the set,
// or whose kid now names another key, verifies nothing, cached tokens it
// signed included. It is safe for concurrent use.
type JWTVerifier struct {
	issuer, resource, jwksURI string
	client                    *http.Client
	now                       func() time.Time
	life                      context.Context // bounds every fetch after the first
	types                     map[string]bool // typ values admitted besides at+jwt, normalized

	// mu guards everything below.
	mu       sync.Mutex
	keys     map[string]verifyKey // by key ID
	fetched  time.Time            // the last successful JWKS fetch
	every    time.Duration        // from fetched to the next background fetch
	retryAt  time.Time            // no fetch for an unknown key ID before this
	fetching chan struct{}        // closed when the fetch in flight ends; nil when none
	cache    map[[32]byte]cachedToken
}

// A verifyKey is a JWKS key and the one algorithm it verifies.
type verifyKey struct {
	key any
	alg string
}

// A cachedToken is a verified token's outcome.
type cachedToken struct {
	info *auth.TokenInfo
	kid  string
}

// ErrIssuerMetadata is returned by [NewJWTVerifier] when the issuer's
// metadata or JWKS cannot be fetched or is not usable.
var ErrIssuerMetadata = errors.New("gateway: the authorization server's metadata is unusable")

// NewJWTVerifier discovers the issuer's metadata and JWKS and returns a
// verifier for tokens it issued for the resource. ctx bounds the discovery
// and the verifier's life: once it ends, no JWKS fetch runs any more (the
// keys known still verify) and its background goroutine returns. It fails
// with
// [ErrIssuerMetadata] when either fetch fails, the metadata names another
// issuer or no jwks_uri, or an endpoint is neither https nor loopback.
func NewJWTVerifier(ctx context.Context, opts JWTOptions) (*JWTVerifier, error) {
	if err := checkEndpoint(opts.Issuer); err != nil {
		return nil, fmt.Errorf("%w: issuer: %v", ErrIssuerMetadata, err)
	}
	if u, err := url.Parse(opts.Resource); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("gateway: resource %q is not an absolute URL without a fragment", opts.Resource)
	}
	v := &JWTVerifier{
		issuer: opts.Issuer, resource: opts.Resource,
		client: opts.HTTPClient, now: opts.Now, life: ctx,
		cache: map[[32]byte]cachedToken{}, types: map[string]bool{},
	}
	for _, typ := range opts.Types {
		v.types[normalType(typ)] = true
	}
	if v.client == nil {
		v.client = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return checkEndpoint(req.URL.String())
		}}
	}
	if v.now == nil {
		v.now = time.Now
	}
	meta, err := v.metadata(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkEndpoint(meta.JWKSURI); err != nil {
		return nil, fmt.Errorf("%w: jwks_uri: %v", ErrIssuerMetadata, err)
	}
	v.jwksURI = meta.JWKSURI
	set, err := v.fetchKeys(ctx)
	if err != nil {
		return nil, err
	}
	v.install(set, v.now())
	go v.refreshLoop()
	return v, nil
}

// metadata fetches the issuer's metadata from the RFC 8414 location, then
// from the OpenID one.
func (v *JWTVerifier) metadata(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	u, _ := url.Parse(v.issuer) // checked by checkEndpoint
	path := strings.TrimSuffix(u.Path, "/")
	candidates := []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(v.issuer, "/") + "/.well-known/openid-configuration",
	}
	for _, c := range candidates {
		fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
		meta, err := oauthex.GetAuthServerMeta(fctx, c, v.issuer, v.client)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrIssuerMetadata, err)
		}
		if meta != nil {
			if meta.Issuer != v.issuer {
				return nil, fmt.Errorf("%w: metadata names issuer %q", ErrIssuerMetadata, meta.Issuer)
			}
			return meta, nil
		}
	}
	return nil, fmt.Errorf("%w: no metadata at %s", ErrIssuerMetadata, strings.Join(candidates, " or "))
}

// A jwks is a fetched key set: its public signing keys by key ID, each
// with its algorithm, and when to fetch it again.
type jwks struct {
	keys  map[string]verifyKey
	every time.Duration
}

// fetchKeys fetches the JWKS.
func (v *JWTVerifier) fetchKeys(ctx context.Context) (jwks, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.jwksURI, nil)
	if err != nil {
		return jwks{}, fmt.Errorf("%w: jwks: %v", ErrIssuerMetadata, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return jwks{}, fmt.Errorf("%w: jwks: %v", ErrIssuerMetadata, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return jwks{}, fmt.Errorf("%w: jwks: status %d", ErrIssuerMetadata, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil || len(body) > maxFetchBytes {
		return jwks{}, fmt.Errorf("%w: jwks: unreadable or over %d bytes", ErrIssuerMetadata, maxFetchBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return jwks{}, fmt.Errorf("%w: jwks: %v", ErrIssuerMetadata, err)
	}
	keys := map[string]verifyKey{}
	for _, k := range set.Keys {
		// A key without an ID could never be chosen unambiguously; a
		// private or symmetric key has no place in a public set.
		if k.KeyID == "" || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if alg := keyAlgorithm(k); alg != "" {
			keys[k.KeyID] = verifyKey{key: k.Key, alg: alg}
		}
	}
	if len(keys) == 0 {
		return jwks{}, fmt.Errorf("%w: jwks: no public signing key with a key ID", ErrIssuerMetadata)
	}
	return jwks{keys: keys, every: refreshInterval(resp.Header.Get("Cache-Control"))}, nil
}

// refreshInterval is the time until the next background fetch of a JWKS
// answered with the Cache-Control header cc: its max-age bounded to
// [jwksMinRefresh, jwksMaxRefresh] (no-cache and no-store count as 0),
// else jwksDefaultRefresh.
func refreshInterval(cc string) time.Duration {
	every := time.Duration(-1)
	for _, directive := range strings.Split(cc, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
		switch strings.ToLower(name) {
		case "no-cache", "no-store":
			every = 0
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil && n >= 0 && every != 0 {
				every = time.Duration(min(n, int64(jwksMaxRefresh/time.Second))) * time.Second
			}
		}
	}
	if every < 0 {
		return jwksDefaultRefresh
	}
	return min(max(every, jwksMinRefresh), jwksMaxRefresh)
}

// Verify is an auth.TokenVerifier: it returns the token's info, or an
// error wrapping auth.ErrInvalidToken whose text names the failed check
// and never the token.
func (v *JWTVerifier) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, invalid("token too long")
	}
	sum := sha256.Sum256([]byte(token))
	now := v.now()
	v.mu.Lock()
	if c, ok := v.cache[sum]; ok {
		v.mu.Unlock()
		if !now.Before(c.info.Expiration.Add(clockSkew)) {
			return nil, invalid("token expired")
		}
		return c.info, nil
	}
	v.mu.Unlock()

	parsed, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil || len(parsed.Headers) != 1 {
		return nil, invalid("not a signed JWT with an allowed algorithm")
	}
	header := parsed.Headers[0]
	typ, _ := header.ExtraHeaders[jose.HeaderType].(string)
	accessType := normalType(typ) == "at+jwt"
	if !accessType && !v.types[normalType(typ)] {
		return nil, invalid("not an access token (typ)")
	}
	key, ok := v.key(ctx, header.KeyID)
	if !ok {
		return nil, invalid("unknown signing key")
	}
	if key.alg != header.Algorithm {
		return nil, invalid("algorithm does not match the key")
	}
	var claims jwt.Claims
	var extra struct {
		Scope  string          `json:"scope"`
		Nonce  json.RawMessage `json:"nonce"`
		AtHash json.RawMessage `json:"at_hash"`
		CHash  json.RawMessage `json:"c_hash"`
	}
	if err := parsed.Claims(key.key, &claims, &extra); err != nil {
		return nil, invalid("bad signature or claims")
	}
	if !accessType && (extra.Nonce != nil || extra.AtHash != nil || extra.CHash != nil) {
		return nil, invalid("an ID token, not an access token")
	}
	if claims.Expiry == nil {
		return nil, invalid("token has no exp")
	}
	if claims.Subject == "" {
		return nil, invalid("token has no sub")
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, Time: now}, clockSkew); err != nil {
		return nil, invalid(err.Error()) // go-jose's texts name the claim, never its value
	}
	if !oauthex.MatchesResource(claims.Audience, v.resource) {
		return nil, invalid("token is for another resource")
	}
	info := &auth.TokenInfo{
		Scopes:     strings.Fields(extra.Scope),
		Expiration: claims.Expiry.Time(),
		UserID:     claims.Subject,
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if still, ok := v.keys[header.KeyID]; !ok || !sameKey(still, key) {
		return nil, invalid("unknown signing key") // rotated out meanwhile
	}
	makeRoom(v.cache, now, func(c cachedToken) time.Time { return c.info.Expiration.Add(clockSkew) })
	v.cache[sum] = cachedToken{info: info, kid: header.KeyID}
	return info, nil
}

// key returns the verification key of kid. An unknown kid starts a JWKS
// fetch when one may start (see [JWTVerifier]) and waits, within ctx, for
// the fetch in flight; cache hits never wait.
func (v *JWTVerifier) key(ctx context.Context, kid string) (verifyKey, bool) {
	v.mu.Lock()
	if k, ok := v.keys[kid]; ok {
		v.mu.Unlock()
		return k, true
	}
	done := v.fetching
	if done == nil {
		now := v.now()
		if now.Sub(v.fetched) < jwksMinInterval || now.Before(v.retryAt) {
			v.mu.Unlock()
			return verifyKey{}, false
		}
		done = v.startFetch()
	}
	v.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return verifyKey{}, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[kid]
	return k, ok
}

// startFetch starts a JWKS fetch on the verifier's own context and returns
// the channel closed when it ends. The caller holds mu and has checked that
// none is in flight.
func (v *JWTVerifier) startFetch() chan struct{} {
	done := make(chan struct{})
	v.fetching = done
	go func() {
		set, err := v.fetchKeys(v.life)
		v.mu.Lock()
		defer v.mu.Unlock()
		if err != nil {
			v.retryAt = v.now().Add(jwksRetryBackoff) // the old set stays
		} else {
			v.install(set, v.now())
		}
		v.fetching = nil
		close(done)
	}()
	return done
}

// install makes set the keys, fetched at now, and drops every cached token
// signed by a key no longer in it (its kid gone, or naming another key).
// The caller holds mu.
func (v *JWTVerifier) install(set jwks, now time.Time) {
	for sum, c := range v.cache {
		if k, ok := set.keys[c.kid]; !ok || !sameKey(k, v.keys[c.kid]) {
			delete(v.cache, sum)
		}
	}
	v.keys, v.fetched, v.every = set.keys, now, set.every
}

// refreshLoop fetches the JWKS again whenever it is due (see
// [JWTVerifier]) until the verifier's life ends.
func (v *JWTVerifier) refreshLoop() {
	for {
		v.mu.Lock()
		wait := v.refreshDue().Sub(v.now())
		v.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-v.life.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		v.mu.Lock()
		done := v.fetching
		if done == nil && !v.now().Before(v.refreshDue()) {
			done = v.startFetch()
		}
		v.mu.Unlock()
		if done != nil {
			select {
			case <-done:
			case <-v.life.Done():
				return
			}
		}
	}
}

// refreshDue is when the next background fetch is due: 5 s after a failed
// one, else the interval of the last successful one after it. The caller
// holds mu.
func (v *JWTVerifier) refreshDue() time.Time {
	if v.retryAt.After(v.fetched) {
		return v.retryAt
	}
	return v.fetched.Add(v.every)
}

// sameKey reports whether a and b are the same public key and algorithm.
func sameKey(a, b verifyKey) bool {
	pub, ok := a.key.(interface{ Equal(crypto.PublicKey) bool })
	return ok && a.alg == b.alg && pub.Equal(b.key)
}

// keyAlgorithm is the one algorithm k verifies: its alg when it names an
// allowed one, else the usual one of its type; "" when it has none
// (an alg not allowed, a key type not known).
func keyAlgorithm(k jose.JSONWebKey) string {
	if k.Algorithm != "" {
		if slices.Contains(signatureAlgorithms, jose.SignatureAlgorithm(k.Algorithm)) {
			return k.Algorithm
		}
		return ""
	}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		return string(jose.RS256)
	case *ecdsa.PublicKey:
		switch pub.Curve {
		case elliptic.P256():
			return string(jose.ES256)
		case elliptic.P384():
			return string(jose.ES384)
		case elliptic.P521():
			return string(jose.ES512)
		}
	case ed25519.PublicKey:
		return string(jose.EdDSA)
	}
	return ""
}

// normalType is a typ value compared: lower case, without "application/"
// (RFC 7515 section 4.1.9).
func normalType(typ string) string {
	typ = strings.ToLower(typ)
	return strings.TrimPrefix(typ, "application/")
}

func invalid(reason string) error { return fmt.Errorf("%w: %s", auth.ErrInvalidToken, reason) }

// checkEndpoint reports whether raw is an absolute https URL, or http on a
// loopback host.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%q is neither https nor a loopback http URL", raw)
}
