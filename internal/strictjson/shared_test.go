package strictjson

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/testvalues"
)

// TestShared_MatchesSnapshot: Shared, the walk that keeps a decoded value
// instead of copying it, fails exactly when Snapshot fails, and otherwise returns a value equal to Own(Snapshot(v)): v itself
// when v is in decoded-Go form, a fresh copy when it is not. Random values
// of every kind, plain decoded values (with −0 planted in some), and every
// vector text, at three limit settings.
func TestShared_MatchesSnapshot(t *testing.T) {
	values := differentialValues(t, 3000)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 3000 {
		v := testvalues.Plain(r, 4)
		if i%5 == 0 {
			v = map[string]any{"plain": v, "zero": math.Copysign(0, -1)}
		}
		values = append(values, v)
	}
	var kept, copied int
	for i, v := range values {
		for _, lim := range walkLimits {
			snap, wantErr := Snapshot(v, lim)
			got, m, err := Shared(v, lim)
			require.Equal(t, wantErr == nil, err == nil, "value %d %#v under %+v: %v, %v", i, v, lim, wantErr, err)
			if err != nil {
				require.Nil(t, got)
				continue
			}
			require.Equal(t, refMeasure(snap), m, "value %d %#v under %+v", i, v, lim)
			want := Own(snap)
			require.Equal(t, want, got, "value %d %#v under %+v", i, v, lim)
			if sameContainer(v, got) {
				require.True(t, decodedForm(v), "value %d kept but not in decoded form", i)
				kept++
			} else if _, isContainer := got.(map[string]any); isContainer {
				require.False(t, decodedForm(v), "value %d in decoded form was copied", i)
				copied++
			}
		}
	}
	require.Greater(t, kept, 1000, "decoded values are kept")
	require.Greater(t, copied, 1000, "other values are copied")
}

// refMeasure is the Measure of a snapshot value by the fuzz tests' independent
// count.
func refMeasure(v any) Measure {
	nodes, _, bytes := fuzzMeasure(v, 0)
	return Measure{Nodes: nodes, Bytes: bytes}
}

// sameContainer reports whether a and b are the same map.
func sameContainer(a, b any) bool {
	x, ok1 := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	return ok1 && ok2 && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

// TestShared_NegativeZeroIsFolded: a decoded −0 anywhere makes Shared copy,
// and the copy holds +0, as Snapshot's does.
func TestShared_NegativeZeroIsFolded(t *testing.T) {
	in := map[string]any{"a": []any{1.0, math.Copysign(0, -1)}}
	got, _, err := Shared(in, roomy)
	require.NoError(t, err)
	require.False(t, sameContainer(in, got))
	require.False(t, math.Signbit(got.(map[string]any)["a"].([]any)[1].(float64)))
	require.True(t, math.Signbit(in["a"].([]any)[1].(float64)), "the input is not modified")
}

// TestAppendKeys_SnapshotOrder: AppendKeys gives a Go map's names in the
// order Snapshot gives its members, after what dst already holds.
func TestAppendKeys_SnapshotOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		m, ok := testvalues.Plain(r, 1).(map[string]any)
		if !ok {
			continue
		}
		snap, err := Snapshot(m, roomy)
		if err != nil {
			continue // 1e300 is an unsafe integer
		}
		got := AppendKeys([]string{"kept"}, m)
		require.Equal(t, append([]string{"kept"}, snap.(*Object).Keys...), got)
	}
	m := map[string]any{"b": 1.0, "10": 1.0, "a": 1.0, "2": 1.0, "01": 1.0, "4294967295": 1.0, "4294967294": 1.0}
	require.Equal(t, []string{"2", "10", "4294967294", "01", "4294967295", "a", "b"}, AppendKeys(nil, m))
}

// decodedForm is the reference for the walk's form check: whether v, which
// Walk accepted, is in decoded-Go form, so that Snapshot would return an
// equal value of the same Go types.
func decodedForm(v any) bool {
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case float64:
		return x != 0 || !math.Signbit(x) // −0 is folded into +0
	case []any:
		for _, item := range x {
			if !decodedForm(item) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, member := range x {
			if !decodedForm(member) {
				return false
			}
		}
		return true
	}
	return false // *Object, json.RawMessage, json.Number and other number kinds
}
