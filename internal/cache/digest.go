package cache

import (
	"slices"
	"sync"
)

// Digest remembers the revision digest of the last catalog discovered over
// a monitor's session, with everything that digest hashes: the server id,
// the protocol version and the catalog's entries in order (E holds what the
// digest hashes of one entry, schema snapshots compared by identity). Equal
// fields mean an equal identity value and so the same digest; anything else
// is digested afresh. It holds one catalog's entries and is emptied when the
// monitor closes. Its zero value is ready.
type Digest[E comparable] struct {
	mu       sync.Mutex
	closed   bool
	serverID string
	protocol string
	entries  []E
	digest   string
}

// Get returns compute's digest of the catalog of entries, or the
// remembered one when the last catalog hashed exactly the same. Only a
// successful digest is remembered, and none once the memo is closed.
func (m *Digest[E]) Get(serverID, protocol string, entries []E, compute func() (string, error)) (string, error) {
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

// Close forgets the remembered catalog for good: the session ended.
func (m *Digest[E]) Close() {
	m.mu.Lock()
	m.closed, m.entries, m.digest = true, nil, ""
	m.mu.Unlock()
}
