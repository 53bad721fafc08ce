// Package cache holds the caches of one monitor's session: the compiled
// remote schemas (Schemas) and the last catalog's revision digest (Digest).
// Each lives in the CatalogMonitor, has its own lock and is emptied for good
// when the monitor closes.
package cache

import (
	"hash/maphash"
	"math"
	"math/bits"
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
	h, ok := hashSchema(seed, root, 0)
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
		if sameSchema(root, e.Snap) {
			return e
		}
	}
	for _, e := range prev {
		if sameSchema(root, e.Snap) {
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

// Tags that keep the kinds of value apart in hashSchema.
const (
	hashNull   = 0x6a09e667f3bcc908
	hashFalse  = 0xbb67ae8584caa73b
	hashTrue   = 0x3c6ef372fe94f82b
	hashNumber = 0xa54ff53a5f1d36f1
	hashString = 0x510e527fade682d1
	hashArray  = 0x9b05688c2b3e6c1f
	hashObject = 0x1f83d9abfb41bd6b
)

// hashSchema hashes a decoded JSON value: equal values (numbers compared as
// float64, so −0 equals 0) hash equally, whatever the order of map
// iteration. It reports false for any other kind of value and below
// HashDepth.
func hashSchema(seed maphash.Seed, v any, depth int) (uint64, bool) {
	if depth > HashDepth {
		return 0, false
	}
	switch x := v.(type) {
	case nil:
		return hashNull, true
	case bool:
		if x {
			return hashTrue, true
		}
		return hashFalse, true
	case float64:
		if x == 0 {
			x = 0 // −0 is 0
		}
		return mix64(math.Float64bits(x) ^ hashNumber), true
	case string:
		return maphash.String(seed, x) ^ hashString, true
	case []any:
		h := uint64(hashArray) + uint64(len(x))
		for _, item := range x {
			ih, ok := hashSchema(seed, item, depth+1)
			if !ok {
				return 0, false
			}
			h = mix64(h ^ ih)
		}
		return h, true
	case map[string]any:
		h := uint64(hashObject) + uint64(len(x))
		for k, item := range x {
			ih, ok := hashSchema(seed, item, depth+1)
			if !ok {
				return 0, false
			}
			h += mix64(maphash.String(seed, k) ^ bits.RotateLeft64(ih, 29)) // order-independent
		}
		return mix64(h), true
	}
	return 0, false
}

// mix64 is the splitmix64 finalizer.
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// sameSchema reports whether the decoded value v equals the snapshot s
// exactly: the same members and elements, equal strings, booleans and
// numbers (as float64: a snapshot holds 0 for −0, as the snapshot of v
// would). The walk follows s, whose depth its limits bound.
func sameSchema(v, s any) bool {
	switch x := s.(type) {
	case nil:
		return v == nil
	case bool:
		y, ok := v.(bool)
		return ok && y == x
	case float64:
		y, ok := v.(float64)
		return ok && y == x
	case string:
		y, ok := v.(string)
		return ok && y == x
	case []any:
		y, ok := v.([]any)
		if !ok || len(y) != len(x) {
			return false
		}
		for i := range x {
			if !sameSchema(y[i], x[i]) {
				return false
			}
		}
		return true
	case *strictjson.Object:
		y, ok := v.(map[string]any)
		if !ok || len(y) != len(x.Keys) {
			return false
		}
		for i, k := range x.Keys {
			item, ok := y[k]
			if !ok || !sameSchema(item, x.Values[i]) {
				return false
			}
		}
		return true
	}
	return false
}
