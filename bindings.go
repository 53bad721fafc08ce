package purramcp

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

var (
	remoteNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	localNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// A ToolBinding binds one remote tool, by its remote name (the map key given
// to DiscoverTools, which must match ^[A-Za-z0-9_.-]{1,128}$), to a local
// name, a read policy and the host's scope. Any rule below that does not
// hold fails discovery [ErrBindingInvalid] before any request.
type ToolBinding struct {
	// LocalName is the name the core sees: ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
	LocalName string
	// Policy must have Mode "read", RiskLevel "" or "read" and a Title
	// that is valid UTF-8 and not blank under JavaScript's trim() (it is
	// stored trimmed).
	Policy ToolPolicy
	// Scope is required; Unscoped is the explicit opt-out.
	Scope ScopeFunc
	// ConcurrencySafe records the host's declaration (default false).
	ConcurrencySafe bool
}

// binding is a validated, normalized copy of a ToolBinding.
type binding struct {
	remote          string
	local           string
	policy          ToolPolicy
	scope           ScopeFunc
	concurrencySafe bool
}

// copyBindings validates and copies every binding in sorted remote-name order
// (adapter.md §3.3), so map order never changes the outcome.
func copyBindings(bindings map[string]ToolBinding, maxTools int) (map[string]*binding, error) {
	bound := make(map[string]*binding, len(bindings))
	locals := make(map[string]bool, len(bindings))
	for _, remote := range slices.Sorted(maps.Keys(bindings)) {
		b := bindings[remote]
		title := strings.TrimFunc(b.Policy.Title, isJSWhitespace)
		if !remoteNamePattern.MatchString(remote) || !localNamePattern.MatchString(b.LocalName) ||
			b.Policy.Mode != "read" || (b.Policy.RiskLevel != "" && b.Policy.RiskLevel != "read") ||
			title == "" || !utf8.ValidString(title) || b.Scope == nil {
			return nil, fail(CodeBindingInvalid)
		}
		if locals[b.LocalName] {
			return nil, fail(CodeNameConflict)
		}
		locals[b.LocalName] = true
		bound[remote] = &binding{remote: remote, local: b.LocalName, scope: b.Scope,
			policy:          ToolPolicy{Mode: "read", Title: title, RiskLevel: "read"},
			concurrencySafe: b.ConcurrencySafe}
	}
	if len(bound) == 0 || len(bound) > maxTools {
		return nil, fail(CodeBindingInvalid)
	}
	return bound, nil
}

// jsUTF8Len is the length of s as TextEncoder writes it: each invalid byte
// becomes U+FFFD, which is what range yields for it (3 bytes).
func jsUTF8Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf8.RuneLen(r)
	}
	return n
}
