package oauth

import (
	"net/url"
	"strings"
)

// A Config is how the OAuth 2.1 client of one http server registers
// with the server's authorization server and what it asks for. The zero
// value (or a nil *Config) registers dynamically (RFC 7591) and asks
// for the scopes the server's challenge names, else those its resource
// metadata lists, else none: what a server entry with only a url needs.
type Config struct {
	// ClientID is a client registered beforehand with the authorization
	// server; "" registers one (a client ID metadata document when
	// ClientMetadataURL is set and the server supports them, else
	// dynamic registration).
	ClientID string
	// ClientSecret is ClientID's secret, for a confidential client; it
	// needs ClientID. (A fleet config file may only give it as an
	// ${env:NAME} reference.)
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

// A FieldError is a [Config] field that [Config.Validate] refused.
type FieldError struct {
	// Field is the field's JSON name ("clientId", "scopes", ...).
	Field string
	// Index is the refused element of a list field, -1 for none.
	Index int
	// Reason says what is wrong, without the value.
	Reason string
}

// Error names the field and the reason.
func (e *FieldError) Error() string { return "oauth: config " + e.Field + ": " + e.Reason }

// Validate checks c: a secret needs a client ID, a client ID is 1 to 1024
// printable ASCII bytes, the client metadata URL is https with a path,
// each scope is a scope token ([ValidScope]), and the redirect port is a
// port. A nil c is valid (the defaults). The error is a *FieldError.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return &FieldError{Field: "clientSecret", Index: -1, Reason: "clientSecret without clientId"}
	}
	if c.ClientID != "" && (len(c.ClientID) > 1024 || !printable(c.ClientID)) {
		return &FieldError{Field: "clientId", Index: -1, Reason: "not a client id"}
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
			return &FieldError{Field: "clientMetadataUrl", Index: -1, Reason: "not an https URL with a path"}
		}
	}
	for i, s := range c.Scopes {
		if !ValidScope(s) {
			return &FieldError{Field: "scopes", Index: i, Reason: "not a scope token"}
		}
	}
	if c.RedirectPort < 0 || c.RedirectPort > 65535 {
		return &FieldError{Field: "redirectPort", Index: -1, Reason: "out of range"}
	}
	return nil
}

// ValidScope reports whether s is an RFC 6749 scope token of at most 256
// bytes: printable ASCII other than space, '"' and '\\'.
func ValidScope(s string) bool {
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
