package purramcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"purra.dev/purramcp"
)

func TestToolResult_Model(t *testing.T) {
	ok := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"a<b", "c"},
		Structured: map[string]any{"z": 1.0, "a": []any{"x", map[string]any{"k": true}}}}, EffectState: "not_started"}
	assert.Equal(t, map[string]any{"text": []any{"a<b", "c"},
		"structured": map[string]any{"z": 1.0, "a": []any{"x", map[string]any{"k": true}}}}, ok.Model())
	assert.Equal(t, `{"structured":{"a":["x",{"k":true}],"z":1},"text":["a<b","c"]}`, ok.ModelJSON())

	// The model value is a copy: changing it changes nothing in the result.
	m := ok.Model()
	m["structured"].(map[string]any)["z"] = 2.0
	m["text"].([]any)[0] = "changed"
	assert.Equal(t, 1.0, ok.Content.Structured["z"])
	assert.Equal(t, "a<b", ok.Content.Text[0])

	empty := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}}}
	assert.Equal(t, `{"structured":null,"text":[]}`, empty.ModelJSON())
	assert.Equal(t, `{"structured":null,"text":[]}`, purramcp.ToolResult{}.ModelJSON(), "nil text is []")

	failed := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"remote words"}},
		ErrorCode: purramcp.CodeToolError}
	assert.Equal(t, map[string]any{"error": purramcp.CodeToolError}, failed.Model())
	assert.Equal(t, `{"error":"mcp_tool_error"}`, failed.ModelJSON(), "no envelope text on failure")

	unencodable := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{},
		Structured: map[string]any{"c": make(chan int)}}}
	assert.Equal(t, `{"error":"mcp_result_invalid"}`, unencodable.ModelJSON())
	assert.Equal(t, "host_failure", purramcp.CodeHostFailure)
}
