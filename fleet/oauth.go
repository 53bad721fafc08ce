package fleet

import (
	"net/url"
	"regexp"
	"strings"
)

// An OAuthConfig is how the OAuth 2.1 client of one http server registers
// with the server's authorization server and what it asks for. The zero
// value (or a nil *OAuthConfig) registers dynamically (RFC 7591) and asks
// for the scopes the server's challenge names, else those its resource
// metadata lists, else none: what a server entry with only a url needs.
type OAuthConfig struct {
	// ClientID is a client registered beforehand with the authorization
	// server; "" registers one (a client ID metadata document when
	// ClientMetadataURL is set and the server supports them, else
	// dynamic registration).
	ClientID string
	// ClientSecret is ClientID's secret, for a confidential client. In a
	// config file it may only be an ${env:NAME} reference, so that no
	// secret is written in the file; it needs ClientID.
	ClientSecret string
	// ClientMetadataURL is the https URL (with a path) of this client's
	// ID metadata document, used as its client ID by an authorization
	// server that supports them.
	ClientMetadataURL string
	// Scopes, when set, are the scopes asked for, replacing those of the
	// challenge and of the resource metadata. Each is a scope token: 1 to
	// 256 printable ASCII characters other than space, '"' and '\\'.
	Scopes []string
	// RedirectPort is the loopback port of the redirect URI
	// (http://127.0.0.1:PORT/callback) that purramcp login listens on;
	// 0 means any free port.
	RedirectPort int
}

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

// validate checks oc, found at p.
func (oc *OAuthConfig) validate(p path) error {
	if oc.ClientSecret != "" && oc.ClientID == "" {
		return errAt(p.with("clientSecret"), "clientSecret without clientId")
	}
	if oc.ClientID != "" && (len(oc.ClientID) > 1024 || !printable(oc.ClientID)) {
		return errAt(p.with("clientId"), "not a client id")
	}
	if oc.ClientMetadataURL != "" {
		u, err := url.Parse(oc.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
			return errAt(p.with("clientMetadataUrl"), "not an https URL with a path")
		}
	}
	for i, s := range oc.Scopes {
		if !validScope(s) {
			return errAt(p.with("scopes").with(i), "not a scope token")
		}
	}
	if oc.RedirectPort < 0 || oc.RedirectPort > 65535 {
		return errAt(p.with("redirectPort"), "out of range")
	}
	return nil
}

// validScope reports whether s is an RFC 6749 scope token of at most 256
// bytes.
func validScope(s string) bool {
	return s != "" && len(s) <= 256 && printable(s) && !strings.ContainsAny(s, " \"\\")
}

// printable reports whether s is only bytes 0x20 to 0x7e.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
