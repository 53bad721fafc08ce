package strictjson

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOwn_MatchesToGo: Own, the in-place conversion the contracts use for a
// snapshot or parse they own, returns what ToGo returns, on random values and
// every vector text (snapshots and parses), and allocates nothing but one
// member map per object.
func TestOwn_MatchesToGo(t *testing.T) {
	checked := 0
	for i, v := range differentialValues(t, 2000) {
		snap, err := Snapshot(v, roomy)
		if err != nil {
			continue
		}
		want := ToGo(snap)
		require.Equal(t, want, Own(snap), "value %d %#v", i, v)
		checked++
		if raw, ok := v.(json.RawMessage); ok {
			parsed, err := Parse(string(raw), roomy)
			require.NoError(t, err, "the snapshot of %q succeeded", raw)
			require.Equal(t, want, Own(parsed), "parse of %q", raw)
		}
	}
	require.Greater(t, checked, 1900, "most values snapshot under roomy limits")

	text := `{"a":[{"b":[1,2,{"c":null}]},"x",{}],"d":{"e":{"f":[[]]}}}`
	parsed, err := Parse(text, roomy)
	require.NoError(t, err)
	var keys [][]string // each object's member names
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case *Object:
			keys = append(keys, x.Keys)
			for _, item := range x.Values {
				collect(item)
			}
		case []any:
			for _, item := range x {
				collect(item)
			}
		}
	}
	collect(parsed)
	require.Len(t, keys, 6)
	var sink []map[string]any
	allocs := testing.AllocsPerRun(100, func() {
		v, err := Parse(text, roomy)
		if err != nil {
			t.Fatal(err)
		}
		_ = Own(v)
	}) - testing.AllocsPerRun(100, func() {
		if _, err := Parse(text, roomy); err != nil {
			t.Fatal(err)
		}
	})
	maps := testing.AllocsPerRun(100, func() {
		sink = sink[:0]
		for _, names := range keys {
			m := make(map[string]any, len(names))
			for _, k := range names {
				m[k] = nil
			}
			sink = append(sink, m)
		}
	})
	require.Equal(t, maps, allocs, "Own allocates the member maps and nothing else")
}
