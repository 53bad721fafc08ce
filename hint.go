package purramcp

import "github.com/modelcontextprotocol/go-sdk/mcp"

// readOnlyHinted reports whether a tool's annotations claim read-only:
// readOnlyHint true and destructiveHint not true
// (DiscoveryOptions.RequireReadOnlyHint). go-sdk decodes an absent
// readOnlyHint as false and keeps an absent destructiveHint as nil.
func readOnlyHinted(a *mcp.ToolAnnotations) bool {
	return a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint)
}
