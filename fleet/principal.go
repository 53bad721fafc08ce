package fleet

import (
	"context"
	"slices"

	"purra.dev/purramcp"
)

// A Principal is the verified caller of a call: who it is and the scopes
// its credentials grant, as an authenticating front end (the purramcp
// gateway, which takes both from a verified OAuth access token) found
// them. It travels in the call's context ([WithPrincipal]) to every
// ScopeFunc, so a host's own rule can decide per user.
type Principal struct {
	// Subject identifies the caller (a token's "sub"); it may be logged,
	// unlike the credentials it was read from.
	Subject string
	// Scopes are the granted scopes.
	Scopes []string
}

// principalKey is the context key of a Principal.
type principalKey struct{}

// WithPrincipal returns ctx carrying p. The fleet never reads the
// credentials behind p: whoever calls WithPrincipal has verified them.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	p.Scopes = slices.Clone(p.Scopes)
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal ctx carries, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Grants reports whether p holds every scope of required (an empty
// required is always granted).
func (p Principal) Grants(required []string) bool {
	for _, s := range required {
		if !slices.Contains(p.Scopes, s) {
			return false
		}
	}
	return true
}

// Granted is the tool-scope rule: whether p, the verified caller (nil when
// there is none), may call a tool that requires the scopes required. An
// empty required is granted to every caller, a Principal or not; a
// non-empty one only to a Principal holding every scope of it, never to a
// call without one (fail closed). The fleet's registrations and the
// purramcp gateway's listing and calls all decide with it.
func Granted(p *Principal, required []string) bool {
	if len(required) == 0 {
		return true
	}
	return p != nil && p.Grants(required)
}

// GrantedIn is [Granted] for the Principal ctx carries, if any.
func GrantedIn(ctx context.Context, required []string) bool {
	if p, ok := PrincipalFrom(ctx); ok {
		return Granted(&p, required)
	}
	return Granted(nil, required)
}

// requireScopes returns scope preceded by the tool's required scopes: a
// call whose context does not grant them all is denied
// (purramcp.CodeScopeDenied) before scope runs.
func requireScopes(required []string, scope purramcp.ScopeFunc) purramcp.ScopeFunc {
	if len(required) == 0 {
		return scope
	}
	required = slices.Clone(required)
	return func(ctx context.Context, args map[string]any, call purramcp.ToolContext) error {
		if !GrantedIn(ctx, required) {
			return purramcp.Deny("the caller lacks a scope the tool requires")
		}
		return scope(ctx, args, call)
	}
}
