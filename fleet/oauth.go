package fleet

import (
	"errors"
	"regexp"

	"purra.dev/purramcp/oauth"
)

// An OAuthConfig is how the OAuth 2.1 client of one http server registers
// with the server's authorization server and what it asks for: see
// [oauth.Config].
type OAuthConfig = oauth.Config

// oauthFields are the members an oauth object may have.
var oauthFields = []string{"clientId", "clientSecret", "clientMetadataUrl", "scopes", "redirectPort"}

// envReference is the only form a clientSecret may take in a config file.
var envReference = regexp.MustCompile(`^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$`)

// parseOAuth decodes an oauth object at p, expanding ${env:NAME}.
func parseOAuth(v any, p path, env *expander) (*OAuthConfig, error) {
	obj, err := fields(v, p, oauthFields...)
	if err != nil {
		return nil, err
	}
	oc := &OAuthConfig{}
	if v, ok := obj["clientId"]; ok {
		if oc.ClientID, err = env.str(v, p.with("clientId")); err != nil {
			return nil, err
		}
	}
	if v, ok := obj["clientSecret"]; ok {
		raw, err := str(v, p.with("clientSecret"))
		if err != nil {
			return nil, err
		}
		if !envReference.MatchString(raw) {
			return nil, errAt(p.with("clientSecret"), "not an ${env:NAME} reference")
		}
		if oc.ClientSecret, err = env.str(v, p.with("clientSecret")); err != nil {
			return nil, err
		}
	}
	if v, ok := obj["clientMetadataUrl"]; ok {
		if oc.ClientMetadataURL, err = env.str(v, p.with("clientMetadataUrl")); err != nil {
			return nil, err
		}
	}
	if v, ok := obj["scopes"]; ok {
		if oc.Scopes, err = stringList(v, p.with("scopes")); err != nil {
			return nil, err
		}
	}
	if v, ok := obj["redirectPort"]; ok {
		if oc.RedirectPort, err = integer(v, p.with("redirectPort"), 0, 65535); err != nil {
			return nil, err
		}
	}
	return oc, nil
}

// validateOAuth checks oc, found at p.
func validateOAuth(oc *OAuthConfig, p path) error {
	var fe *oauth.FieldError
	if err := oc.Validate(); errors.As(err, &fe) {
		q := p.with(fe.Field)
		if fe.Index >= 0 {
			q = q.with(fe.Index)
		}
		return errAt(q, fe.Reason)
	} else if err != nil {
		return errAt(p, err.Error())
	}
	return nil
}

// clientIDOf is oc's ClientID, "" for a nil oc.
func clientIDOf(oc *OAuthConfig) string {
	if oc == nil {
		return ""
	}
	return oc.ClientID
}
