// Package cache holds the caches of one monitor's session: the compiled
// remote schemas (Schemas) and the last catalog's revision digest (Digest).
// Each lives in the CatalogMonitor, has its own lock and is emptied for good
// when the monitor closes.
package cache

import (
	"hash/maphash"
	"slices"
	"sync"

	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
)

// Schemas keeps the compiled remote schemas of one monitor's session, so
// that a rediscovery (or a catalog listing one schema under many tools)
// compiles each distinct schema once. P is what else the compiled value
// depends on (the discovery's limits and schema policy) and V the compiled
// value (a contract). Its zero value is ready.
//
// An entry is found by a seeded hash of the decoded schema together with its
// size and P (Key), and then confirmed by deep equality between the decoded
// schema and the entry's snapshot (Lookup): a hash collision costs a
// compile, never a wrong value. A schema outside the decoded-JSON shapes
// (nil, bool, float64, string, []any, map[string]any) bypasses the cache.
// Only accepted schemas are kept (Store); a rejected schema is rejected
// again by the compile itself. Values and snapshots are immutable, so
// sharing them between catalogs shares no mutable state.
//
// The cache is bounded: two generations of at most GenerationEntries
// entries and GenerationBytes schema bytes each. When the current one is
// full it becomes the previous one and the previous one is dropped; an
// entry found in the previous generation moves to the current one.
//
// The schemas compiled through the cache also share equal subtrees: their
// snapshots are made through one strictjson.Interner and compiled through
// one profile.Sharing (Sharing), so an object equal to one an earlier
// schema of the session had (confirmed member by member, never by hash
// alone) is that same immutable object, with its compiled node. Sharing
// changes no outcome, holds at most sharedObjects objects and as many
// nodes, and is dropped with the cache.
type Schemas[P comparable, V any] struct {
	mu        sync.Mutex
	seed      maphash.Seed
	seeded    bool
	closed    bool
	cur, prev map[Key[P]][]*Entry[V]
	entries   int // in cur
	bytes     int // schema bytes in cur
	// sharing lets the schemas compiled through the cache share equal
	// subtrees (one snapshot object, one compiled node each); made on
	// first use, dropped when the cache closes.
	sharing *profile.Sharing
}

// Bounds of one generation of a Schemas cache.
const (
	GenerationEntries = 1024
	GenerationBytes   = 2 << 20
	// bucketEntries caps the entries sharing one key (hash collisions).
	bucketEntries = 4
	// HashDepth is deeper than any schema the profile accepts; a deeper
	// schema is compiled uncached (and rejected).
	HashDepth = 64
	// sharedObjects bounds the subtrees (and compiled nodes) shared
	// between the cache's schemas.
	sharedObjects = 4096
)

// Key is what an entry is found by; deep equality confirms it.
type Key[P comparable] struct {
	hash   uint64
	size   int
	params P
}

// An Entry is one accepted remote schema: its compiled value, its snapshot
// and its size (the schema's jssize size, which counts against
// GenerationBytes).
type Entry[V any] struct {
	Value V
	Snap  *strictjson.Object
	Size  int
}

// Key returns the key of the decoded schema root, of size bytes, under
// params; false when root must bypass the cache (a value outside the
// decoded shapes, deeper than HashDepth) or the cache is closed.
func (c *Schemas[P, V]) Key(root map[string]any, size int, params P) (Key[P], bool) {
	seed, ok := c.seedOf()
	if !ok {
		return Key[P]{}, false
	}
	h, ok := strictjson.HashDecoded(seed, root, HashDepth)
	if !ok {
		return Key[P]{}, false
	}
	return Key[P]{hash: h, size: size, params: params}, true
}

// seedOf returns the cache's hash seed, made on first use; false once the
// cache is closed.
func (c *Schemas[P, V]) seedOf() (maphash.Seed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seeded {
		c.seed, c.seeded = maphash.MakeSeed(), true
	}
	return c.seed, !c.closed
}

// Sharing returns the cache's sharing, made on first use; nil once the
// cache is closed.
func (c *Schemas[P, V]) Sharing() *profile.Sharing {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sharing == nil && !c.closed {
		c.sharing = profile.NewSharing(sharedObjects)
	}
	return c.sharing
}

// Lookup returns the entry under key whose snapshot equals root, or nil.
func (c *Schemas[P, V]) Lookup(key Key[P], root map[string]any) *Entry[V] {
	c.mu.Lock()
	cur, prev := c.cur[key], c.prev[key]
	c.mu.Unlock()
	// Buckets are never modified in place (Store replaces them), so they
	// are compared outside the lock.
	for _, e := range cur {
		if strictjson.SameAsSnapshot(root, e.Snap) {
			return e
		}
	}
	for _, e := range prev {
		if strictjson.SameAsSnapshot(root, e.Snap) {
			c.Store(key, e) // promoted
			return e
		}
	}
	return nil
}

// Store adds e under key to the current generation, turning generations
// over when it is full. It stores nothing once the cache is closed.
func (c *Schemas[P, V]) Store(key Key[P], e *Entry[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if c.cur == nil || c.entries >= GenerationEntries || c.bytes+e.Size > GenerationBytes {
		c.prev, c.cur, c.entries, c.bytes = c.cur, make(map[Key[P]][]*Entry[V]), 0, 0
	}
	bucket := c.cur[key]
	if slices.Contains(bucket, e) {
		return
	}
	if len(bucket) >= bucketEntries {
		bucket = bucket[1:]
	}
	c.cur[key] = append(slices.Clip(bucket), e)
	c.entries++
	c.bytes += e.Size
}

// Close empties the cache for good: the session ended.
func (c *Schemas[P, V]) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed, c.cur, c.prev, c.sharing = true, nil, nil, nil
}
