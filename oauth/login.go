package oauth

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"purra.dev/purramcp"
)

// LoginOptions configures [Login].
type LoginOptions struct {
	// ServerURL is the MCP endpoint to sign in to: https, or http to a
	// loopback host.
	ServerURL string
	// OAuth is the server's client configuration; nil takes the defaults
	// (see [Config]).
	OAuth *Config
	// Store receives the credentials; a client registration it already
	// holds for the server's authorization server is reused. Required.
	Store Store
	// HTTPClient's transport carries every request (nil:
	// http.DefaultTransport); its other fields are not used: each request
	// is bounded by Timeout and by purramcp's size and redirect bounds.
	HTTPClient *http.Client
	// Timeout bounds each OAuth request (metadata, registration, token);
	// 0 means 30s. The whole login is bounded by ctx.
	Timeout time.Duration
	// Browse is given the authorization URL: it opens a browser, prints
	// the URL, or (in tests and the conformance client) follows it
	// headlessly. Login then waits, until ctx ends, for the authorization
	// server to redirect to its loopback listener
	// (http://127.0.0.1:PORT/callback). An error from Browse ends the
	// login with mcp_auth_denied. Required.
	Browse func(ctx context.Context, authURL string) error
}

// Login signs in to an OAuth-protected MCP server with the authorization
// code flow and stores the credentials it obtains. It probes the server
// for its challenge (a 401 with a Bearer WWW-Authenticate), fetches the
// protected resource metadata (RFC 9728) and the metadata of the
// authorization server that names (the only one used, whose issuer must
// match), registers a client (the configured ClientID, a client ID
// metadata document, or dynamic registration; or the registration the
// store already holds), sends the user through PKCE S256 with the
// resource indicator and a checked state, exchanges the code, and saves
// [Credentials] to Store before returning them. Every request is bounded
// in bytes and time and goes only to https or loopback URLs.
//
// A failure is a coded error ([purramcp.CodeAuthDiscoveryFailed],
// [purramcp.CodeAuthRegistrationFailed], [purramcp.CodeAuthDenied], [purramcp.CodeAuthTokenFailed],
// [purramcp.CodeAuthStoreFailed]) or ctx's own error; it carries no remote text,
// token, code, verifier or secret.
func Login(ctx context.Context, opts LoginOptions) (*Credentials, error) {
	u, err := url.Parse(opts.ServerURL)
	if err != nil || !secureURL(u) || opts.Store == nil || opts.Browse == nil {
		return nil, authError(purramcp.CodeAuthDiscoveryFailed)
	}
	oc := opts.OAuth
	if oc == nil {
		oc = &Config{}
	}
	if err := oc.Validate(); err != nil {
		return nil, err
	}
	var fl loginFlow
	hc, release, err := authClient(ctx, opts.ServerURL, opts.HTTPClient, opts.Timeout, fl.saw)
	if err != nil {
		return nil, ctxOr(ctx, purramcp.CodeAuthDiscoveryFailed)
	}
	defer release()

	probeReq, probeResp, err := probe(ctx, hc, opts.ServerURL)
	if err != nil {
		return nil, ctxOr(ctx, purramcp.CodeAuthDiscoveryFailed)
	}
	// Discovery runs once: every metadata answer it got is recorded, and
	// the flow below is given those answers, never the network, for its
	// own metadata requests; so the endpoints checked here are the ones
	// it uses.
	memo := &metadataMemo{inner: hc.Transport}
	dhc := *hc
	dhc.Transport = memo
	d, err := discover(ctx, &dhc, opts.ServerURL, probeResp)
	if err != nil {
		return nil, ctxOr(ctx, purramcp.CodeAuthDiscoveryFailed)
	}
	memo.replay()
	fhc := *hc
	fhc.Transport = memo
	fl.registration, fl.token = d.asm.RegistrationEndpoint, d.asm.TokenEndpoint

	stored, err := opts.Store.Load(ctx, opts.ServerURL)
	if err != nil {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	reuse := stored != nil && stored.ClientID != "" && stored.Issuer == d.asm.Issuer &&
		(oc.ClientID == "" || oc.ClientID == stored.ClientID)

	port := oc.RedirectPort
	if reuse && port == 0 && stored.RedirectURI != "" {
		if ru, err := url.Parse(stored.RedirectURI); err == nil {
			port, _ = strconv.Atoi(ru.Port())
		}
	}
	cb, err := listenCallback(port)
	if err != nil {
		return nil, authError(purramcp.CodeAuthDenied)
	}
	defer cb.close()

	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         cb.redirect,
		Client:              &fhc,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			fl.set(phaseAuthorize)
			au, err := url.Parse(args.URL)
			if err != nil || au.Query().Get("state") == "" {
				return nil, errDenied
			}
			cb.expect(au.Query().Get("state"))
			if err := opts.Browse(ctx, args.URL); err != nil {
				return nil, errDenied
			}
			res, err := cb.wait(ctx)
			if err != nil {
				return nil, err
			}
			fl.set(phaseAuthorized)
			return res, nil
		},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			fl.mu.Lock()
			fl.cfg, fl.tok = c, tok
			fl.mu.Unlock()
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	if len(oc.Scopes) > 0 {
		scopes := append([]string(nil), oc.Scopes...)
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	switch {
	case oc.ClientID != "":
		cfg.PreregisteredClient = preregistered(oc.ClientID, oc.ClientSecret, d.asm.Issuer)
	case reuse:
		cfg.PreregisteredClient = preregistered(stored.ClientID, stored.ClientSecret, d.asm.Issuer)
	default:
		if oc.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: oc.ClientMetadataURL}
		}
		if d.asm.RegistrationEndpoint == "" && (oc.ClientMetadataURL == "" || !d.asm.ClientIDMetadataDocumentSupported) {
			return nil, authError(purramcp.CodeAuthRegistrationFailed)
		}
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{cb.redirect}, ClientName: "purramcp", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, authError(purramcp.CodeAuthRegistrationFailed)
	}
	if err := h.Authorize(ctx, probeReq, probeResp); err != nil {
		return nil, ctxOr(ctx, fl.failure())
	}
	fl.mu.Lock()
	c, tok := fl.cfg, fl.tok
	fl.mu.Unlock()
	if c == nil || tok == nil || tok.AccessToken == "" || (tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer")) {
		return nil, authError(purramcp.CodeAuthTokenFailed)
	}
	if c.Endpoint.TokenURL != d.asm.TokenEndpoint || c.Endpoint.AuthURL != d.asm.AuthorizationEndpoint {
		return nil, authError(purramcp.CodeAuthDiscoveryFailed) // the metadata changed under the flow
	}
	creds := &Credentials{ServerURL: opts.ServerURL, Resource: d.resource, Issuer: d.asm.Issuer,
		TokenURL: c.Endpoint.TokenURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		AuthStyle: authStyleName(c.Endpoint.AuthStyle), RedirectURI: cb.redirect, Scopes: grantedScopes(tok, c.Scopes),
		AccessToken: tok.AccessToken, Expiry: tok.Expiry, RefreshToken: tok.RefreshToken}
	unlock, err := lockEntry(ctx, opts.Store, opts.ServerURL) // not while a refresh of the entry is in flight
	if err != nil {
		return nil, ctxOr(ctx, purramcp.CodeAuthStoreFailed)
	}
	defer unlock()
	if err := opts.Store.Save(ctx, creds); err != nil {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	return creds, nil
}

// errDenied is the fetcher's error when the authorization did not succeed.
var errDenied = errors.New("oauth: authorization denied")

// ctxOr is ctx's error once it has ended, else the error of code.
func ctxOr(ctx context.Context, code string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return authError(code)
}

// preregistered is a go-sdk pre-registered client bound to issuer.
func preregistered(id, secret, issuer string) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: id, Issuer: issuer}
	if secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// Phases of a login, in order, for the code of its failure.
const (
	phaseDiscovery = iota
	phaseRegister
	phaseAuthorize
	phaseAuthorized
	phaseToken
)

// loginFlow follows one Login: its phase (from the requests it sees and
// the fetcher's progress) and what the token exchange produced.
type loginFlow struct {
	mu                  sync.Mutex
	phase               int
	registration, token string // the authorization server's endpoints
	cfg                 *oauth2.Config
	tok                 *oauth2.Token
}

func (fl *loginFlow) set(phase int) {
	fl.mu.Lock()
	fl.phase = max(fl.phase, phase)
	fl.mu.Unlock()
}

// saw moves the phase on a request to the registration or token endpoint.
func (fl *loginFlow) saw(req *http.Request) {
	u := req.URL.String()
	fl.mu.Lock()
	reg, tok := fl.registration, fl.token
	fl.mu.Unlock()
	switch {
	case reg != "" && u == reg:
		fl.set(phaseRegister)
	case tok != "" && u == tok:
		fl.set(phaseToken)
	}
}

// failure is the code of a flow that failed in its current phase.
func (fl *loginFlow) failure() string {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	switch fl.phase {
	case phaseDiscovery:
		return purramcp.CodeAuthDiscoveryFailed
	case phaseRegister:
		return purramcp.CodeAuthRegistrationFailed
	case phaseAuthorize, phaseAuthorized:
		return purramcp.CodeAuthDenied
	}
	return purramcp.CodeAuthTokenFailed
}

// probe sends an initialize request without credentials, and a tools/list
// when that passes, and returns the one answered by a 401 with a Bearer
// challenge, with its answer.
func probe(ctx context.Context, hc *http.Client, serverURL string) (*http.Request, *http.Response, error) {
	req, resp, err := probeWith(ctx, hc, serverURL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"purramcp","version":"1"}}}`)
	if errors.Is(err, errNotProtected) { // a server may let the handshake through and guard its methods
		req, resp, err = probeWith(ctx, hc, serverURL, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	}
	return req, resp, err
}

// probeWith sends body without credentials and returns the request with
// its answer when that is a 401 with a Bearer challenge.
func probeWith(ctx context.Context, hc *http.Client, serverURL, body string) (*http.Request, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAuthBodyBytes))
	_ = resp.Body.Close()
	resp.Body = http.NoBody
	if resp.StatusCode == http.StatusUnauthorized && bearerChallenges(resp) != nil {
		return req, resp, nil
	}
	return nil, nil, errNotProtected
}

var errNotProtected = errors.New("oauth: the server did not ask for a bearer token")

// bearerChallenges returns resp's Bearer challenges, nil when it has none.
func bearerChallenges(resp *http.Response) []oauthex.Challenge {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil
	}
	var out []oauthex.Challenge
	for _, c := range cs {
		if c.Scheme == "bearer" {
			out = append(out, c)
		}
	}
	return out
}

// discovered is what Login's own discovery found: the resource and the
// authorization server it names.
type discovered struct {
	resource string
	asm      *oauthex.AuthServerMeta
}

// discover fetches the protected resource metadata (the challenge's
// resource_metadata, then the well-known URL at the endpoint's path, then
// at its root) and the metadata of the first authorization server it
// names. A server without resource metadata is its own authorization
// server at its origin; one without authorization server metadata has the
// default endpoints under it (both as MCP 2025-03-26 allowed).
func discover(ctx context.Context, hc *http.Client, serverURL string, challenge *http.Response) (*discovered, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	// The candidates are those go-sdk's flow tries, in its order (the
	// first resource_metadata of any challenge), so that its requests are
	// all answered from what this discovery recorded.
	var candidates [][2]string // metadata URL, the resource it must name
	if cs, err := oauthex.ParseWWWAuthenticate(challenge.Header.Values("WWW-Authenticate")); err == nil {
		for _, c := range cs {
			if m := c.Params["resource_metadata"]; m != "" {
				candidates = append(candidates, [2]string{m, serverURL})
				break
			}
		}
	}
	at := *u
	at.RawQuery, at.Fragment = "", ""
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	candidates = append(candidates, [2]string{at.String(), serverURL})
	at.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	candidates = append(candidates, [2]string{at.String(), root.String()})

	var prm *oauthex.ProtectedResourceMetadata
	rec := &statusRecorder{inner: hc.Transport}
	phc := *hc
	phc.Transport = rec
	for _, c := range candidates {
		rec.reset()
		p, err := oauthex.GetProtectedResourceMetadata(ctx, c[0], c[1], &phc)
		if err == nil && p != nil {
			prm = p
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !rec.absent() {
			// A document that is there but unusable (over its bound, slow,
			// redirecting, invalid, naming an insecure server) fails
			// closed: only an absent one lets discovery go on.
			return nil, errors.New("oauth: unusable resource metadata")
		}
	}
	if prm == nil {
		prm = &oauthex.ProtectedResourceMetadata{Resource: serverURL, AuthorizationServers: []string{root.String()}}
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, errors.New("oauth: no authorization server")
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	if err != nil {
		return nil, err
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize",
			TokenEndpoint: issuer + "/token", RegistrationEndpoint: issuer + "/register"}
	}
	for _, e := range []string{asm.AuthorizationEndpoint, asm.TokenEndpoint} {
		eu, err := url.Parse(e)
		if err != nil || !secureURL(eu) {
			return nil, errInsecureURL
		}
	}
	return &discovered{resource: prm.Resource, asm: asm}, nil
}

// statusRecorder remembers how the requests of one fetch ended, so that
// discovery tells an absent document (answered 4xx) from one that is there
// but unusable, and a refresh tells an authorization server that answered
// from one that could not be reached.
type statusRecorder struct {
	inner http.RoundTripper
	mu    sync.Mutex
	last  int  // the status of the last answer, 0 before one
	fault bool // a request failed without an answer
}

func (r *statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.inner.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.fault = true
	} else {
		r.last = resp.StatusCode
	}
	return resp, err
}

func (r *statusRecorder) reset() {
	r.mu.Lock()
	r.last, r.fault = 0, false
	r.mu.Unlock()
}

// answered reports whether any request of the fetch got an answer.
func (r *statusRecorder) answered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last != 0
}

// absent reports whether the fetch ended with a 4xx answer and no fault.
func (r *statusRecorder) absent() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.fault && r.last >= 400 && r.last < 500
}

// metadataMemo carries Login's requests: while recording (discovery), it
// keeps the answer of each GET (status, the headers a metadata fetch
// reads, the body, bounded by the transport below); once replaying (the
// authorization flow), it answers each GET from what it kept and fails
// any GET it did not see, so that no metadata is fetched twice and none
// the discovery did not check is used. Other requests (registration,
// token) go to the network.
type metadataMemo struct {
	inner http.RoundTripper

	mu        sync.Mutex
	replaying bool
	seen      map[string]*memoAnswer
}

type memoAnswer struct {
	status int
	header http.Header
	body   []byte
}

var errNotDiscovered = errors.New("oauth: metadata the discovery did not fetch")

// replay ends recording.
func (m *metadataMemo) replay() {
	m.mu.Lock()
	m.replaying = true
	m.mu.Unlock()
}

func (m *metadataMemo) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return m.inner.RoundTrip(req)
	}
	key := req.URL.String()
	m.mu.Lock()
	replaying, a := m.replaying, m.seen[key]
	m.mu.Unlock()
	if replaying {
		if a == nil {
			return nil, errNotDiscovered
		}
		return &http.Response{Status: http.StatusText(a.status), StatusCode: a.status, Proto: "HTTP/1.1", ProtoMajor: 1,
			ProtoMinor: 1, Header: a.header.Clone(), Body: io.NopCloser(bytes.NewReader(a.body)),
			ContentLength: int64(len(a.body)), Request: req}, nil
	}
	resp, err := m.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, k := range []string{"Content-Type", "Location"} {
		if v := resp.Header.Values(k); len(v) > 0 {
			h[k] = append([]string(nil), v...)
		}
	}
	m.mu.Lock()
	if m.seen == nil {
		m.seen = map[string]*memoAnswer{}
	}
	m.seen[key] = &memoAnswer{status: resp.StatusCode, header: h, body: body}
	m.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// callback is Login's loopback redirect listener. It takes only the
// answer that carries the state of the authorization it sent the user
// to: any other request (another local process or a web page that found
// the port) is answered 400 and the listener keeps waiting.
type callback struct {
	redirect string
	srv      *http.Server
	done     chan struct{}
	results  chan *auth.AuthorizationResult // one answer, nil when denied

	mu    sync.Mutex
	state string // the expected state; "" before the authorization URL is known
}

// expect sets the state the answer must carry.
func (cb *callback) expect(state string) {
	cb.mu.Lock()
	cb.state = state
	cb.mu.Unlock()
}

// ours reports whether state is the expected one.
func (cb *callback) ours(state string) bool {
	cb.mu.Lock()
	want := cb.state
	cb.mu.Unlock()
	return want != "" && subtle.ConstantTimeCompare([]byte(state), []byte(want)) == 1
}

// listenCallback listens on 127.0.0.1:port (0: any free port).
func listenCallback(port int) (*callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	cb := &callback{redirect: fmt.Sprintf("http://%s/callback", ln.Addr()), done: make(chan struct{}),
		results: make(chan *auth.AuthorizationResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !cb.ours(q.Get("state")) {
			http.Error(w, "purramcp: not the answer this sign-in waits for.", http.StatusBadRequest)
			return
		}
		var res *auth.AuthorizationResult
		if q.Get("error") == "" && q.Get("code") != "" {
			res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		}
		select {
		case cb.results <- res:
		default: // one answer only
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if res == nil {
			_, _ = io.WriteString(w, "purramcp: the authorization was not granted. You can close this window.\n")
			return
		}
		_, _ = io.WriteString(w, "purramcp: signed in. You can close this window.\n")
	})
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() {
		defer close(cb.done)
		_ = cb.srv.Serve(ln)
	}()
	return cb, nil
}

// wait returns the redirect's answer, errDenied for an error answer, or
// ctx's error.
func (cb *callback) wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	select {
	case res := <-cb.results:
		if res == nil {
			return nil, errDenied
		}
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops the listener and waits for it.
func (cb *callback) close() {
	_ = cb.srv.Close()
	<-cb.done
}

// authStyleName is the Credentials.AuthStyle of s.
func authStyleName(s oauth2.AuthStyle) string {
	switch s {
	case oauth2.AuthStyleInHeader:
		return "header"
	case oauth2.AuthStyleInParams:
		return "params"
	}
	return ""
}

// authStyle is the oauth2.AuthStyle of a Credentials.AuthStyle.
func authStyle(name string) oauth2.AuthStyle {
	switch name {
	case "header":
		return oauth2.AuthStyleInHeader
	case "params":
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// grantedScopes are the token's scope (RFC 6749 §5.1), else requested.
func grantedScopes(tok *oauth2.Token, requested []string) []string {
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		return strings.Fields(s)
	}
	return append([]string(nil), requested...)
}
