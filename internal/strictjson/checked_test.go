package strictjson

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/testvalues"
)

// deepestBelow returns how many levels below v its deepest node sits,
// member names one level below their object, as enter counts them.
func deepestBelow(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, item := range x {
			d = max(d, 1+deepestBelow(item))
		}
	case map[string]any:
		for _, item := range x {
			d = max(d, 1+deepestBelow(item))
		}
	}
	return d
}

// eachObject calls f on every *Object in v.
func eachObject(v any, f func(*Object)) {
	switch x := v.(type) {
	case *Object:
		f(x)
		for _, item := range x.Values {
			eachObject(item, f)
		}
	case []any:
		for _, item := range x {
			eachObject(item, f)
		}
	}
}

// decodedSnapshots returns the snapshots SnapshotShared makes of the random
// values, random plain values and vector texts in decoded-Go form it accepts, through one
// Interner (so that some objects are taken from earlier snapshots) and
// through none.
func decodedSnapshots(t *testing.T) []any {
	in := NewInterner(64)
	var out []any
	values := differentialValues(t, 3000)
	r := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		values = append(values, testvalues.Plain(r, 5))
	}
	for _, v := range values {
		if _, decoded, err := measure(v, roomy); err != nil || !decoded {
			continue // Snapshot's walk would copy it
		}
		for _, shared := range []*Interner{nil, in} {
			if s, err := SnapshotShared(v, roomy, shared); err == nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestSnapshotDecoded_MeasuresObjects: every object SnapshotShared makes or
// takes from its Interner carries the measure of its subtree: the nodes and
// bytes the walk counts in it and the depth below it; objects other
// constructors make carry none.
func TestSnapshotDecoded_MeasuresObjects(t *testing.T) {
	objects := 0
	for i, s := range decodedSnapshots(t) {
		eachObject(s, func(o *Object) {
			objects++
			plain := decodedOnly(o)
			m, err := MeasureOf(plain, roomy)
			require.NoError(t, err, "snapshot %d", i)
			require.Equal(t, subtree{nodes: m.Nodes, bytes: m.Bytes, depth: deepestBelow(plain)}, o.measure,
				"snapshot %d, object %v", i, plain)
		})
	}
	require.Greater(t, objects, 2000, "objects measured")
	snap, err := Snapshot(map[string]any{"a": map[string]any{"b": 1.0}}, roomy)
	require.NoError(t, err)
	eachObject(snap, func(o *Object) { require.Zero(t, o.measure, "an object of Snapshot") })
	parsed, err := Parse(`{"a":{"b":1}}`, roomy)
	require.NoError(t, err)
	eachObject(parsed, func(o *Object) { require.Zero(t, o.measure, "an object of Parse") })
}

// TestWalk_CheckedObjectsMatchNodeByNode: a walk over values that hold
// measured objects (alone, twice, and nested in arrays and maps) accepts
// and rejects what the same walk over their plain copies does, node by
// node, and feeds the visitor the same items: in every order, at exactly
// the copy's nodes, bytes and depth and one below each.
func TestWalk_CheckedObjectsMatchNodeByNode(t *testing.T) {
	walks := 0
	for i, s := range decodedSnapshots(t) {
		if _, ok := s.(*Object); !ok {
			continue
		}
		for j, v := range []any{s, []any{1.0, s, "x"}, map[string]any{"a": s, "b": []any{s, true}},
			[]any{[]any{map[string]any{"deep": s}}}} {
			plain := decodedOnly(v)
			m, err := MeasureOf(plain, roomy)
			if err != nil {
				continue // over roomy's limits once doubled
			}
			depth := deepestBelow(plain)
			for _, lim := range []Limits{
				{Depth: depth, Nodes: m.Nodes, Bytes: m.Bytes},
				{Depth: depth - 1, Nodes: m.Nodes, Bytes: m.Bytes},
				{Depth: depth, Nodes: m.Nodes - 1, Bytes: m.Bytes},
				{Depth: depth, Nodes: m.Nodes, Bytes: m.Bytes - 1},
			} {
				what := fmt.Sprintf("snapshot %d, form %d, under %+v", i, j, lim)
				for _, order := range []Order{SortedOrder, EnumerationOrder} {
					var got, want recorder
					err, wantErr := Walk(v, lim, order, &got), Walk(plain, lim, order, &want)
					require.Equal(t, wantErr, err, "%s, order %d", what, order)
					if err == nil {
						require.Equal(t, want.log, got.log, "%s, order %d", what, order)
					}
					walks++
				}
				gotM, err := MeasureOf(v, lim)
				wantM, wantErr := MeasureOf(plain, lim)
				require.Equal(t, wantErr, err, "%s: MeasureOf", what)
				require.Equal(t, wantM, gotM, "%s: MeasureOf", what)
				_, err = Snapshot(v, lim)
				_, wantErr = Snapshot(plain, lim)
				require.Equal(t, wantErr, err, "%s: Snapshot", what)
			}
		}
	}
	require.Greater(t, walks, 20000, "walks compared")
}
