// Package localname derives a host's local tool name from a remote tool
// name: the one rule behind the default bindings InspectCatalog reports and
// the bindings `purramcp inspect --suggest` proposes.
package localname

import "strconv"

// MaxBytes is the longest local name Derive returns.
const MaxBytes = 64

// Derive returns a local name for remote (a non-empty name) that used does
// not hold, and adds it to used: bytes outside [A-Za-z0-9_] become '_', a
// leading digit gets a '_' in front, the name is cut to 64 bytes, and a
// name already in used gets the first free suffix _2, _3, ... (the base cut
// so that the whole stays within 64 bytes).
func Derive(remote string, used map[string]bool) string {
	b := []byte(remote)
	for i, c := range b {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	base := string(b)
	if base != "" && base[0] >= '0' && base[0] <= '9' {
		base = "_" + base
	}
	base = base[:min(len(base), MaxBytes)]
	name := base
	for i := 2; name == "" || used[name]; i++ {
		suffix := "_" + strconv.Itoa(i)
		name = base[:min(len(base), MaxBytes-len(suffix))] + suffix
	}
	used[name] = true
	return name
}
