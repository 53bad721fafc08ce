package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/testvalues"
)

// differentialLimits are the three limit settings of
// TestDigestOf_MatchesSnapshot.
var differentialLimits = []strictjson.Limits{
	{Depth: 64, Nodes: 65536, Bytes: 1 << 20}, {Depth: 2, Nodes: 9, Bytes: 100}, {Depth: 1, Nodes: 4, Bytes: 40},
}

// differentialCheck compares, for one decoded value under lim, DigestOf
// (the walk feeding the encoder's fast paths) and PreImage / Digest of its
// snapshot (Emit feeding them) with the reference encoder over the same
// snapshot.
func differentialCheck(t *testing.T, v any, lim strictjson.Limits, what string) {
	snap, serr := strictjson.Snapshot(v, lim)
	d, derr := DigestOf(v, lim)
	if serr != nil {
		require.Error(t, derr, "%s under %+v: DigestOf accepts what Snapshot rejects", what, lim)
		require.Empty(t, d, what)
		return
	}
	require.NoError(t, derr, "%s under %+v", what, lim)
	ref := refPreImage(snap)
	require.Equal(t, string(ref), string(PreImage(snap)), "%s: pre-image", what)
	sum := sha256.Sum256(ref)
	want := hex.EncodeToString(sum[:])
	require.Equal(t, want, Digest(snap), "%s: Digest", what)
	require.Equal(t, want, d, "%s under %+v: DigestOf", what, lim)
}

// TestPreImage_EncoderMatchesReference: on random decoded values at three limit
// settings, and on long strings that cross the stream buffer at every
// alignment, the encoder's pre-image and digests equal the reference
// encoder's.
func TestPreImage_EncoderMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 5000 {
		v := testvalues.Random(r, 4)
		for _, lim := range differentialLimits {
			differentialCheck(t, v, lim, fmt.Sprintf("random value %d", i))
		}
	}
	big := strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20}
	for _, n := range []int{bufferSize/2 - 40, bufferSize/2 - 1, bufferSize / 2, bufferSize + 3, 3*bufferSize + 7} {
		for shift := range 9 {
			s := strings.Repeat("é", n/2) + strings.Repeat("\x7f", shift)
			differentialCheck(t, []any{strings.Repeat("x", shift), s, 1.5, s}, big, "long string")
		}
	}
	for n := range 21 { // every short-string length, every ASCII byte, some multi-byte text
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(128))
		}
		differentialCheck(t, map[string]any{string(b): string(b), "é" + string(b): strings.Repeat("😀", n%3)}, big,
			fmt.Sprintf("short strings of %d bytes", n))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, math.MaxFloat64, math.SmallestNonzeroFloat64, 1<<53 - 1} {
		differentialCheck(t, f, big, "number")
	}
	counts := make([]any, 0, 1200)
	for n := range 1200 {
		counts = append(counts, make([]any, n%150))
	}
	differentialCheck(t, counts, big, "array lengths 0–149")
	for _, n := range []int{9, 10, 11, 12, 13, 99, 100, 150} {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprintf("k%03d", (i*37)%n)] = i
		}
		differentialCheck(t, m, big, fmt.Sprintf("object of %d members", n))
	}
}

// TestPreImage_RepeatedNamesMatchReference: arrays of records whose names repeat,
// change and repeat again (the walk's reuse and the encoder's name memos),
// with names of every length around memoMax, multi-byte and array-index
// names, decoded from JSON, give the reference encoder's pre-image and
// digests; under node and byte limits that end the walk at every point of
// the value, DigestOf fails exactly where Snapshot does.
func TestPreImage_RepeatedNamesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	name := func() string {
		switch r.IntN(4) {
		case 0:
			return strings.Repeat("n", memoMax-2+r.IntN(5)) // memoMax−2 … memoMax+2 bytes
		case 1:
			return []string{"0", "7", "10", "é", "😀k", "a\"b", "\u0001"}[r.IntN(7)]
		default:
			return fmt.Sprintf("k%d", r.IntN(40))
		}
	}
	for i := range 300 {
		shapes := make([][]string, 1+r.IntN(3))
		for j := range shapes {
			for range 3 + r.IntN(6) {
				shapes[j] = append(shapes[j], name())
			}
		}
		records := make([]any, 2+r.IntN(10))
		for j := range records {
			rec := map[string]any{}
			for _, k := range shapes[r.IntN(len(shapes))] {
				rec[k] = float64(j)
			}
			if r.IntN(3) == 0 { // a nested record of its own shape, one level down
				inner := map[string]any{}
				for _, k := range shapes[0] {
					inner[k] = strings.Repeat("v", j)
				}
				rec[shapes[0][0]] = inner
			}
			records[j] = rec
		}
		text, err := json.Marshal(map[string]any{"entries": records})
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal(text, &v))
		what := fmt.Sprintf("records %d", i)
		differentialCheck(t, v, strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20}, what)
		m, err := strictjson.MeasureOf(v, strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20})
		require.NoError(t, err)
		exact := strictjson.Limits{Depth: 64, Nodes: m.Nodes, Bytes: m.Bytes} // MeasureOf's walk reuses nothing
		_, err = DigestOf(v, exact)
		require.NoError(t, err, "%s at exactly its measure", what)
		for _, tight := range []strictjson.Limits{{Depth: 64, Nodes: m.Nodes - 1, Bytes: m.Bytes}, {Depth: 64, Nodes: m.Nodes, Bytes: m.Bytes - 1}} {
			_, err = DigestOf(v, tight)
			require.Error(t, err, "%s under %+v, one below its measure", what, tight)
		}
		for range 8 {
			differentialCheck(t, v, strictjson.Limits{Depth: 64, Nodes: 1 + r.IntN(m.Nodes), Bytes: 1 << 20}, what)
			differentialCheck(t, v, strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 + r.IntN(m.Bytes)}, what)
		}
	}
}

// FuzzEncoder compares the encoder with the reference encoder on fuzzed
// JSON text, as json.RawMessage and decoded by encoding/json, seeded with
// every vector text (the texts FuzzIdentityDigest is seeded with).
func FuzzEncoder(f *testing.F) {
	seeds, err := testvalues.VectorTexts(filepath.Join("..", "..", "testdata"))
	require.NoError(f, err)
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
			for _, lim := range differentialLimits {
				differentialCheck(t, v, lim, text)
			}
		}
	})
}
