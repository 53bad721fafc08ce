package strictjson

import (
	"encoding/json"
	"hash/maphash"
	"math"
	"testing"
)

// decodedObject decodes text as encoding/json does.
func decodedObject(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestHashDecoded_AndSameAsSnapshot: equal decoded values hash equally
// whatever their member order, −0 hashes as 0, a value outside the decoded
// shapes or deeper than the bound has no hash, and SameAsSnapshot tells
// apart values that differ in one place.
func TestHashDecoded_AndSameAsSnapshot(t *testing.T) {
	seed := maphash.MakeSeed()
	a := decodedObject(t, `{"type":"object","properties":{"a":{"maximum":5},"b":{"enum":["x",1,true]}}}`)
	b := decodedObject(t, `{"properties":{"b":{"enum":["x",1,true]},"a":{"maximum":5.0}},"type":"object"}`)
	snap, err := Snapshot(a, Limits{Depth: 64, Nodes: 1 << 20, Bytes: 1 << 24})
	if err != nil {
		t.Fatal(err)
	}
	ha, okA := HashDecoded(seed, a, 64)
	hb, okB := HashDecoded(seed, b, 64)
	if !okA || !okB || ha != hb || !SameAsSnapshot(b, snap) {
		t.Error("equal schemas differ")
	}
	zero, _ := HashDecoded(seed, 0.0, 64)
	negZero, _ := HashDecoded(seed, math.Copysign(0, -1), 64)
	if zero != negZero {
		t.Error("−0 and 0 hash apart")
	}
	if _, ok := HashDecoded(seed, map[string]any{"n": 1}, 64); ok {
		t.Error("an int member has a hash")
	}
	if _, ok := HashDecoded(seed, a, 3); ok {
		t.Error("a value deeper than the bound has a hash")
	}
	if _, ok := HashDecoded(seed, a, 4); !ok {
		t.Error("a value within the bound has no hash")
	}
	for _, other := range []string{
		`{"type":"object","properties":{"a":{"maximum":6},"b":{"enum":["x",1,true]}}}`,
		`{"type":"object","properties":{"a":{"maximum":5},"b":{"enum":["x",true,1]}}}`,
		`{"type":"object","properties":{"a":{"maximum":5},"b":{"enum":["x",1,1]}}}`,
		`{"type":"object","properties":{"a":{"maximum":5}}}`,
	} {
		if SameAsSnapshot(decodedObject(t, other), snap) {
			t.Errorf("%s equals a different schema", other)
		}
	}
}
