package strictjson

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOwn_MatchesToGo: Own, the in-place conversion the contracts use for a
// snapshot or parse they own, returns what ToGo returns, on random values and
// every vector text (snapshots and parses), and allocates nothing.
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
	require.Zero(t, allocs, "Own allocates nothing beyond the parse")
}
