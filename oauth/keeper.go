package oauth

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/egress"
)

// A Keeper holds one MCP server's OAuth credentials for its sessions, on
// the model of an oauth2.TokenSource that also persists: it loads them
// from the [Store], gives [Transport] the access token for each request to
// the server's origin, learns of each 401, and refreshes the token before
// it expires ([Keeper.Keep] in the background, or [Keeper.Refresh]), once
// per credential (see Refresh) and persisting a rotated refresh token
// before the new access token is used. A server that never asks for a
// token never sees one: without credentials and before any 401 nothing is
// added. Its methods are safe for concurrent use.
type Keeper struct {
	store     Store // nil: no store could be opened
	serverURL string
	origin    string
	clientID  string       // the configured clientId: stored credentials of another client are ignored
	base      *http.Client // carries the refreshes (nil: http.DefaultTransport's settings)

	mu       sync.Mutex
	creds    *Credentials // nil: none usable
	obtained time.Time    // when creds' access token was obtained or loaded
	asked    bool         // the server answered 401 with a Bearer challenge
	expired  bool         // creds' token was refused, or could not be refreshed
	failed   string       // the code of the last failure (auth required, expired, store failed)
	required []string     // the scopes of the last insufficient_scope challenge
	refusals int          // refreshes that ended in a coded failure, whoever ran them (Keep reports each)
	renewals uint64       // credentials taken up: each login Load found and each refresh adopted
	wakeup   chan struct{}

	refreshing sync.Mutex // held by the one refresh of this keeper in flight
}

// NewKeeper returns the keeper of serverURL's credentials in store; a nil
// store means no OAuth (the keeper holds and sends nothing).
// clientID, when set, is the configured client: stored credentials of
// another client are not used. Nothing is read until [Keeper.Load]. The
// refreshes run under serverURL's egress rule (see [Login]).
func NewKeeper(store Store, serverURL, clientID string) *Keeper {
	k := &Keeper{store: store, serverURL: serverURL, clientID: clientID, wakeup: make(chan struct{}, 1)}
	if u, err := url.Parse(serverURL); err == nil {
		k.origin = u.Scheme + "://" + u.Host
	}
	return k
}

// Load reads the store; it reports whether it now holds credentials that
// differ from those it had (a login happened). A store that fails is
// mcp_auth_store_failed, and the keeper's Reason until it answers again.
// A keeper without a store (nil) holds nothing: no token is ever sent.
func (k *Keeper) Load(ctx context.Context) (bool, error) {
	if k.store == nil {
		return false, ctx.Err()
	}
	c, err := k.store.Load(ctx, k.serverURL)
	if err != nil {
		k.fail(purramcp.CodeAuthStoreFailed)
		return false, authError(purramcp.CodeAuthStoreFailed)
	}
	if c != nil && !k.usable(c) {
		c = nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failed == purramcp.CodeAuthStoreFailed {
		k.failed = "" // the store answers again
	}
	changed := c != nil && (k.creds == nil || c.AccessToken != k.creds.AccessToken)
	if changed || (c == nil && k.creds != nil) {
		k.creds, k.obtained, k.expired, k.failed = c, time.Now(), false, ""
		if changed {
			k.renewals++
		}
		k.wake() // the refresh schedule follows the new credentials
	}
	return changed, nil
}

// fail records code as the keeper's last failure.
func (k *Keeper) fail(code string) {
	k.mu.Lock()
	k.failed = code
	k.mu.Unlock()
}

// Reason is the status code of a server the keeper cannot authorize: the
// last failure, else mcp_auth_expired for a token that was refused, else
// mcp_auth_required.
func (k *Keeper) Reason() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.failed != "":
		return k.failed
	case k.creds != nil || k.expired:
		return purramcp.CodeAuthExpired
	}
	return purramcp.CodeAuthRequired
}

// token is the access token to send, "" for none.
func (k *Keeper) token() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.creds == nil || k.expired {
		return ""
	}
	return k.creds.AccessToken
}

// refused records that the server refused token (a 401 to a request that
// carried it, or to one that carried none) and wakes the refresher once.
func (k *Keeper) refused(token string) {
	k.mu.Lock()
	k.asked = true
	if token != "" && k.creds != nil && k.creds.AccessToken == token {
		k.expired = true
	}
	k.mu.Unlock()
	k.wake()
}

// Unauthorized is Reason once the server has refused the keeper's token
// (or the lack of one), else "".
func (k *Keeper) Unauthorized() string {
	k.mu.Lock()
	asked := k.asked
	k.mu.Unlock()
	if !asked {
		return ""
	}
	return k.Reason()
}

// wake tells keep to look at the schedule again.
func (k *Keeper) wake() {
	select {
	case k.wakeup <- struct{}{}:
	default:
	}
}

// Due is when the access token should be refreshed: ahead of its expiry
// by a fifth of its lifetime (at most a minute), less up to a quarter of
// that at random, so that many servers do not refresh at once; zero when
// there is nothing to refresh.
func (k *Keeper) Due() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.creds == nil || k.creds.RefreshToken == "" || k.failed != "":
		return time.Time{} // nothing to refresh, or a refresh was refused: only a login helps
	case k.expired:
		return time.Now()
	case k.creds.Expiry.IsZero():
		return time.Time{}
	}
	lead := max(min(k.creds.Expiry.Sub(k.obtained)/5, time.Minute), 0) // 0: loaded after its expiry
	lead += time.Duration(rand.Int64N(int64(lead/4) + 1))
	return k.creds.Expiry.Add(-lead)
}

// Refresh renews the access token with the refresh token, persists the
// new credentials, then uses them: once per credential. Concurrent calls
// on one keeper run one at a time: one that finds the credentials
// replaced while it waited uses them instead, and one that waited for a
// refresh of the same credentials that ended in a coded failure returns
// that failure without asking again. The store's entry is held (see
// [Locker]) around load, refresh and save; under it the stored
// credentials are read again, and when they differ from the keeper's and
// are not due, another holder refreshed (or a login happened) and they
// are adopted without a request. Otherwise the stored refresh token, not
// the keeper's copy, is the one presented. A rotated refresh token is
// saved before the new access token is used, even when ctx ends once the
// authorization server answered. Refusal by the authorization server is
// mcp_auth_expired, unless the store's credentials changed while the
// request was in flight (they are adopted then); an answer that holds no
// token is mcp_auth_expired too; a store that cannot take them,
// mcp_auth_store_failed; a failure to reach it (no answer) is returned as
// is, to be tried again. A coded failure is reported to [Keeper.Keep]'s
// lost, whether Keep, [Transport] or another caller ran the refresh.
func (k *Keeper) Refresh(ctx context.Context) error {
	k.mu.Lock()
	held, refusals := k.creds, k.refusals
	k.mu.Unlock()
	k.refreshing.Lock()
	defer k.refreshing.Unlock()
	k.mu.Lock()
	replaced, expired, failed := k.creds != held, k.expired, k.failed
	refused := k.refusals != refusals
	k.mu.Unlock()
	switch {
	case replaced && !expired:
		return nil // refreshed (or loaded) while this call waited
	case refused && !replaced && failed != "":
		return authError(failed) // the refresh this call waited for failed: not asked again
	}
	err := k.refresh(ctx)
	if isAuthCode(err) {
		k.mu.Lock()
		k.refusals++
		k.mu.Unlock()
		k.wake() // Keep reports it
	}
	return err
}

// refresh is Refresh once it holds k.refreshing and found the keeper's
// credentials to be renewed.
func (k *Keeper) refresh(ctx context.Context) error {
	if k.store == nil {
		return authError(purramcp.CodeAuthRequired) // no OAuth
	}
	unlock, err := lockEntry(ctx, k.store, k.serverURL)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		k.fail(purramcp.CodeAuthStoreFailed)
		return authError(purramcp.CodeAuthStoreFailed)
	}
	defer unlock()
	c, err := k.stored(ctx)
	if err != nil {
		return err
	}
	k.mu.Lock()
	held := k.creds
	k.mu.Unlock()
	if c != nil && (held == nil || c.AccessToken != held.AccessToken) && !pastExpiry(c) {
		k.adopt(c) // another holder refreshed, or a login happened
		return nil
	}
	if c == nil || c.RefreshToken == "" {
		k.fail(purramcp.CodeAuthExpired)
		return authError(purramcp.CodeAuthExpired)
	}
	cfg := &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: c.TokenURL, AuthStyle: authStyle(c.AuthStyle)}}
	ahc, release, err := authClient(ctx, k.serverURL, k.base, 0, nil, egress.Options{})
	if err != nil {
		return k.refusedEgress(ctx, err)
	}
	defer release()
	hc := *withResource(ahc, c.Resource)
	rec := &statusRecorder{inner: hc.Transport}
	hc.Transport = rec
	tok, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, &hc),
		&oauth2.Token{RefreshToken: c.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re), err != nil && rec.answered(), err == nil && tok.AccessToken == "":
		// Refused, or an answer that is no token (over its bound, not
		// JSON, empty): the authorization server answered, so trying
		// again would get the same. Unless the store changed meanwhile
		// (a login that wrote without the entry's lock).
		if now, err := k.store.Load(context.WithoutCancel(ctx), k.serverURL); err == nil && now != nil &&
			now.AccessToken != "" && now.AccessToken != c.AccessToken && k.usable(now) {
			k.adopt(now)
			return nil
		}
		k.mu.Lock()
		k.expired = true
		k.mu.Unlock()
		k.fail(purramcp.CodeAuthExpired)
		return authError(purramcp.CodeAuthExpired)
	case errors.Is(err, purramcp.ErrEgressRefused):
		return k.refusedEgress(ctx, err)
	case err != nil:
		return err
	}
	next := *c
	next.AccessToken, next.Expiry = tok.AccessToken, tok.Expiry
	if tok.RefreshToken != "" {
		next.RefreshToken = tok.RefreshToken // rotated: persisted before it is used
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		next.Scopes = grantedScopes(tok, nil)
	}
	// The old refresh token is spent: the new one is saved even when ctx
	// ended meanwhile, bounded by saveTimeout.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := k.store.Save(sctx, &next); err != nil {
		k.fail(purramcp.CodeAuthStoreFailed)
		return authError(purramcp.CodeAuthStoreFailed)
	}
	k.adopt(&next)
	return nil
}

// refusedEgress records a refresh the egress rule refused (a token
// endpoint more internal than the server, or not https): trying again
// would be refused again, so only a login helps.
func (k *Keeper) refusedEgress(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !errors.Is(err, purramcp.ErrEgressRefused) {
		return err // the server's name did not resolve: tried again
	}
	k.fail(purramcp.CodeEgressRefused)
	return &purramcp.Error{Code: purramcp.CodeEgressRefused}
}

// saveTimeout bounds saving refreshed credentials after ctx ended.
const saveTimeout = 10 * time.Second

// stored loads the store's credentials for the server, nil when it holds
// none the keeper may use.
func (k *Keeper) stored(ctx context.Context) (*Credentials, error) {
	c, err := k.store.Load(ctx, k.serverURL)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		k.fail(purramcp.CodeAuthStoreFailed)
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	if c != nil && !k.usable(c) {
		c = nil
	}
	return c, nil
}

// usable reports whether c holds an access token of the configured client.
func (k *Keeper) usable(c *Credentials) bool {
	return c.AccessToken != "" && (k.clientID == "" || c.ClientID == k.clientID)
}

// adopt makes c the keeper's credentials, fresh.
func (k *Keeper) adopt(c *Credentials) {
	k.mu.Lock()
	k.creds, k.obtained, k.expired, k.failed = c, time.Now(), false, ""
	k.renewals++
	k.mu.Unlock()
	k.wake() // the refresh schedule follows the new credentials
}

// Renewals counts the credentials the keeper has taken up: each new
// access token [Keeper.Load] found and each one a refresh brought (its
// own, or another holder's it adopted). A caller whose server refused the
// credentials reads it before the request and waits for it to move: the
// keeper then holds credentials it had not presented, without a login.
func (k *Keeper) Renewals() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.renewals
}

// pastExpiry reports whether c's access token has a known expiry that
// has passed.
func pastExpiry(c *Credentials) bool {
	return !c.Expiry.IsZero() && !time.Now().Before(c.Expiry)
}

// Keep is the background refresh: it refreshes the token whenever it is
// due, or at once after a 401, until ctx ends. lost is called with the
// status code once for each refresh that ends in a coded failure (refused,
// or the store or egress rule failed), whichever path ran it (Keep itself,
// [Transport] before a request, a caller of [Keeper.Refresh]) and unless
// new credentials arrived since, so that the server's session ends and
// the server becomes unauthorized; the keeper then waits for new
// credentials (a login).
func (k *Keeper) Keep(ctx context.Context, lost func(code string)) {
	const retry = 5 * time.Second
	reported := 0 // the refusals lost was called for
	for {
		if code := k.unreported(&reported); code != "" && ctx.Err() == nil {
			lost(code)
		}
		t := time.NewTimer(time.Hour)
		if at := k.Due(); !at.IsZero() {
			t.Reset(time.Until(at))
		} else {
			t.Stop()
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-k.wakeup: // a 401, new credentials, or a refusal to report
			t.Stop()
			if at := k.Due(); at.IsZero() || time.Now().Before(at) {
				continue
			}
		case <-t.C:
		}
		if err := k.Refresh(ctx); err != nil && !isAuthCode(err) {
			// the authorization server could not be reached: try again
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// unreported is the keeper's failure when a refresh ended in one since
// *seen refusals and it still stands (no new credentials since), else "";
// it moves *seen to the current count.
func (k *Keeper) unreported(seen *int) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.refusals == *seen {
		return ""
	}
	*seen = k.refusals
	return k.failed
}

// A Transport is an http.RoundTripper that authorizes the requests of an
// MCP client (the HTTPClient of an mcp.StreamableClientTransport) with
// Keeper's credentials, on the model of oauth2.Transport: it refreshes the
// access token first when it is due, puts it on each request to the
// server's origin (never another), and turns the server's 401, and its
// 403 with error="insufficient_scope", into an error matching
// purramcp.ErrUnauthorized (the request is not resent, the session
// stands; [Keeper.Keep] refreshes after a 401, and the next request uses
// the new token). Base carries the requests; nil is
// http.DefaultTransport.
type Transport struct {
	// Base is the transport below; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Keeper holds the credentials. Required.
	Keeper *Keeper
}

// RoundTrip sends req as Transport says.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	k := t.Keeper
	inner := t.Base
	if inner == nil {
		inner = http.DefaultTransport
	}
	sameOrigin := req.URL.Scheme+"://"+req.URL.Host == k.origin
	if !sameOrigin {
		return inner.RoundTrip(req)
	}
	if at := k.Due(); !at.IsZero() && !time.Now().Before(at) {
		_ = k.Refresh(req.Context()) // a refusal shows as the server's 401
	}
	token := k.token()
	if token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := inner.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusForbidden {
		if scopes := insufficientScope(resp); scopes != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAuthBodyBytes))
			_ = resp.Body.Close()
			k.mu.Lock()
			k.required = scopes
			k.mu.Unlock()
			return nil, &purramcp.Error{Code: purramcp.CodeUnauthorized}
		}
		return resp, nil
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAuthBodyBytes))
	_ = resp.Body.Close()
	if token != "" || bearerChallenges(resp) != nil {
		k.refused(token)
	}
	return nil, &purramcp.Error{Code: purramcp.CodeUnauthorized}
}

// isAuthCode reports whether err is one of the keeper's coded failures.
func isAuthCode(err error) bool {
	for _, code := range []string{purramcp.CodeAuthExpired, purramcp.CodeAuthRequired, purramcp.CodeAuthStoreFailed,
		purramcp.CodeEgressRefused} {
		if errors.Is(err, authError(code)) {
			return true
		}
	}
	return false
}

// insufficientScope returns the valid scope tokens of resp's
// insufficient_scope Bearer challenge (at most 64), nil when it has none.
func insufficientScope(resp *http.Response) []string {
	for _, c := range bearerChallenges(resp) {
		if c.Params["error"] != "insufficient_scope" {
			continue
		}
		scopes := []string{}
		for _, s := range strings.Fields(c.Params["scope"]) {
			if ValidScope(s) && len(scopes) < 64 {
				scopes = append(scopes, s)
			}
		}
		return scopes
	}
	return nil
}

// RequiredScopes returns a copy of the scopes the server last asked for
// when it refused a request for insufficient scope (HTTP 403 with
// error="insufficient_scope"), nil when it never did: sign in again with
// them to step up.
func (k *Keeper) RequiredScopes() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.required...)
}
