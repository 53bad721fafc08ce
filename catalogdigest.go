package purramcp

import (
	"slices"
	"sync"

	"purra.dev/purramcp/internal/strictjson"
)

// digestMemo remembers the revision digest of the last catalog discovered
// over a monitor's session, with everything that digest hashes: the server
// id, the protocol version and, per entry in order, the names, description,
// policy, ConcurrencySafe and the schema snapshots. Snapshots are immutable
// and compared by identity (the schema cache hands out one snapshot per
// distinct schema), so equal fields mean an equal identity value and so the
// same digest; anything else is digested afresh. It holds one catalog's
// entries and is emptied when the monitor closes.
type digestMemo struct {
	mu       sync.Mutex
	closed   bool
	serverID string
	protocol string
	entries  []digestEntry
	digest   string
}

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
	m.mu.Lock()
	if m.digest != "" && m.serverID == serverID && m.protocol == protocol && slices.Equal(m.entries, entries) {
		d := m.digest
		m.mu.Unlock()
		return d, nil
	}
	m.mu.Unlock()
	d, err := compute()
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	if !m.closed {
		m.serverID, m.protocol, m.entries, m.digest = serverID, protocol, entries, d
	}
	m.mu.Unlock()
	return d, nil
}

// close forgets the remembered catalog for good: the session ended.
func (m *digestMemo) close() {
	m.mu.Lock()
	m.closed, m.entries, m.digest = true, nil, ""
	m.mu.Unlock()
}
