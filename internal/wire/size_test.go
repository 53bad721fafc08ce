package wire

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/jssize"
)

// wireResults are tools/call results as go-sdk decodes them, one of every
// content block type with every optional field, nested tool results, result
// types, input requests and values JavaScript and Go spell differently.
var wireResults = []string{
	`{"content":[]}`,
	`{}`,
	`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"<s>","version":"1"}},"content":[{"type":"text","text":"a<b>&\u2028"}]}`,
	`{"content":[{"type":"text","text":"","_meta":{"k":[1,-0,1e21]},"annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"}}]}`,
	`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"","mimeType":""},{"type":"image"}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a","name":"n","title":"t","description":"d<","mimeType":"text/plain","size":12,"icons":[{"src":"data:x","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}],"annotations":{"priority":1}}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain","text":"inline<"}},{"type":"resource","resource":{"uri":"file:///c","blob":"AAEC"}},{"type":"resource","resource":{"uri":"u","blob":""}}]}`,
	`{"content":[{"type":"tool_use","id":"1","name":"x","input":{"a":1}},{"type":"tool_use","id":"2","name":"y"}]}`,
	`{"content":[{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":""},{"type":"text","text":"t"},{"type":"image","data":"AA==","mimeType":"m"},{"type":"resource_link","uri":"u","name":"n","size":0}],"structuredContent":{"s":"<"},"isError":true,"_meta":{"m":null}}]}`,
	`{"content":[{"type":"text","text":"x"}],"structuredContent":{"z":-0,"s":"\ud800<&>","a":[1e-7,null,true]},"isError":true,"requestState":"st<"}`,
	`{"content":[],"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m<","requestedSchema":{"type":"object"}}}}}`,
	`{"content":[],"inputRequests":{}}`,
	`{"content":[],"structuredContent":"just a string","unknownField":123}`,
}

// TestResult_WireSizesMatchMarshal: Run's count of every wire result, at no
// limit and at each limit around it, equals jssize.Size of go-sdk's own
// encoding (the count before sizing stopped going through MarshalJSON).
func TestResult_WireSizesMatchMarshal(t *testing.T) {
	for i, text := range wireResults {
		var r mcp.CallToolResult
		require.NoError(t, json.Unmarshal([]byte(text), &r), "result %d", i)
		checkResultSize(t, &r, "result "+text)
	}
	checkResultSize(t, &mcp.CallToolResult{}, "nil content") // a host-built value: content null
	checkResultSize(t, &mcp.CallToolResult{Content: []mcp.Content{nil}}, "nil block")
}

func checkResultSize(t *testing.T, r *mcp.CallToolResult, id string) {
	t.Helper()
	want, err := jssize.Size(r)
	require.NoError(t, err, id)
	got, err := ResultSize(r, math.MaxInt)
	require.NoError(t, err, id)
	assert.Equal(t, want, got, id)
	for _, limit := range []int{0, want / 2, want - 1, want} {
		n, err := ResultSize(r, limit)
		require.NoError(t, err, id)
		assert.Equal(t, want > limit, n > limit, "%s: limit %d gives %d", id, limit, n)
	}
}

// wirePages are tools/list results as go-sdk decodes them.
var wirePages = []string{
	`{"tools":[]}`,
	`{"resultType":"complete","ttlMs":5,"cacheScope":"private","_meta":{"a":"<"},"nextCursor":"c<","tools":[{"name":"a","inputSchema":{"type":"object"}}]}`,
	`{"tools":[{"name":"b","title":"T<","description":"d\u2028","inputSchema":{"type":"object","properties":{"n":{"maximum":1e21,"minimum":-0}}},"outputSchema":{"type":"object"},"annotations":{"title":"<&>","readOnlyHint":true,"destructiveHint":false,"openWorldHint":true},"icons":[{"src":"s","sizes":["any"]}],"_meta":{"k":{"v":1}}},{"name":"c","annotations":{}},{"name":"d","inputSchema":true}]}`,
}

// TestDiscover_WirePageSizesMatchMarshal: discovery's count of every wire
// page, and of each schema, equals jssize.Size of go-sdk's encoding.
func TestDiscover_WirePageSizesMatchMarshal(t *testing.T) {
	for _, text := range wirePages {
		var p mcp.ListToolsResult
		require.NoError(t, json.Unmarshal([]byte(text), &p), text)
		checkPageSize(t, &p, text)
	}
}

func checkPageSize(t *testing.T, p *mcp.ListToolsResult, id string) {
	t.Helper()
	want, err := jssize.Size(p)
	require.NoError(t, err, id)
	got, sizes, err := PageSize(p, math.MaxInt)
	require.NoError(t, err, id)
	assert.Equal(t, want, got, id)
	for i, tool := range p.Tools {
		for j, schema := range []any{tool.InputSchema, tool.OutputSchema} {
			if schema != nil {
				n, err := jssize.Size(schema)
				require.NoError(t, err)
				assert.Equal(t, n, sizes[i][j], "%s: tool %d schema %d", id, i, j)
			}
		}
	}
	for _, limit := range []int{0, want / 2, want - 1, want} {
		n, _, err := PageSize(p, limit)
		require.NoError(t, err, id)
		assert.Equal(t, want > limit, n > limit, "%s: limit %d gives %d", id, limit, n)
	}
}

// FuzzWireSize decodes fuzzed result and page text as go-sdk does and checks
// both counts against jssize.Size (the old MarshalJSON path).
func FuzzWireSize(f *testing.F) {
	for _, s := range append(append([]string{}, wireResults...), wirePages...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var r mcp.CallToolResult
		if json.Unmarshal([]byte(text), &r) == nil {
			if _, err := jssize.Size(&r); err == nil {
				checkResultSize(t, &r, text)
			}
		}
		var p mcp.ListToolsResult
		if json.Unmarshal([]byte(text), &p) == nil {
			if _, err := jssize.Size(&p); err == nil {
				checkPageSize(t, &p, text)
			}
		}
	})
}
