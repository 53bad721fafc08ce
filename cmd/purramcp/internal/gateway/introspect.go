package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Bounds on token introspection: active answers reused at most this long
// by default, refusals reused this long, introspection requests in flight
// at once, and by default the introspections a second from one client
// address and from all.
const (
	defaultIntrospectionCache = 30 * time.Second
	refusalCache              = 10 * time.Second
	maxIntrospections         = 16
	defaultIntrospectionRate  = 20
	defaultAddressRate        = 5
)

// IntrospectionOptions configure an [IntrospectionVerifier].
type IntrospectionOptions struct {
	// Endpoint is the authorization server's token introspection endpoint
	// (RFC 7662): https, or http on a loopback host.
	Endpoint string
	// Issuer is the authorization server's issuer URL: an answer that
	// names another iss is refused.
	Issuer string
	// Resource is the gateway's resource URL: an active token's aud must
	// contain it (a token minted for another server is refused, and so is
	// one whose answer names no audience).
	Resource string
	// ClientID and ClientSecret are the gateway's own credentials at the
	// endpoint, sent with HTTP Basic authentication (RFC 7662 section 2.1:
	// the endpoint answers only protected resources it knows).
	ClientID, ClientSecret string
	// CacheFor is how long an active answer is reused for the same token,
	// never past the token's exp; 0 means 30 s. A token revoked at the
	// authorization server is refused once its answer is no longer
	// reused.
	CacheFor time.Duration
	// Rate caps the introspections a second over every client (0 means
	// 20), and RatePerAddress those a second for one client address, the
	// host of the request's RemoteAddr (0 means 5; behind a proxy every
	// client shares its address). Each budget holds one second's worth. A
	// token whose answer is reused costs nothing; one that would exceed a
	// budget is refused with [ErrIntrospectionLimited] and never sent.
	Rate, RatePerAddress int
	// HTTPClient sends the requests; nil means one that follows no
	// redirect. Every answer is bounded to 1 MiB and 10 s.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// An IntrospectionVerifier verifies opaque access tokens by asking the
// authorization server (RFC 7662): the answer must say active true, name
// the issuer when it names one, have an aud containing the resource, a
// token_type of Bearer when it gives one, an exp and a sub, and an exp and
// nbf (when given) that hold with 60 s of skew. The scopes are the
// space-separated "scope"; the subject is "sub", which also binds a
// stateful session to its user. An active answer is cached, by the
// token's SHA-256 (never the token), for CacheFor at most; a refusal for
// 10 s. Introspections not answered from the cache are rate-limited per
// client address and overall (see [IntrospectionOptions].Rate); at most 16
// run at once (the others wait, within their request's ctx). It is safe
// for concurrent use.
type IntrospectionVerifier struct {
	opts  IntrospectionOptions
	slots chan struct{}
	limit *rateLimiter

	// mu guards cache and refused.
	mu      sync.Mutex
	cache   map[[32]byte]introspected
	refused map[[32]byte]refusal
}

// A refusal is a refused token's error and when it stops being reused.
type refusal struct {
	err   error
	until time.Time
}

// ErrIntrospectionLimited is Verify's error for a token it would have to
// introspect while its client's or the overall budget is spent: the
// protected resource answers 429 with Retry-After, and nothing reaches the
// authorization server.
var ErrIntrospectionLimited = errors.New("gateway: too many token introspections, retry later")

// An introspected token is an active answer and when it stops being reused.
type introspected struct {
	info  *auth.TokenInfo
	until time.Time
}

// NewIntrospectionVerifier returns a verifier over opts' endpoint, or an
// error when the endpoint, issuer or resource is not a usable URL or no
// client ID is set, or a rate is negative.
func NewIntrospectionVerifier(opts IntrospectionOptions) (*IntrospectionVerifier, error) {
	if err := checkEndpoint(opts.Endpoint); err != nil {
		return nil, fmt.Errorf("gateway: introspection endpoint: %v", err)
	}
	if err := checkEndpoint(opts.Issuer); err != nil {
		return nil, fmt.Errorf("gateway: issuer: %v", err)
	}
	if u, err := url.Parse(opts.Resource); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("gateway: resource %q is not an absolute URL without a fragment", opts.Resource)
	}
	if opts.ClientID == "" {
		return nil, errors.New("gateway: introspection needs the gateway's client ID")
	}
	if opts.Rate < 0 || opts.RatePerAddress < 0 {
		return nil, errors.New("gateway: negative introspection rate")
	}
	if opts.CacheFor <= 0 {
		opts.CacheFor = defaultIntrospectionCache
	}
	opts.Rate = orDefault(opts.Rate, defaultIntrospectionRate)
	opts.RatePerAddress = orDefault(opts.RatePerAddress, defaultAddressRate)
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &IntrospectionVerifier{opts: opts, slots: make(chan struct{}, maxIntrospections),
		limit: newRateLimiter(opts.RatePerAddress, opts.Rate),
		cache: map[[32]byte]introspected{}, refused: map[[32]byte]refusal{}}, nil
}

// errIntrospection is Verify's error when the endpoint gave no usable
// answer: the request fails (500), it is not taken as a refusal.
var errIntrospection = errors.New("gateway: the token introspection endpoint gave no usable answer")

// Verify is an auth.TokenVerifier: it returns the token's info, an error
// wrapping auth.ErrInvalidToken (never naming the token or the server's
// text) for a token the server does not vouch for,
// [ErrIntrospectionLimited] over a rate, or errIntrospection when the
// server could not be asked.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, invalid("token too long")
	}
	sum := sha256.Sum256([]byte(token))
	now := v.opts.Now()
	v.mu.Lock()
	c, ok := v.cache[sum]
	r, refused := v.refused[sum]
	v.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.info, nil
	}
	if refused && now.Before(r.until) {
		return nil, r.err
	}
	if !v.limit.allow(clientAddress(req), now) {
		return nil, ErrIntrospectionLimited
	}
	select {
	case v.slots <- struct{}{}:
		defer func() { <-v.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	answer, err := v.introspect(ctx, token)
	if err != nil {
		return nil, err
	}
	now = v.opts.Now()
	info, err := v.check(answer, now)
	if err != nil {
		v.refuse(sum, err, now)
		return nil, err
	}
	until := now.Add(v.opts.CacheFor)
	if info.Expiration.Before(until) {
		until = info.Expiration
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	makeRoom(v.cache, now, func(c introspected) time.Time { return c.until })
	v.cache[sum] = introspected{info: info, until: until}
	return info, nil
}

// refuse keeps err as the answer for the token of sum for 10 s.
func (v *IntrospectionVerifier) refuse(sum [32]byte, err error, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	makeRoom(v.refused, now, func(r refusal) time.Time { return r.until })
	v.refused[sum] = refusal{err: err, until: now.Add(refusalCache)}
}

// clientAddress is the host of req's RemoteAddr; "" without a request.
func clientAddress(req *http.Request) string {
	if req == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		return host
	}
	return req.RemoteAddr
}

// An introspectionAnswer is the members of an RFC 7662 answer Verify reads.
type introspectionAnswer struct {
	Active    *bool           `json:"active"`
	Scope     string          `json:"scope"`
	Subject   string          `json:"sub"`
	Issuer    *string         `json:"iss"`
	Audience  json.RawMessage `json:"aud"`
	TokenType string          `json:"token_type"`
	Expiry    *float64        `json:"exp"`
	NotBefore *float64        `json:"nbf"`
}

// introspect asks the endpoint about token.
func (v *IntrospectionVerifier) introspect(ctx context.Context, token string) (*introspectionAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.opts.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, errIntrospection
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(v.opts.ClientID), url.QueryEscape(v.opts.ClientSecret)) // RFC 6749 section 2.3.1
	resp, err := v.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, errIntrospection
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil || len(body) > maxFetchBytes || resp.StatusCode != http.StatusOK {
		return nil, errIntrospection
	}
	var a introspectionAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Active == nil {
		return nil, errIntrospection
	}
	return &a, nil
}

// check turns an answer into the token's info, or the reason it is
// refused.
func (v *IntrospectionVerifier) check(a *introspectionAnswer, now time.Time) (*auth.TokenInfo, error) {
	if !*a.Active {
		return nil, invalid("token not active")
	}
	if a.Issuer != nil && *a.Issuer != v.opts.Issuer {
		return nil, invalid("token from another issuer")
	}
	if a.TokenType != "" && !strings.EqualFold(a.TokenType, "bearer") {
		return nil, invalid("not a bearer access token")
	}
	var aud []string
	var one string
	if json.Unmarshal(a.Audience, &one) == nil {
		aud = []string{one}
	} else if json.Unmarshal(a.Audience, &aud) != nil {
		aud = nil
	}
	if !oauthex.MatchesResource(aud, v.opts.Resource) {
		return nil, invalid("token is for another resource")
	}
	if a.Expiry == nil {
		return nil, invalid("token has no exp")
	}
	if a.Subject == "" {
		return nil, invalid("token has no sub")
	}
	info := &auth.TokenInfo{Scopes: strings.Fields(a.Scope), UserID: a.Subject,
		Expiration: time.Unix(int64(*a.Expiry), 0)}
	if !now.Before(info.Expiration.Add(clockSkew)) {
		return nil, invalid("token expired")
	}
	if a.NotBefore != nil && now.Add(clockSkew).Before(time.Unix(int64(*a.NotBefore), 0)) {
		return nil, invalid("token not yet valid")
	}
	return info, nil
}
