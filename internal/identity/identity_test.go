package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
)

func parse(t *testing.T, text string) any {
	t.Helper()
	v, err := strictjson.Parse(text, strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20})
	require.NoError(t, err, text)
	return v
}

// TestPreImage_Encoding checks worked pre-image examples: scalars and strings, then
// nested arrays and objects.
func TestPreImage_Encoding(t *testing.T) {
	cases := map[string]string{
		`{"type":"object"}`: "o1:s4:74797065s6:6f626a656374",
		`{"b":1,"a":2}`:     "o2:s1:61d4000000000000000s1:62d3ff0000000000000",
		`[1,"1",true,null]`: "a4:d3ff0000000000000s1:31tn",
		`1`:                 "d3ff0000000000000", `-1`: "dbff0000000000000", `1.5`: "d3ff8000000000000",
		`0.1`: "d3fb999999999999a", `9007199254740991`: "d433fffffffffffff", `-0`: "d0000000000000000",
		`""`: "s0:", `"a"`: "s1:61", `"é"`: "s2:c3a9", `"😀"`: "s4:f09f9880", `false`: "f",
		`{}`: "o0:", `[]`: "a0:",
	}
	for text, want := range cases {
		assert.Equal(t, Profile+"\n"+want, string(PreImage(parse(t, text))), text)
	}
}

// TestPreImage_KeyOrder: code-point order, not UTF-16 order and not numeric.
func TestPreImage_KeyOrder(t *testing.T) {
	pre := string(PreImage(parse(t, `{"😀":1,"\ue000":1,"2":1,"10":1,"":1}`)))
	keys := []string{"s0:", "s2:3130", "s1:32", "s3:ee8080", "s4:f09f9880"}
	last := -1
	for _, k := range keys {
		i := strings.Index(pre, k)
		require.Greater(t, i, last, "key %s out of order in %s", k, pre)
		last = i
	}
}

// TestDigest_IsSHA256OfPreImage also checks that a string longer than
// the stream buffer is encoded whole.
func TestDigest_IsSHA256OfPreImage(t *testing.T) {
	for _, text := range []string{`{"type":"object"}`, `"` + strings.Repeat("é", 5000) + `"`, `[` + strings.Repeat(`"abc",`, 3000) + `1]`} {
		v := parse(t, text)
		sum := sha256.Sum256(PreImage(v))
		assert.Equal(t, hex.EncodeToString(sum[:]), Digest(v))
	}
	assert.Equal(t, "35d2b71e1c667ec7dde27eb339b795691b3d5f1582109fa87a51ce344dff98c0", Digest(parse(t, `{"type":"object"}`)))
	long := string(PreImage(parse(t, `"`+strings.Repeat("é", 5000)+`"`)))
	assert.Equal(t, Profile+"\ns10000:"+strings.Repeat("c3a9", 5000), long)
}

// TestDigestOf_MatchesSnapshot: the one-pass DigestOf accepts and rejects
// exactly what strictjson.Snapshot does and hashes the same value, at the
// limit boundaries too.
func TestDigestOf_MatchesSnapshot(t *testing.T) {
	self := map[string]any{}
	self["self"] = self
	values := []any{
		nil, true, 1.5, "é", []any{1, "a", nil}, map[string]any{"b": 1, "a": []any{map[string]any{"10": 1, "2": 2}}},
		json.RawMessage(`{"z":1,"a":{"y":[1,2,{"c":null}]}}`), map[string]any{"raw": json.RawMessage(`[1,{"b":1,"a":2}]`)},
		json.RawMessage(`{"a":1,"a":2}`), "\xff", map[string]any{"\xff": 1}, math.NaN(), int64(1) << 60, struct{}{}, self,
		strictjson.NewObject([]string{"b", "a"}, []any{2.0, 1.0}),
	}
	for _, v := range values {
		for _, lim := range []strictjson.Limits{
			{Depth: 64, Nodes: 65536, Bytes: 1 << 20}, {Depth: 2, Nodes: 9, Bytes: 100}, {Depth: 1, Nodes: 4, Bytes: 40},
		} {
			snap, serr := strictjson.Snapshot(v, lim)
			d, derr := DigestOf(v, lim)
			if serr != nil {
				assert.Error(t, derr, "%#v under %+v", v, lim)
				assert.Empty(t, d)
				continue
			}
			require.NoError(t, derr, "%#v under %+v", v, lim)
			assert.Equal(t, Digest(snap), d, "%#v under %+v", v, lim)
		}
	}
}
