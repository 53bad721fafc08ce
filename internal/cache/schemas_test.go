package cache

import (
	"encoding/json"
	"strings"
	"testing"

	"purra.dev/purramcp/internal/strictjson"
)

// testSchemas is a Schemas cache of string values under int params.
type testSchemas = Schemas[int, string]

// snapOf returns the snapshot of the decoded schema v.
func snapOf(t *testing.T, v map[string]any) *strictjson.Object {
	t.Helper()
	s, err := strictjson.Snapshot(v, strictjson.Limits{Depth: 64, Nodes: 1 << 20, Bytes: 1 << 24})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*strictjson.Object)
}

// decode returns the decoded JSON object text.
func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSchemas_Collision: an entry stored under another schema's key is
// refused by the deep-equality check, and values outside the decoded shapes
// or deeper than HashDepth bypass the cache (no key).
func TestSchemas_Collision(t *testing.T) {
	var c testSchemas
	a := decode(t, `{"type":"object","properties":{"a":{"type":"string"}}}`)
	b := decode(t, `{"type":"object","properties":{"b":{"type":"string"}}}`)
	key, ok := c.Key(a, 10, 0)
	if !ok {
		t.Fatal("a decoded schema has no key")
	}
	c.Store(key, &Entry[string]{Value: "b", Snap: snapOf(t, b), Size: 10})
	if e := c.Lookup(key, a); e != nil {
		t.Fatal("a colliding entry was taken for a different schema")
	}
	c.Store(key, &Entry[string]{Value: "a", Snap: snapOf(t, a), Size: 10})
	if e := c.Lookup(key, a); e == nil || e.Value != "a" {
		t.Fatalf("the schema's own entry under a shared key: %+v", e)
	}
	if other, _ := c.Key(a, 10, 1); other == key {
		t.Fatal("other params share the key")
	}
	for _, v := range []map[string]any{
		{"type": "object", "maxProperties": 3}, // int: not a decoded shape
		{"type": "object", "maxProperties": json.Number("3")},
	} {
		if _, ok := c.Key(v, 10, 0); ok {
			t.Errorf("%#v has a key: it must bypass the cache", v)
		}
	}
	deep := any("leaf")
	for range HashDepth + 2 {
		deep = []any{deep}
	}
	if _, ok := c.Key(map[string]any{"type": "object", "enum": deep}, 10, 0); ok {
		t.Error("a value deeper than HashDepth has a key")
	}
}

// TestSchemas_Bounded: the cache holds at most two generations of
// GenerationEntries entries and GenerationBytes bytes, keeps the latest
// schemas, and after Close holds nothing, stores nothing and has no key.
func TestSchemas_Bounded(t *testing.T) {
	var c testSchemas
	store := func(c *testSchemas, v map[string]any, size int) (Key[int], *Entry[string]) {
		t.Helper()
		key, ok := c.Key(v, size, 0)
		if !ok {
			t.Fatal("no key")
		}
		e := &Entry[string]{Value: "v", Snap: snapOf(t, v), Size: size}
		c.Store(key, e)
		return key, e
	}
	var lastKey Key[int]
	var last *Entry[string]
	var lastSchema map[string]any
	for i := range 3*GenerationEntries + 7 {
		v := map[string]any{"type": "object", "properties": map[string]any{"p": map[string]any{"type": "string", "maxLength": float64(i)}}}
		lastKey, last = store(&c, v, 100)
		lastSchema = v
		if n := c.count(); n > 2*GenerationEntries {
			t.Fatalf("%d entries cached", n)
		}
	}
	if again := c.Lookup(lastKey, lastSchema); again != last {
		t.Error("the latest schema was not kept")
	}
	// Byte bound: 60 KB schemas fill a generation after GenerationBytes/60 KB.
	var big testSchemas
	desc := strings.Repeat("d", 60_000)
	for i := range 3 * GenerationBytes / 60_000 {
		v := map[string]any{"type": "object", "properties": map[string]any{desc: map[string]any{"type": "string", "maxLength": float64(i)}}}
		store(&big, v, 60_020)
		if b := big.byteCount(); b > 2*GenerationBytes {
			t.Fatalf("%d schema bytes cached", b)
		}
	}
	c.Close()
	if c.count() != 0 || c.Sharing() != nil {
		t.Error("entries or sharing kept after Close")
	}
	c.Store(lastKey, last)
	if c.count() != 0 {
		t.Error("a closed cache stored an entry")
	}
	if _, ok := c.Key(lastSchema, 100, 0); ok {
		t.Error("a closed cache gave a key")
	}
}

// count and byteCount report the entries and schema bytes of both generations.
func (c *Schemas[P, V]) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range []map[Key[P]][]*Entry[V]{c.cur, c.prev} {
		for _, b := range m {
			n += len(b)
		}
	}
	return n
}

func (c *Schemas[P, V]) byteCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range []map[Key[P]][]*Entry[V]{c.cur, c.prev} {
		for _, b := range m {
			for _, e := range b {
				n += e.Size
			}
		}
	}
	return n
}
