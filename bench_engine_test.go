package purramcp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/strictjson"
)

// benchIdentityLimits are the limits every identity input must fit
// (schema-profile.md B1.1).
var benchIdentityLimits = strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20}

// benchCatalogEntry is one entry shaped like an MCP catalog snapshot entry
// (schema-profile.md B1.3).
func benchCatalogEntry(i int) map[string]any {
	name := fmt.Sprintf("search_%05d", i)
	str := func(desc string, maxLength int) map[string]any {
		return map[string]any{"type": "string", "description": desc, "minLength": 1, "maxLength": maxLength}
	}
	return map[string]any{
		"remoteName": "docs." + name,
		"localName":  name,
		"description": "Searches shard " + name + " of the document index for entries that match a " +
			"full-text query and returns them ranked, with a snippet around each match. Results are " +
			"read-only and reflect the index as of its last refresh, usually a few minutes old; use " +
			"the cursor from a previous call to page through long result lists, and tags to narrow " +
			"the search to one team, project or document type. Archived documents are excluded unless " +
			"a tag names the archive explicitly. Deleted documents never appear, even in the archive.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":  str("Full-text query; quoted phrases match exactly.", 512),
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
				"tags":   map[string]any{"type": "array", "items": str("Tag name", 64), "uniqueItems": true},
				"cursor": map[string]any{"type": []any{"string", "null"}},
			},
			"required":             []any{"query"},
			"additionalProperties": false,
		},
		"outputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"count": map[string]any{"type": "integer", "minimum": 0},
				"items": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			},
			"required": []any{"count", "items"},
		},
		"policy":          map[string]any{"mode": "read", "title": "Search " + name, "riskLevel": "read"},
		"concurrencySafe": i%3 != 0,
	}
}

// benchMeasure returns the node count and detached bytes of a decoded Go
// value (schema-profile.md A3.4, A3.5).
func benchMeasure(v any) (nodes, bytes int) {
	switch x := v.(type) {
	case nil, bool:
		return 1, 5
	case int, float64:
		return 1, 24
	case string:
		return 1, strictjson.StringCost(x)
	case []any:
		nodes, bytes = 1, 2+2*len(x)
		for _, item := range x {
			n, b := benchMeasure(item)
			nodes, bytes = nodes+n, bytes+b
		}
	case map[string]any:
		nodes, bytes = 1, 2+2*len(x)
		for k, item := range x {
			n, b := benchMeasure(item)
			nodes, bytes = nodes+1+n, bytes+strictjson.StringCost(k)+b
		}
	default:
		panic(fmt.Sprintf("bench: unexpected %T", v))
	}
	return nodes, bytes
}

// benchCatalog returns the largest catalog of benchCatalogEntry entries
// that fits the identity limits, just under 1 MiB of detached bytes.
func benchCatalog(b *testing.B) map[string]any {
	b.Helper()
	entries := []any{}
	catalog := map[string]any{"schemaVersion": 1, "serverId": "bench", "protocolVersion": "2025-11-25", "entries": entries}
	nodes, bytes := benchMeasure(catalog)
	for i := 0; ; i++ {
		e := benchCatalogEntry(i)
		n, by := benchMeasure(e)
		if nodes+n > benchIdentityLimits.Nodes || bytes+by+2 > benchIdentityLimits.Bytes {
			break
		}
		entries = append(entries, e)
		nodes, bytes = nodes+n, bytes+by+2
	}
	catalog["entries"] = entries
	if _, err := strictjson.Snapshot(catalog, benchIdentityLimits); err != nil {
		b.Fatalf("catalog of %d entries (%d nodes, %d bytes) outside the identity limits: %v", len(entries), nodes, bytes, err)
	}
	catalog["entries"] = append(entries, benchCatalogEntry(len(entries)))
	if _, err := strictjson.Snapshot(catalog, benchIdentityLimits); err == nil {
		b.Fatalf("catalog of %d entries is not the largest that fits", len(entries))
	}
	catalog["entries"] = entries
	b.Logf("catalog: %d entries, %d nodes, %d detached bytes", len(entries), nodes, bytes)
	return catalog
}

// BenchmarkIdentityDigest digests a ~1 MiB catalog-shaped value: as a
// decoded Go value (the path DiscoverTools takes), as raw JSON text, and
// the snapshot and encoding stages alone; and 400 small records decoded
// from JSON (decodedRecords, the interleaved harness's digest workload). SetBytes is the pre-image size
// in every case, so MB/s compares directly with BenchmarkSHA256PreImage.
func BenchmarkIdentityDigest(b *testing.B) {
	catalog := benchCatalog(b)
	want, err := purramcp.IdentityDigest(catalog)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(catalog)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := strictjson.Snapshot(catalog, benchIdentityLimits)
	if err != nil {
		b.Fatal(err)
	}
	preImage := int64(len(identity.PreImage(snap)))
	digest := func(b *testing.B, value any) {
		b.SetBytes(preImage)
		b.ReportAllocs()
		for b.Loop() {
			got, err := purramcp.IdentityDigest(value)
			if err != nil || got != want {
				b.Fatalf("IdentityDigest = %q, %v; want %q", got, err, want)
			}
		}
	}
	b.Run("catalog", func(b *testing.B) { digest(b, catalog) })
	b.Run("catalog-raw", func(b *testing.B) { digest(b, json.RawMessage(raw)) })
	b.Run("records", func(b *testing.B) {
		records := decodedRecords(b)
		want, err := purramcp.IdentityDigest(records)
		if err != nil {
			b.Fatal(err)
		}
		snap, err := strictjson.Snapshot(records, benchIdentityLimits)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(identity.PreImage(snap))))
		b.ReportAllocs()
		for b.Loop() {
			if got, err := purramcp.IdentityDigest(records); err != nil || got != want {
				b.Fatalf("IdentityDigest = %q, %v; want %q", got, err, want)
			}
		}
	})
	b.Run("snapshot-only", func(b *testing.B) {
		b.SetBytes(preImage)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := strictjson.Snapshot(catalog, benchIdentityLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-only", func(b *testing.B) {
		b.SetBytes(preImage)
		b.ReportAllocs()
		for b.Loop() {
			if got := identity.Digest(snap); got != want {
				b.Fatalf("identity.Digest = %q; want %q", got, want)
			}
		}
	})
}

// BenchmarkSHA256PreImage is the floor for BenchmarkIdentityDigest: one
// SHA-256 over the same catalog's pre-image, already encoded.
func BenchmarkSHA256PreImage(b *testing.B) {
	catalog := benchCatalog(b)
	digest, err := purramcp.IdentityDigest(catalog)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := strictjson.Snapshot(catalog, benchIdentityLimits)
	if err != nil {
		b.Fatal(err)
	}
	preImage := identity.PreImage(snap)
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], []byte(digest)); err != nil {
		b.Fatal(err)
	}
	sum := func(b *testing.B, preImage []byte, want [sha256.Size]byte) {
		b.SetBytes(int64(len(preImage)))
		b.ReportAllocs()
		for b.Loop() {
			if sha256.Sum256(preImage) != want {
				b.Fatal("SHA-256 of the pre-image is not the identity digest")
			}
		}
	}
	b.Run("catalog", func(b *testing.B) { sum(b, preImage, want) })
	b.Run("records", func(b *testing.B) {
		records := decodedRecords(b)
		snap, err := strictjson.Snapshot(records, benchIdentityLimits)
		if err != nil {
			b.Fatal(err)
		}
		sum(b, identity.PreImage(snap), sha256.Sum256(identity.PreImage(snap)))
	})
}

// benchOutputSchema is a search tool's output schema using most of the
// profile's keywords.
const benchOutputSchema = `{
  "type": "object",
  "properties": {
    "count": {"type": "integer", "minimum": 0},
    "nextCursor": {"type": ["string", "null"], "maxLength": 256},
    "items": {
      "type": "array",
      "maxItems": 1000,
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "minLength": 1, "maxLength": 64},
          "kind": {"enum": ["document", "page", "section", "attachment"]},
          "title": {"type": "string", "maxLength": 200},
          "url": {"type": "string", "maxLength": 2048},
          "score": {"type": "number", "minimum": 0, "maximum": 1},
          "snippet": {"type": "string", "maxLength": 1000},
          "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 16},
          "updated": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
        },
        "required": ["id", "kind", "title", "url", "score"],
        "additionalProperties": false
      }
    }
  },
  "required": ["count", "items"],
  "additionalProperties": false
}`

// benchResult returns a search result whose JSON encoding is about 64 KiB.
func benchResult() map[string]any {
	kinds := []any{"document", "page", "section", "attachment"}
	var items []any
	size := 0
	for i := 0; size < 64<<10-400; i++ {
		item := map[string]any{
			"id":      fmt.Sprintf("doc-%06d", i),
			"kind":    kinds[i%len(kinds)],
			"title":   fmt.Sprintf("Quarterly report %d: revenue, costs and outlook", i),
			"url":     fmt.Sprintf("https://docs.example.com/reports/%06d#summary", i),
			"score":   1 / float64(i+1),
			"snippet": "…the committee approved the budget for the next quarter after reviewing the " + strings.Repeat("figures ", 8) + "…",
			"tags":    []any{"finance", "report", fmt.Sprintf("q%d", i%4+1)},
			"updated": 1700000000 + i,
		}
		if i%5 == 0 {
			item["updated"] = nil
		}
		items = append(items, item)
		b, _ := json.Marshal(item)
		size += len(b) + 1
	}
	return map[string]any{"count": len(items), "nextCursor": "c2VhcmNoLzI", "items": items}
}

// benchUniqueItems returns n distinct objects that differ only in their
// last member in byte order, so every pairwise equality walks the whole
// shared part first (schema-profile.md A8.1).
func benchUniqueItems(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"a": []any{1, 2, 3, 4, 5, 6, 7, 8}, "z": i}
	}
	return map[string]any{"v": items}
}

// BenchmarkValidateValue validates decoded values: a realistic ~64 KiB
// result, and uniqueItems arrays whose O(n²) comparisons would need far
// more than the default ValidationSteps budget (100000), so that the
// budget, not n, bounds the time per op.
func BenchmarkValidateValue(b *testing.B) {
	newContract := func(b *testing.B, schema string) *purramcp.Contract {
		c, err := purramcp.NewContract(purramcp.ContractOptions{
			SchemaID: "bench", SchemaVersion: "1", Schema: json.RawMessage(schema)})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Run("64KiB", func(b *testing.B) {
		c := newContract(b, benchOutputSchema)
		value := benchResult()
		encoded, _ := json.Marshal(value)
		b.SetBytes(int64(len(encoded)))
		b.ReportAllocs()
		for b.Loop() {
			got, err := c.ValidateValue(value)
			if err != nil || len(got) != 3 {
				b.Fatalf("ValidateValue = %d members, %v", len(got), err)
			}
		}
	})
	unique := newContract(b, `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`)
	for _, bc := range []struct {
		name string
		n    int
	}{{"uniqueItems-adversarial", 1000}, {"uniqueItems-adversarial-x4", 4000}} {
		b.Run(bc.name, func(b *testing.B) {
			value := benchUniqueItems(bc.n)
			b.ReportAllocs()
			for b.Loop() {
				_, err := unique.ValidateValue(value)
				var ce *purramcp.ContractError
				if !errors.As(err, &ce) || ce.Code != purramcp.CodeValidationLimitExceeded {
					b.Fatalf("ValidateValue of %d items: %v, want %s", bc.n, err, purramcp.CodeValidationLimitExceeded)
				}
			}
		})
	}
}
