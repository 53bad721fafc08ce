package strictjson

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"purra.dev/purramcp/internal/testvalues"
)

// SnapshotDecoded must return what Snapshot returns, value for value and
// error for error. exactly compares two snapshots more strictly than
// reflect.DeepEqual: the sign of a zero, nil against empty key lists and
// arrays, and the kind of every value count.
func exactly(a, b any) error {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok || math.Float64bits(x) != math.Float64bits(y) {
			return fmt.Errorf("number %v (%T) against %v (%T)", a, a, b, b)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return fmt.Errorf("array %#v against %#v", a, b)
		}
		for i := range x {
			if err := exactly(x[i], y[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case *Object:
		y, ok := b.(*Object)
		if !ok || !reflect.DeepEqual(x.Keys, y.Keys) || (x.Keys == nil) != (y.Keys == nil) ||
			len(x.Values) != len(y.Values) || (x.Values == nil) != (y.Values == nil) ||
			cap(x.Keys) != cap(y.Keys) || cap(x.Values) != cap(y.Values) || (x.index == nil) != (y.index == nil) {
			return fmt.Errorf("object %#v against %#v", a, b)
		}
		for i, k := range x.Keys {
			yv, ok := y.Get(k)
			if !ok {
				return fmt.Errorf("member %q missing", k)
			}
			if xv, _ := x.Get(k); !sameShallowOrExact(xv, x.Values[i]) {
				return fmt.Errorf(".%s: Get disagrees with Values", k)
			}
			if err := exactly(x.Values[i], yv); err != nil {
				return fmt.Errorf(".%s: %w", k, err)
			}
		}
	default:
		if reflect.TypeOf(a) != reflect.TypeOf(b) || a != b {
			return fmt.Errorf("%#v against %#v", a, b)
		}
	}
	return nil
}

// decodedOnly returns v with every kind a decoder never builds replaced by
// one it does (integers and json.Number by float64, raw text by its
// decoding, *Object by a map), keeping the values outside the domain that
// a decoded-shaped value can carry (NaN, ±Inf, unsafe integers, −0,
// invalid UTF-8), so that SnapshotDecoded never falls back on it.
func decodedOnly(v any) any {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return v
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = decodedOnly(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = decodedOnly(item)
		}
		return out
	case *Object:
		out := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			out[k] = decodedOnly(x.Values[i])
		}
		return out
	case json.RawMessage:
		var d any
		if json.Unmarshal(x, &d) != nil {
			return "raw"
		}
		return d
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case float32:
		return float64(x)
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int())
	case rv.CanUint():
		return float64(rv.Uint())
	}
	return "other"
}

// decodedLimits adds, to walkLimits, limits each random value meets at a
// random point.
func decodedLimits(r *rand.Rand) []Limits {
	return append(walkLimits, Limits{Depth: 1 + r.IntN(4), Nodes: 1 + r.IntN(30), Bytes: 1 + r.IntN(300)})
}

func checkDecoded(t *testing.T, v any, lim Limits) {
	t.Helper()
	want, wantErr := Snapshot(v, lim)
	got, err := SnapshotDecoded(v, lim)
	if !reflect.DeepEqual(wantErr, err) {
		t.Fatalf("%#v under %+v: error %v, Snapshot %v", v, lim, err, wantErr)
	}
	if err := exactly(got, want); err != nil {
		t.Fatalf("%#v under %+v: %v", v, lim, err)
	}
}

// TestSnapshotDecoded_MatchesSnapshot: on random values (every rule of the
// domain crossed, with and without kinds only Snapshot takes) and every
// vector text decoded, at tight and roomy limits.
func TestSnapshotDecoded_MatchesSnapshot(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2))
	values := differentialValues(t, 4000)
	for range 4000 {
		values = append(values, decodedOnly(testvalues.Random(r, 5)), testvalues.Plain(r, 5))
	}
	for _, v := range values {
		for _, lim := range decodedLimits(r) {
			checkDecoded(t, v, lim)
			checkDecoded(t, decodedOnly(v), lim)
		}
	}
}

// TestSnapshotDecoded_Hostile: values at and past each limit, and maps too
// wide to iterate, fail as Snapshot fails them.
func TestSnapshotDecoded_Hostile(t *testing.T) {
	wide := make(map[string]any, 5000)
	for i := range 5000 {
		wide[fmt.Sprint("k", i)] = float64(i)
	}
	deep := any("leaf")
	for range 100 {
		deep = map[string]any{"a": []any{deep}}
	}
	long := strings.Repeat("x", 70000)
	for _, v := range []any{wide, deep, long, []any{long}, map[string]any{long: 1.0},
		map[string]any{"a": math.NaN()}, map[string]any{"b": math.Copysign(0, -1)}, []any{1e300, 9007199254740992.0},
		map[string]any{"\xff": 1.0}, map[string]any{"x": []any{"\xed\xa0\x80"}}, map[string]any{}, []any{},
		map[string]any{"a": map[string]any{"b": int64(3)}}, map[string]any{"r": json.RawMessage(`{"a":1,"a":2}`)}} {
		for _, lim := range []Limits{{Depth: 32, Nodes: 4096, Bytes: 65536}, roomy, {Depth: 3, Nodes: 10, Bytes: 100}} {
			checkDecoded(t, v, lim)
		}
	}
}

// FuzzSnapshotDecoded: any JSON text, decoded by encoding/json, snapshots
// alike through both.
func FuzzSnapshotDecoded(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}}}`, `[1,-0,"\u00e9",{"1":2,"0":3}]`,
		`{"a":{"b":{"c":[[[]]]}}}`, `null`, `9007199254740993`} {
		f.Add(s, uint8(3), uint8(20), uint16(200))
	}
	f.Fuzz(func(t *testing.T, text string, depth, nodes uint8, bytes uint16) {
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		for _, lim := range []Limits{roomy, {Depth: int(depth), Nodes: int(nodes), Bytes: int(bytes)}} {
			checkDecoded(t, v, lim)
		}
	})
}

// TestSnapshotShared_MatchesSnapshot: snapshots made through one Interner,
// small enough to start afresh often, equal Snapshot's, value for value
// and error for error, on the random values and vectors above.
func TestSnapshotShared_MatchesSnapshot(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	values := differentialValues(t, 3000)
	for range 3000 {
		values = append(values, decodedOnly(testvalues.Random(r, 5)), testvalues.Plain(r, 5))
	}
	for _, max := range []int{1, 7, 1 << 20} {
		in := NewInterner(max)
		for _, v := range values {
			for _, lim := range decodedLimits(r) {
				for _, v := range []any{v, decodedOnly(v)} {
					want, wantErr := Snapshot(v, lim)
					got, err := SnapshotShared(v, lim, in)
					if !reflect.DeepEqual(wantErr, err) {
						t.Fatalf("%#v under %+v: error %v, Snapshot %v", v, lim, err, wantErr)
					}
					if err := exactly(got, want); err != nil {
						t.Fatalf("%#v under %+v: %v", v, lim, err)
					}
				}
			}
		}
	}
}

// TestSnapshotShared_Shares: equal subtrees of snapshots made through one
// Interner are one object, unequal ones never.
func TestSnapshotShared_Shares(t *testing.T) {
	in := NewInterner(100)
	decode := func(text string) any {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, err := SnapshotShared(decode(`{"p":{"x":{"type":"string"},"y":{"enum":[1,2]},"z":{"type":"string","maxLength":3}}}`), roomy, in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := SnapshotShared(decode(`{"q":{"x":{"type":"string"},"y":{"enum":[1,2]},"z":{"type":"string","maxLength":4}}}`), roomy, in)
	if err != nil {
		t.Fatal(err)
	}
	pa := memberOf(a, "p").(*Object)
	pb := memberOf(b, "q").(*Object)
	if pa == pb {
		t.Fatal("unequal objects shared")
	}
	for _, k := range []string{"x", "y"} {
		if memberOf(pa, k).(*Object) != memberOf(pb, k).(*Object) {
			t.Errorf("equal members %q not shared", k)
		}
	}
	if memberOf(pa, "z").(*Object) == memberOf(pb, "z").(*Object) {
		t.Error("unequal members z shared")
	}
	// The same schema again and again becomes one object, root included,
	// once each level below has been held (an object is kept only when
	// nothing below it was made afresh): here after three more times.
	var last *Object
	for i := range 4 {
		c, err := SnapshotShared(decode(`{"q":{"x":{"type":"string"},"y":{"enum":[1,2]},"z":{"type":"string","maxLength":4}}}`), roomy, in)
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 && c.(*Object) != last {
			t.Fatal("equal snapshot not shared")
		}
		last = c.(*Object)
	}
}

// TestInterner_Confirms: an object held under a hash is taken only when
// its members really are equal; a hash collision costs a new object, never
// a wrong one.
func TestInterner_Confirms(t *testing.T) {
	in := NewInterner(10)
	child := NewObject([]string{}, []any{})
	held := NewObject([]string{"a", "b"}, []any{"x", child})
	in.keep(42, held)
	ms := []member{{key: "a"}, {key: "b"}}
	if in.find(42, ms, []any{"x", child}) != held {
		t.Fatal("equal members not found")
	}
	for _, vals := range [][]any{{"y", child}, {"x", NewObject([]string{}, []any{})}, {1.0, child},
		{nil, child}, {[]any{"x"}, child}} {
		if in.find(42, ms, vals) != nil {
			t.Errorf("members %#v taken for %#v", vals, held.Values)
		}
	}
	if in.find(42, ms[:1], []any{"x"}) != nil || in.find(43, ms, []any{"x", child}) != nil {
		t.Error("wrong length or hash taken")
	}
	other := NewObject([]string{"c"}, []any{true})
	in.keep(42, other) // taken: the first stays
	if in.find(42, ms, []any{"x", child}) != held {
		t.Error("a colliding object replaced the held one")
	}
	for i := range 20 { // past the bound: starts afresh
		in.keep(uint64(100+i), other)
	}
	if len(in.table) > 10 {
		t.Errorf("interner holds %d objects, bound 10", len(in.table))
	}
}

// TestSnapshotShared_KeepsNoReference: after a snapshot, accepted or
// failed, the Interner's scratch stacks hold no reference to its input or
// its copy.
func TestSnapshotShared_KeepsNoReference(t *testing.T) {
	in := NewInterner(100)
	r := rand.New(rand.NewPCG(14, 7))
	for range 500 {
		v := decodedOnly(testvalues.Random(r, 5))
		_, _ = SnapshotShared(v, decodedLimits(r)[3], in)
		for i, m := range in.members[:cap(in.members)] {
			if m != (member{}) {
				t.Fatalf("member %d kept: %#v", i, m)
			}
		}
		for i, x := range in.values[:cap(in.values)] {
			if x != nil {
				t.Fatalf("value %d kept: %#v", i, x)
			}
		}
	}
}

// memberOf returns the member named key of the object v, or nil.
func memberOf(v any, key string) any {
	m, _ := v.(*Object).Get(key)
	return m
}

// sameShallowOrExact reports whether a and b are the same value: equal
// scalars, or the very same container.
func sameShallowOrExact(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	}
	return a == b
}
