package purramcp

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/jssize"
	"purra.dev/purramcp/internal/strictjson"
)

// randomSchema returns the JSON text of a random object schema the profile
// mostly accepts (now and then one it rejects: an unknown keyword, a
// negative bound, a deep nesting), with numbers, strings, booleans, arrays
// and nested objects and, sometimes, a root $schema.
func randomSchema(r *rand.Rand) string {
	var prop func(depth int) string
	prop = func(depth int) string {
		switch k := r.IntN(9); {
		case k == 0:
			return fmt.Sprintf(`{"type":"string","minLength":%d,"maxLength":%d}`, r.IntN(3), 3+r.IntN(300))
		case k == 1:
			return fmt.Sprintf(`{"type":"integer","minimum":%d,"maximum":%d}`, -r.IntN(5), r.IntN(1000))
		case k == 2:
			return fmt.Sprintf(`{"type":"number","maximum":%g}`, []float64{0.5, 1e21, -0.25, 3}[r.IntN(4)])
		case k == 3:
			return fmt.Sprintf(`{"enum":["a%d","b",null,true,%d]}`, r.IntN(4), r.IntN(3))
		case k == 4:
			return `{"type":"boolean"}`
		case k == 5:
			return fmt.Sprintf(`{"type":"array","items":%s,"maxItems":%d}`, prop(depth+1), r.IntN(20))
		case k == 6 && r.IntN(6) == 0:
			return `{"type":"string","bogusKeyword":1}` // rejected
		case k == 7 && r.IntN(6) == 0:
			return `{"type":"string","maxLength":-1}` // rejected
		case depth < 3:
			return object(r, depth+1, prop)
		default:
			return `{"type":"null"}`
		}
	}
	s := object(r, 0, prop)
	if r.IntN(4) == 0 {
		s = `{"$schema":"https://json-schema.org/draft/2020-12/schema",` + s[1:]
	}
	return s
}

func object(r *rand.Rand, depth int, prop func(int) string) string {
	s := `{"type":"object","properties":{`
	n := r.IntN(5)
	for i := range n {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(`"p%d_%d":%s`, depth, r.IntN(4)+10*i, prop(depth))
	}
	s += "}"
	if n > 0 && r.IntN(2) == 0 {
		s += fmt.Sprintf(`,"required":["p%d_%d"]`, depth, r.IntN(4))
	}
	if r.IntN(2) == 0 {
		s += `,"additionalProperties":false`
	}
	return s + "}"
}

// decodeSchema decodes text as go-sdk does: numbers as float64, a fresh map.
func decodeSchema(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	return v
}

// sameOutcome fails unless the cached and uncached compiles of one schema
// agree: the same fault, or equal contracts (digests, limits, mode) with
// equal snapshots that validate random values alike.
func sameOutcome(t *testing.T, r *rand.Rand, text string, gotC *Contract, gotS *strictjson.Object, gotErr error,
	wantC *Contract, wantS *strictjson.Object, wantErr error) {
	t.Helper()
	if wantErr != nil || gotErr != nil {
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Fatalf("%s: cached fault %v, uncached %v", text, gotErr, wantErr)
		}
		return
	}
	if identity.Digest(gotS) != identity.Digest(wantS) || !reflect.DeepEqual(strictjson.ToGo(gotS), strictjson.ToGo(wantS)) ||
		!slicesEqual(gotS.Keys, wantS.Keys) {
		t.Fatalf("%s: snapshots differ", text)
	}
	if gotC.ContractDigest() != wantC.ContractDigest() || gotC.SchemaDigest() != wantC.SchemaDigest() ||
		gotC.Limits() != wantC.Limits() || gotC.Mode() != wantC.Mode() {
		t.Fatalf("%s: contracts differ", text)
	}
	for range 8 {
		value := map[string]any{}
		for i := range 4 {
			value[fmt.Sprintf("p0_%d", r.IntN(4)+10*i)] = []any{"x", 3.0, -1.0, true, nil, []any{"a"}, map[string]any{}}[r.IntN(7)]
		}
		_, e1 := gotC.ValidateValue(value)
		_, e2 := wantC.ValidateValue(value)
		if !reflect.DeepEqual(e1, e2) {
			t.Fatalf("%s: validation of %v: cached %v, uncached %v", text, value, e1, e2)
		}
	}
}

func slicesEqual(a, b []string) bool { return reflect.DeepEqual(a, b) }

// TestSchemaCache_Differential: for random schemas (accepted and rejected),
// each decoded twice, under two policies and two limit settings, the cached
// path gives what sizedRemoteContract gives, and an equal schema under
// equal limits and policy gets the very same contract and snapshot.
func TestSchemaCache_Differential(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	var c schemaCache
	limits := []Limits{DefaultLimits(), DefaultLimits()}
	limits[1].MaxResultBytes = 4096
	policies := []SchemaPolicy{{}, {DialectEquivalence: true, Annotations: true}}
	accepted := 0
	for i := range 600 {
		text := randomSchema(r)
		lim, pol := limits[i%2], policies[(i/2)%2]
		first, second := decodeSchema(t, text), decodeSchema(t, text)
		size, err := jssize.Size(first)
		if err != nil {
			t.Fatal(err)
		}
		wantC, wantS, wantErr := sizedRemoteContract(first, size, lim, pol)
		gotC, gotS, gotErr := c.remoteContract(first, size, lim, pol)
		sameOutcome(t, r, text, gotC, gotS, gotErr, wantC, wantS, wantErr)
		againC, againS, againErr := c.remoteContract(second, size, lim, pol)
		sameOutcome(t, r, text, againC, againS, againErr, wantC, wantS, wantErr)
		if wantErr == nil {
			accepted++
			if againC != gotC || againS != gotS {
				t.Fatalf("%s: an equal schema was compiled again", text)
			}
		}
		// The same schema under the other limits or policy is its own entry.
		otherC, _, otherErr := c.remoteContract(second, size, limits[(i+1)%2], pol)
		if otherErr == nil && otherC == gotC {
			t.Fatalf("%s: a contract shared across limits", text)
		}
	}
	if accepted < 300 {
		t.Fatalf("only %d of 600 random schemas accepted: the generator no longer exercises the cache", accepted)
	}
}

// TestSchemaCache_NearMisses: schemas that differ from a cached one in one
// place (a number, a string, a boolean against a number, a member added or
// removed, an array element, the $schema declaration) never get its
// contract; −0 and 0, and another member order, do.
func TestSchemaCache_NearMisses(t *testing.T) {
	var c schemaCache
	base := `{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",1,true]}},"required":["a"]}`
	lim := DefaultLimits()
	compile := func(text string) (*Contract, *strictjson.Object) {
		t.Helper()
		v := decodeSchema(t, text)
		size, _ := jssize.Size(v)
		got, snap, err := c.remoteContract(v, size, lim, SchemaPolicy{})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		want, wantSnap, _ := sizedRemoteContract(v, size, lim, SchemaPolicy{})
		if got.ContractDigest() != want.ContractDigest() || identity.Digest(snap) != identity.Digest(wantSnap) {
			t.Fatalf("%s: cached contract differs from its own compile", text)
		}
		return got, snap
	}
	baseC, baseS := compile(base)
	for _, same := range []string{
		`{"required":["a"],"properties":{"b":{"enum":["x",1,true]},"a":{"maximum":5,"type":"integer"}},"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5.0},"b":{"enum":["x",1e0,true]}},"required":["a"]}`,
	} {
		if c2, s2 := compile(same); c2 != baseC || s2 != baseS {
			t.Errorf("%s: an equal schema was not shared", same)
		}
	}
	for _, other := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","maximum":6},"b":{"enum":["x",1,true]}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["y",1,true]}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",1,1]}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",true,1]}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",1,true]}},"required":["b"]}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",1,true]}}}`,
		`{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",1,true]},"c":{}},"required":["a"]}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"enum":["x",1,true]}},"required":["a"]}`,
	} {
		if c2, _ := compile(other); c2 == baseC {
			t.Errorf("%s: shares the contract of a different schema", other)
		}
	}
	// −0 and 0: one snapshot (the snapshot folds −0), so one contract.
	zero := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number", "minimum": 0.0}}}
	negZero := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number", "minimum": math.Copysign(0, -1)}}}
	size, _ := jssize.Size(zero)
	zc, _, err1 := c.remoteContract(zero, size, lim, SchemaPolicy{})
	nc, _, err2 := c.remoteContract(negZero, size, lim, SchemaPolicy{})
	if err1 != nil || err2 != nil || zc != nc {
		t.Errorf("−0 and 0: %v %v, shared %v", err1, err2, zc == nc)
	}
}

// TestSchemaCache_Bypass: a schema outside the decoded shapes bypasses the
// cache and gets what the uncached compile gives.
func TestSchemaCache_Bypass(t *testing.T) {
	var c schemaCache
	lim := DefaultLimits()
	for _, v := range []any{
		map[string]any{"type": "object", "maxProperties": 3}, // int: not a decoded shape
		map[string]any{"type": "object", "maxProperties": json.Number("3")},
	} {
		size, _ := jssize.Size(v)
		c1, s1, e1 := c.remoteContract(v, size, lim, SchemaPolicy{})
		c2, s2, e2 := sizedRemoteContract(v, size, lim, SchemaPolicy{})
		if !reflect.DeepEqual(e1, e2) || (e1 == nil && (c1.ContractDigest() != c2.ContractDigest() || identity.Digest(s1) != identity.Digest(s2))) {
			t.Errorf("%#v: bypass differs from the uncached compile", v)
		}
	}
}
