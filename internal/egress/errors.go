package egress

import "purra.dev/purramcp"

// A Rule names the part of the policy that refused a request.
type Rule string

// The rules.
const (
	// RuleScheme refuses a URL that is neither https nor the configured
	// server's own origin, except loopback http for a loopback server; and
	// a server URL that is not http or https with a host.
	RuleScheme Rule = "scheme"
	// RuleAddress refuses an address more internal than the server's
	// (see [Allows]), or in [ZoneRefused].
	RuleAddress Rule = "address"
	// RuleDowngrade refuses a redirect from https to anything else.
	RuleDowngrade Rule = "downgrade"
	// RuleOrigin refuses a redirect to another origin than the server's,
	// for a client that follows only those ([Policy.CheckOriginRedirect]).
	RuleOrigin Rule = "origin"
	// RuleRedirects refuses a redirect past [MaxRedirects].
	RuleRedirects Rule = "redirects"
)

// An Error is a refusal by a [Policy]. It carries the rule and, for
// RuleAddress, the zone of the refused address; never a URL, host or
// address, so its text holds nothing remote. It unwraps to a
// [*purramcp.Error] with [purramcp.CodeEgressRefused], so
// errors.Is(err, purramcp.ErrEgressRefused) and purramcp.CodeOf hold.
type Error struct {
	// Rule is what refused the request.
	Rule Rule
	// Zone is the refused address's zone for RuleAddress, else
	// ZoneRefused.
	Zone Zone
}

// Error returns a fixed text naming the rule, the zone for RuleAddress,
// and the code.
func (e *Error) Error() string {
	s := "egress: refused by rule " + string(e.Rule)
	if e.Rule == RuleAddress {
		s += " (" + e.Zone.String() + " address)"
	}
	return s + ": " + purramcp.CodeEgressRefused
}

// Unwrap returns a fresh [*purramcp.Error] with CodeEgressRefused.
func (e *Error) Unwrap() error { return &purramcp.Error{Code: purramcp.CodeEgressRefused} }

// refuse returns a fresh *Error.
func refuse(r Rule, z Zone) error { return &Error{Rule: r, Zone: z} }
