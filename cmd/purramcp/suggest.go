package main

import (
	"fmt"
	"maps"
	"slices"

	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/internal/localname"
)

// A suggestion is what `purramcp inspect --suggest` prints: the "tools"
// (and, for a policy other than the default, "policy") members of a
// server's config entry.
type suggestion struct {
	Tools  map[string]boundTool `json:"tools"`
	Policy []string             `json:"policy,omitempty"`
}

// printSuggestion writes the suggestion for report to s.out and every
// tool it leaves out, with the reason (and for a tool a wider policy
// binds, that policy as the config writes it), as comment lines on s.err. A tool
// is suggested only when it binds and says it only reads (readOnlyHint
// true, destructiveHint not true); annotations never grant anything, so a
// tool that does not say so is never proposed. A tool the config already
// binds keeps its local name, title and concurrencySafe; a new one gets a
// local name derived from its remote name that no other binding of the
// config uses.
func printSuggestion(s *streams, target *inspectTarget, report *inspectReport) int {
	sug := suggestion{Tools: map[string]boundTool{}, Policy: fleet.PolicyWords(target.policy)}
	used := maps.Clone(target.taken)
	if used == nil {
		used = map[string]bool{}
	}
	for _, bt := range target.bound {
		used[bt.As] = true
	}
	var left []string
	for _, r := range report.Tools {
		switch {
		case !r.Binds && r.BindsWith != nil:
			left = append(left, fmt.Sprintf("%s: does not bind: %s; binds with %s", shown(r.Name), r.reason(), r.widerPolicy()))
		case !r.Binds:
			left = append(left, fmt.Sprintf("%s: does not bind: %s", shown(r.Name), r.reason()))
		case !r.ReadOnlyHint:
			left = append(left, shown(r.Name)+": not annotated readOnlyHint true")
		case r.DestructiveHint:
			left = append(left, shown(r.Name)+": annotated destructiveHint true")
		default:
			bt, ok := target.bound[r.Name]
			if !ok {
				bt = boundTool{As: localname.Derive(r.Name, used)}
			}
			sug.Tools[r.Name] = bt
		}
	}
	if len(left) > 0 {
		fmt.Fprintln(s.err, "# not suggested: purramcp suggests only tools that bind and are annotated readOnlyHint true, not destructive")
		for _, l := range left {
			fmt.Fprintln(s.err, "#   "+l)
		}
	}
	if len(sug.Tools) == 0 {
		fmt.Fprintln(s.err, "# no tool to suggest")
	}
	if err := writeJSON(s.out, sug); err != nil {
		return exitFail
	}
	return exitOK
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
