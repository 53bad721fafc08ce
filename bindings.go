package purramcp

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

var (
	// remoteNamePattern matches ^[A-Za-z0-9_.-]{1,128}$.
	remoteNamePattern = newNamePattern("A-Za-z0-9_.-", "A-Za-z0-9_.-", 128)
	// localNamePattern matches ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
	localNamePattern = newNamePattern("A-Za-z_", "A-Za-z0-9_", 64)
)

// namePattern is a regular expression of the form ^[first][rest]{0,max-1}$
// over ASCII classes, matched byte by byte (any other byte, so any
// non-ASCII rune, fails).
type namePattern struct {
	first, rest [256]bool
	max         int
}

// newNamePattern builds a namePattern from two classes written as in a
// regexp bracket: single bytes and ranges a-b.
func newNamePattern(first, rest string, max int) *namePattern {
	p := &namePattern{max: max}
	class := func(t *[256]bool, spec string) {
		for i := 0; i < len(spec); i++ {
			if i+2 < len(spec) && spec[i+1] == '-' {
				for c := spec[i]; c <= spec[i+2]; c++ {
					t[c] = true
				}
				i += 2
				continue
			}
			t[spec[i]] = true
		}
	}
	class(&p.first, first)
	class(&p.rest, rest)
	return p
}

// MatchString reports whether s matches the pattern.
func (p *namePattern) MatchString(s string) bool {
	if len(s) == 0 || len(s) > p.max || !p.first[s[0]] {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !p.rest[s[i]] {
			return false
		}
	}
	return true
}

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
// (the order purra-mcp 1.0.0 checks them in), so map order never changes the outcome.
func copyBindings(bindings map[string]ToolBinding, maxTools int) (map[string]*binding, error) {
	copied := make(map[string]*binding, len(bindings))
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
		copied[remote] = &binding{remote: remote, local: b.LocalName, scope: b.Scope,
			policy:          ToolPolicy{Mode: "read", Title: title, RiskLevel: "read"},
			concurrencySafe: b.ConcurrencySafe}
	}
	if len(copied) == 0 || len(copied) > maxTools {
		return nil, fail(CodeBindingInvalid)
	}
	return copied, nil
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
