package strictjson

import (
	"hash/maphash"
	"math"
	"math/bits"
)

// Tags that keep the kinds of value apart in this package's hashes (an
// Interner's and HashDecoded's).
const (
	hashNull   = 0x6a09e667f3bcc908
	hashFalse  = 0xbb67ae8584caa73b
	hashTrue   = 0x3c6ef372fe94f82b
	hashNumber = 0xa54ff53a5f1d36f1
	hashString = 0x510e527fade682d1
	hashArray  = 0x9b05688c2b3e6c1f
	hashObject = 0x1f83d9abfb41bd6b
)

// mix is the splitmix64 finalizer.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// HashDecoded hashes a decoded JSON value under seed: equal values (numbers
// compared as float64, so −0 equals 0) hash equally, whatever the order of
// map iteration. It reports false for a value outside the decoded shapes
// (nil, bool, float64, string, []any, map[string]any) and for one nested
// more than maxDepth levels below v. Equal hashes do not make equal values:
// [SameAsSnapshot] confirms.
func HashDecoded(seed maphash.Seed, v any, maxDepth int) (uint64, bool) {
	return hashDecoded(seed, v, 0, maxDepth)
}

// hashDecoded is HashDecoded of v at depth.
func hashDecoded(seed maphash.Seed, v any, depth, maxDepth int) (uint64, bool) {
	if depth > maxDepth {
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
		return mix(math.Float64bits(x) ^ hashNumber), true
	case string:
		return maphash.String(seed, x) ^ hashString, true
	case []any:
		h := uint64(hashArray) + uint64(len(x))
		for _, item := range x {
			ih, ok := hashDecoded(seed, item, depth+1, maxDepth)
			if !ok {
				return 0, false
			}
			h = mix(h ^ ih)
		}
		return h, true
	case map[string]any:
		h := uint64(hashObject) + uint64(len(x))
		for k, item := range x {
			ih, ok := hashDecoded(seed, item, depth+1, maxDepth)
			if !ok {
				return 0, false
			}
			h += mix(maphash.String(seed, k) ^ bits.RotateLeft64(ih, 29)) // order-independent
		}
		return mix(h), true
	}
	return 0, false
}

// SameAsSnapshot reports whether the decoded value v equals the snapshot s
// exactly: the same members and elements, equal strings, booleans and
// numbers (as float64: a snapshot holds 0 for −0, as the snapshot of v
// would). The walk follows s, whose depth its limits bound.
func SameAsSnapshot(v, s any) bool {
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
			if !SameAsSnapshot(y[i], x[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := v.(map[string]any)
		if !ok || len(y) != len(x.Keys) {
			return false
		}
		for i, k := range x.Keys {
			item, ok := y[k]
			if !ok || !SameAsSnapshot(item, x.Values[i]) {
				return false
			}
		}
		return true
	}
	return false
}
