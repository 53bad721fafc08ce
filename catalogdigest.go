package purramcp

import (
	"purra.dev/purramcp/internal/cache"
	"purra.dev/purramcp/internal/strictjson"
)

// digestMemo remembers the revision digest of the last catalog discovered
// over a monitor's session (cache.Digest), per entry the names,
// description, policy, ConcurrencySafe and the schema snapshots. Snapshots
// are immutable and compared by identity (the schema cache hands out one
// snapshot per distinct schema).
type digestMemo struct{ cache.Digest[digestEntry] }

// digestEntry is what the revision digest hashes of one entry.
type digestEntry struct {
	remoteName, localName, description string
	input, output                      *strictjson.Object
	policy                             ToolPolicy
	concurrencySafe                    bool
}

// revisionDigest returns compute's digest of the catalog of tools (sorted
// as the catalog lists them), or the remembered one when the last catalog
// hashed exactly the same. Only a successful digest is remembered.
func (m *digestMemo) revisionDigest(serverID, protocol string, tools []*catalogTool,
	compute func() (string, error)) (string, error) {
	entries := make([]digestEntry, len(tools))
	for i, t := range tools {
		b := t.binding
		entries[i] = digestEntry{remoteName: b.remote, localName: b.local, description: t.description,
			input: t.inputSnap, output: t.outputSnap, policy: b.policy, concurrencySafe: b.concurrencySafe}
	}
	return m.Get(serverID, protocol, entries, compute)
}
