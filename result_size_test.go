package purramcp_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// boundTexts are text blocks' texts: escapes of every width, multi-byte and
// astral text, JSON look-alikes and a long run.
var boundTexts = []string{"", "plain", "quote \" and \\ backslash", "\x00\x01\x1f\b\f\n\r\t", "é日😀\u2028\u2029",
	`{"looks":"like json"}`, "<&>", strings.Repeat("ab\n", 300)}

// boundNumbers are number literals whose JavaScript spelling is longer than
// the literal, up to the longest one there is (25 characters).
var boundNumbers = []string{"-1.2345678901234567e-6", "-0.0000012345678901234567", "1e20", "-1e20", "1e21",
	"-1e-7", "5e-324", "-1.7976931348623157e308", "1e9", "-0", "0.1", "123456.5", "-9007199254740991"}

// boundResult writes the i-th random tools/call result as a server would
// send it: text blocks, sometimes another block, _meta or annotations,
// structured content from the differential generator with numbers respelled
// long, and resultType as each protocol writes it.
func boundResult(g *diffGen, i int) []byte {
	var b strings.Builder
	b.WriteString(`{"content":[`)
	for j := range g.r.IntN(4) {
		if j > 0 {
			b.WriteByte(',')
		}
		text, _ := json.Marshal(diffPick(g, boundTexts) + g.str(0, 4))
		switch g.r.IntN(12) {
		case 0:
			b.WriteString(`{"type":"text","text":` + string(text) + `,"_meta":{"k":1}}`)
		case 1:
			b.WriteString(`{"type":"text","text":` + string(text) + `,"annotations":{"priority":0.5}}`)
		case 2:
			b.WriteString(`{"type":"image","mimeType":"image/png","data":"AAAA"}`)
		default:
			b.WriteString(`{"type":"text","text":` + string(text) + `}`)
		}
	}
	b.WriteByte(']')
	if g.r.IntN(6) != 0 {
		v := g.value(3)
		if g.r.IntN(3) != 0 {
			v = map[string]any{"v": v, "n": json.Number(diffPick(g, boundNumbers)),
				"list": []any{json.Number(diffPick(g, boundNumbers)), json.Number(diffPick(g, boundNumbers))}}
		}
		b.WriteString(`,"structuredContent":`)
		b.Write(g.encode(nil, v))
	}
	switch g.r.IntN(10) {
	case 0:
		b.WriteString(`,"isError":true`)
	case 1:
		b.WriteString(`,"_meta":{"trace":"x"}`)
	case 2, 3, 4:
		b.WriteString(`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"},"n":[` +
			diffPick(g, boundNumbers) + `,` + diffPick(g, boundNumbers) + `]}`)
	}
	if i%2 == 0 {
		b.WriteString(`,"resultType":"complete"`) // 2026-07-28
	}
	b.WriteByte('}')
	return []byte(b.String())
}

func decodeResult(t *testing.T, text []byte) *mcp.CallToolResult {
	t.Helper()
	var result mcp.CallToolResult
	require.NoError(t, json.Unmarshal(text, &result), "%s", text)
	return &result
}

// TestSizeBound_NeverBelowExact: the bound that lets Run skip the exact
// count never claims a result fits a limit below its exact JSON.stringify
// size, on random decoded results of both protocols with the longest number
// spellings there are; and it settles more than half of them at twice their
// size.
func TestSizeBound_NeverBelowExact(t *testing.T) {
	var walked, settled int
	for i := range 5000 {
		g := newDiffGen(uint64(9000 + i))
		text := boundResult(g, i)
		result := decodeResult(t, text)
		exact, err := purramcp.ResultSize(result, math.MaxInt)
		require.NoError(t, err)
		holds, ok := purramcp.SizeBoundHolds(result, exact-1)
		require.False(t, holds, "result %d of %d bytes claimed within %d: %s", i, exact, exact-1, text)
		if ok {
			walked++
			if holds, _ := purramcp.SizeBoundHolds(result, 2*exact+256); holds {
				settled++
			}
		}
	}
	t.Logf("%d of 5000 results walked, %d of them settled at twice their size", walked, settled)
	require.Greater(t, walked, 1500)
	require.Greater(t, settled, walked/2)
	long := decodeResult(t, []byte(`{"content":[],"structuredContent":{"a":[`+
		strings.TrimSuffix(strings.Repeat("-0.0000012345678901234567,", 200), ",")+`]}}`))
	exact, err := purramcp.ResultSize(long, math.MaxInt)
	require.NoError(t, err)
	require.Equal(t, len(`{"content":[],"structuredContent":{"a":[]}}`)+200*25+199, exact,
		"200 numbers of 25 characters each")
	holds, ok := purramcp.SizeBoundHolds(long, exact-1)
	require.True(t, ok)
	require.False(t, holds)
}

// TestConvert_BoundMatchesExact is the differential test of the size bound:
// converting a result with it gives exactly what converting with the exact
// count first gives (the same code, the same envelope), for random results
// of both protocols, with and without an output schema, at limits just
// below, at and just above each result's exact size and at the default.
func TestConvert_BoundMatchesExact(t *testing.T) {
	outcomes := map[string]int{}
	for i := range 1500 {
		g := newDiffGen(uint64(20000 + i))
		text := boundResult(g, i)
		exactSize, err := purramcp.ResultSize(decodeResult(t, text), math.MaxInt)
		require.NoError(t, err)
		var output map[string]any
		if i%3 == 0 {
			output = g.schema(2)
			output["type"] = "object"
		}
		for _, limit := range []int{exactSize - 1, exactSize, exactSize + 1, 2*exactSize + 300, 0} {
			limits := purramcp.Limits{MaxResultBytes: max(limit, 0)}
			if limit > 65536 {
				continue
			}
			want, wantErr := purramcp.ConvertResultWith(limits, output, decodeResult(t, text), true)
			got, err := purramcp.ConvertResultWith(limits, output, decodeResult(t, text), false)
			label := "result " + strconv.Itoa(i) + " under MaxResultBytes " + strconv.Itoa(limit)
			require.Equal(t, wantErr, err, "%s: %s", label, text)
			require.Equal(t, want, got, "%s: %s", label, text)
			outcomes[purramcp.CodeOf(err)]++
		}
	}
	t.Logf("outcomes: %v", outcomes)
	for _, code := range []string{"", purramcp.CodeResultTooLarge, purramcp.CodeResultInvalid,
		purramcp.CodeResultUnsupported, purramcp.CodeToolError} {
		require.Positive(t, outcomes[code], "no conversion ended %q", code)
	}
}
