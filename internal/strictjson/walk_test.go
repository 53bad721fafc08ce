package strictjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/testvalues"
)

// walkLimits are the three limit settings the differential tests run at:
// roomy, and two tight enough that random values cross every limit.
var walkLimits = []Limits{roomy, {Depth: 2, Nodes: 9, Bytes: 100}, {Depth: 1, Nodes: 4, Bytes: 40}}

// recorder is a Visitor that writes down every item.
type recorder struct{ log []string }

func (r *recorder) Null()             { r.log = append(r.log, "n") }
func (r *recorder) Bool(b bool)       { r.log = append(r.log, fmt.Sprint(b)) }
func (r *recorder) Number(f float64)  { r.log = append(r.log, "d"+strconv.FormatFloat(f, 'g', -1, 64)) }
func (r *recorder) String(s string)   { r.log = append(r.log, "s"+strconv.Quote(s)) }
func (r *recorder) BeginArray(n int)  { r.log = append(r.log, "a"+strconv.Itoa(n)) }
func (r *recorder) BeginObject(n int) { r.log = append(r.log, "o"+strconv.Itoa(n)) }
func (r *recorder) Key(k string)      { r.log = append(r.log, "k"+strconv.Quote(k)) }

// memoRecorder is a recorder that takes repeated names through MemoKey,
// keeping each name itself as its memo, and fails t when a memo it is given
// is not the one it kept for that name.
type memoRecorder struct {
	recorder
	t     *testing.T
	memos int // names written from a memo
}

func (r *memoRecorder) MemoKey(k string, memo *[]byte) {
	if len(*memo) > 0 {
		require.Equal(r.t, k, string(*memo), "memo handed with a name")
		r.memos++
	} else {
		*memo = append(*memo, k...)
	}
	r.Key(k)
}

// objectify returns v with some of its maps turned into *Object with their
// names in a random order, the other input kind the walks accept.
func objectify(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = objectify(r, item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = objectify(r, item)
		}
		if r.IntN(2) == 0 {
			return out
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range out {
				if !yield(k) {
					return
				}
			}
		})
		if r.IntN(2) == 0 {
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		}
		values := make([]any, len(keys))
		for i, k := range keys {
			values[i] = out[k]
		}
		return NewObject(keys, values)
	}
	return v
}

// differentialValues returns random values and every vector text, the
// latter both as json.RawMessage and as its encoding/json decoding.
func differentialValues(t *testing.T, n int) []any {
	r := rand.New(rand.NewPCG(1, 2))
	var values []any
	for range n {
		values = append(values, objectify(r, testvalues.Random(r, 4)))
	}
	texts, err := testvalues.VectorTexts(filepath.Join("..", "..", "testdata"))
	require.NoError(t, err)
	for _, text := range texts {
		values = append(values, json.RawMessage(text))
		var std any
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		if dec.Decode(&std) == nil {
			values = append(values, std)
		}
	}
	return values
}

// TestWalk_SnapshotMatchesReference: Snapshot, now the unified walker in
// EnumerationOrder feeding a builder, returns the same value and the same
// error as the Snapshot it replaced, on random values and every vector
// text, at three limit settings.
func TestWalk_SnapshotMatchesReference(t *testing.T) {
	for i, v := range differentialValues(t, 4000) {
		for _, lim := range walkLimits {
			want, wantErr := refSnapshot(v, lim)
			got, err := Snapshot(v, lim)
			require.Equal(t, wantErr, err, "value %d %#v under %+v", i, v, lim)
			require.Equal(t, want, got, "value %d %#v under %+v", i, v, lim)
		}
	}
}

// TestWalk_SortedMatchesReference: the unified walker in SortedOrder feeds
// a visitor exactly what the old WalkSorted fed it and fails with the same
// error; on success that is also the sorted Emit of the Snapshot.
func TestWalk_SortedMatchesReference(t *testing.T) {
	memos := 0
	defer func() { require.Greater(t, memos, 500, "names written from a memo") }()
	for i, v := range differentialValues(t, 4000) {
		for _, lim := range walkLimits {
			var want, got recorder
			wantErr := refWalkSorted(v, lim, &want)
			err := Walk(v, lim, SortedOrder, &got)
			require.Equal(t, wantErr, err, "value %d %#v under %+v", i, v, lim)
			memo := memoRecorder{t: t}
			require.Equal(t, wantErr, Walk(v, lim, SortedOrder, &memo), "value %d with memos under %+v", i, lim)
			memos += memo.memos
			if err != nil {
				continue
			}
			require.Equal(t, want.log, got.log, "value %d %#v under %+v", i, v, lim)
			require.Equal(t, want.log, memo.log, "value %d %#v with memos under %+v", i, v, lim)
			snap, err := Snapshot(v, lim)
			require.NoError(t, err, "value %d: Walk accepted what Snapshot rejects", i)
			var emitted recorder
			Emit(snap, SortedOrder, &emitted)
			require.Equal(t, want.log, emitted.log, "value %d: Emit of the snapshot", i)
		}
	}
}

// TestWalk_OrderedWalksChargeExactly: at exactly the nodes and bytes the
// unordered walk measures (it reuses nothing) and one below either, the
// ordered walks, which reuse the names of sibling maps and their costs,
// accept and reject what the reference walks do, on random values and
// every vector text.
func TestWalk_OrderedWalksChargeExactly(t *testing.T) {
	checked, rejected := 0, 0
	for i, v := range differentialValues(t, 4000) {
		m, err := MeasureOf(v, roomy)
		if err != nil {
			continue
		}
		checked++
		for _, lim := range []Limits{
			{Depth: roomy.Depth, Nodes: m.Nodes, Bytes: m.Bytes},
			{Depth: roomy.Depth, Nodes: m.Nodes - 1, Bytes: m.Bytes},
			{Depth: roomy.Depth, Nodes: m.Nodes, Bytes: m.Bytes - 1},
		} {
			_, wantErr := refSnapshot(v, lim)
			_, err := Snapshot(v, lim)
			require.Equal(t, wantErr, err, "value %d %#v under %+v", i, v, lim)
			require.Equal(t, refWalkSorted(v, lim, &recorder{}), Walk(v, lim, SortedOrder, &recorder{}),
				"value %d %#v under %+v", i, v, lim)
			if err != nil {
				rejected++
			}
		}
	}
	require.Greater(t, checked, 1000, "values within the limits")
	require.Greater(t, rejected, checked, "values rejected one below their measure")
}

// TestWalk_EnumerationOrderEmitsSnapshot: a walk in EnumerationOrder feeds
// what Emit of the Snapshot feeds, item for item.
func TestWalk_EnumerationOrderEmitsSnapshot(t *testing.T) {
	for i, v := range differentialValues(t, 2000) {
		var walked, emitted recorder
		err := Walk(v, roomy, EnumerationOrder, &walked)
		snap, serr := Snapshot(v, roomy)
		require.Equal(t, serr, err, "value %d", i)
		if err == nil {
			Emit(snap, EnumerationOrder, &emitted)
			require.Equal(t, emitted.log, walked.log, "value %d", i)
		}
	}
}

// TestCheckedStringCost: the fused pass equals utf8.ValidString followed by
// StringCost, on every byte at every position of strings around the word
// size and on random strings with invalid sequences.
func TestCheckedStringCost(t *testing.T) {
	check := func(s string) {
		cost, ok := checkedStringCost(s)
		require.Equal(t, utf8.ValidString(s), ok, "%q", s)
		if ok {
			require.Equal(t, StringCost(s), cost, "%q", s)
		}
	}
	for n := 0; n <= 17; n++ {
		for pos := 0; pos < n; pos++ {
			for c := range 256 {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				check(string(b))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = byte(r.IntN(256))
			case 1:
				b[i] = byte(0x80 + r.IntN(64))
			default:
				b[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(string(b))
		check("é😀" + string(b) + "\u2028")
	}
}

// TestHex4 checks Hex4 against strconv on every digit pair in every
// position and on short and bad input, for both argument types.
func TestHex4(t *testing.T) {
	const digits = "0123456789abcdefABCDEFgG/:@`"
	for _, a := range digits {
		for _, b := range digits {
			for _, s := range []string{string(a) + string(b) + "0F", "F0" + string(a) + string(b), "0" + string(a) + string(b) + "1x"} {
				want, err := strconv.ParseUint(s[:4], 16, 32)
				got, ok := Hex4(s)
				assert.Equal(t, err == nil, ok, "%q", s)
				gotBytes, okBytes := Hex4([]byte(s))
				assert.Equal(t, ok, okBytes, "%q as bytes", s)
				assert.Equal(t, got, gotBytes, "%q as bytes", s)
				if err == nil {
					assert.Equal(t, rune(want), got, "%q", s)
				}
			}
		}
	}
	for _, s := range []string{"", "0", "00", "000", "+123", "-123", " 123"} {
		_, ok := Hex4(s)
		assert.False(t, ok, "%q", s)
	}
}

// FuzzWalk compares the unified walker with the walks it replaced on
// fuzzed JSON text, both as json.RawMessage and decoded by encoding/json.
func FuzzWalk(f *testing.F) {
	seeds := fuzzVectorSeeds(f)
	require.GreaterOrEqual(f, len(seeds), 62+10, "vector seeds")
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		values := []any{json.RawMessage(text)}
		var std any
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		if dec.Decode(&std) == nil {
			values = append(values, std)
		}
		for _, v := range values {
			for _, lim := range append(walkLimits, fuzzTight) {
				want, wantErr := refSnapshot(v, lim)
				got, err := Snapshot(v, lim)
				require.Equal(t, wantErr, err, "%q under %+v", text, lim)
				require.Equal(t, want, got, "%q under %+v", text, lim)
				var wantLog, gotLog recorder
				require.Equal(t, refWalkSorted(v, lim, &wantLog), Walk(v, lim, SortedOrder, &gotLog), "%q", text)
				require.Equal(t, wantLog.log, gotLog.log, "%q under %+v", text, lim)
			}
		}
	})
}
