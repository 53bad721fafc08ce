package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// metadataPath is where RFC 9728 puts a resource's metadata.
const metadataPath = "/.well-known/oauth-protected-resource"

// protectedResource serves o's resource metadata on mux and returns the
// wrapper of every protected handler: a verified token (401 otherwise),
// then, for a tools/call of a scoped tool, the tool's scopes (403).
func (g *Gateway) protectedResource(mux *http.ServeMux, o OAuthOptions, maxBody int64) (func(http.Handler) http.Handler, error) {
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
	bearer := auth.RequireBearerToken(o.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL})
	return func(h http.Handler) http.Handler {
		if len(g.toolScopes) > 0 {
			h = g.stepUp(h, metaURL, maxBody)
		}
		return bearer(h)
	}, nil
}

// stepUp answers 403 insufficient_scope to a tools/call its caller's token
// lacks the scopes of, naming them, so a client can ask for them, and
// audits it as a refused call (mcp_scope_denied, the caller's subject);
// anything
// else goes on to next with its body intact. A body that is not one
// JSON-RPC request (a batch, a notification, bad JSON) goes on as well:
// the call handler checks the scopes again.
func (g *Gateway) stepUp(next http.Handler, metaURL string, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		info := auth.TokenInfoFromContext(r.Context())
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && !g.visible(info, msg.Params.Name) {
			// Only a scoped tool is refused here, so the name is one the
			// config holds: the audit line carries no client text.
			ctx := r.Context()
			if p, ok := principal(info); ok {
				ctx = fleet.WithPrincipal(ctx, p)
			}
			g.refuse(ctx, msg.Params.Name, "", purramcp.CodeScopeDenied)
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
				strings.Join(g.toolScopes[msg.Params.Name], " "), metaURL))
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
