package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"purra.dev/purramcp"
)

// metadataPath is where RFC 9728 puts a resource's metadata.
const metadataPath = "/.well-known/oauth-protected-resource"

// protectedResource serves o's resource metadata on mux and returns the
// wrapper of every protected handler: a verified token (401 otherwise; 429
// over a verifier's rate). A tool's scopes are checked inside the session
// (see filterList), where a tool the caller may not see is answered as one
// that does not exist.
func (g *Gateway) protectedResource(mux *http.ServeMux, o OAuthOptions) (func(http.Handler) http.Handler, error) {
	u, err := url.Parse(o.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("gateway: resource %q is not an absolute http(s) URL without a fragment: %w", o.Resource, purramcp.ErrBindingInvalid)
	}
	if o.Issuer == "" {
		return nil, fmt.Errorf("gateway: OAuth needs an issuer: %w", purramcp.ErrBindingInvalid)
	}
	path := metadataPath + strings.TrimSuffix(u.Path, "/")
	metaURL := u.Scheme + "://" + u.Host + path
	meta := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               o.Resource,
		AuthorizationServers:   []string{o.Issuer},
		ScopesSupported:        o.ScopesSupported,
		BearerMethodsSupported: []string{"header"},
	})
	mux.Handle(metadataPath, meta)
	if path != metadataPath {
		mux.Handle(path, meta)
	}
	// go-sdk's middleware answers every refusal; a verifier's rate limit is
	// answered 429 before it, the token verified once.
	bearer := auth.RequireBearerToken(func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		if v, ok := ctx.Value(verifiedKey{}).(*verified); ok {
			return v.info, v.err
		}
		return o.Verify(ctx, token, r)
	}, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL})
	return func(h http.Handler) http.Handler { return limited(o.Verify, bearer(h)) }, nil
}

// verified is a request's token outcome, carried to go-sdk's middleware.
type verified struct {
	info *auth.TokenInfo
	err  error
}

type verifiedKey struct{}

// limited verifies a request's bearer token with verify and answers 429
// with Retry-After when verify says its rate is exceeded
// ([ErrIntrospectionLimited]); any other outcome goes on to next with the
// request.
func limited(verify auth.TokenVerifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := strings.Fields(r.Header.Get("Authorization"))
		if len(fields) == 2 && strings.EqualFold(fields[0], "bearer") {
			info, err := verify(r.Context(), fields[1], r)
			if errors.Is(err, ErrIntrospectionLimited) {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), verifiedKey{}, &verified{info: info, err: err}))
		}
		next.ServeHTTP(w, r)
	})
}
