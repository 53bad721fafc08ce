package purramcp_test

import (
	"reflect"
	"testing"

	"purra.dev/purramcp"
)

func TestToolResult_Model(t *testing.T) {
	ok := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"a<b", "c"},
		Structured: map[string]any{"z": 1.0, "a": []any{"x", map[string]any{"k": true}}}}, EffectState: "not_started"}
	if got, want := ok.Model(), map[string]any{"text": []any{"a<b", "c"},
		"structured": map[string]any{"z": 1.0, "a": []any{"x", map[string]any{"k": true}}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ok.Model() = %v, want %v", got, want)
	}
	if got := ok.ModelJSON(); got != `{"structured":{"a":["x",{"k":true}],"z":1},"text":["a<b","c"]}` {
		t.Errorf("ok.ModelJSON() = %q, want %q", got, `{"structured":{"a":["x",{"k":true}],"z":1},"text":["a<b","c"]}`)
	}

	// The model value is a copy: changing it changes nothing in the result.
	m := ok.Model()
	m["structured"].(map[string]any)["z"] = 2.0
	m["text"].([]any)[0] = "changed"
	if !reflect.DeepEqual(ok.Content.Structured["z"], 1.0) {
		t.Errorf("ok.Content.Structured[\"z\"] = %v, want %v", ok.Content.Structured["z"], 1.0)
	}
	if ok.Content.Text[0] != "a<b" {
		t.Errorf("ok.Content.Text[0] = %q, want %q", ok.Content.Text[0], "a<b")
	}

	empty := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}}}
	if got := empty.ModelJSON(); got != `{"structured":null,"text":[]}` {
		t.Errorf("empty.ModelJSON() = %q, want %q", got, `{"structured":null,"text":[]}`)
	}
	if got := (purramcp.ToolResult{}).ModelJSON(); got != `{"structured":null,"text":[]}` {
		t.Errorf("nil text is []: got %q, want %q", got, `{"structured":null,"text":[]}`)
	}

	failed := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"remote words"}},
		ErrorCode: purramcp.CodeToolError}
	if got, want := failed.Model(), map[string]any{"error": purramcp.CodeToolError}; !reflect.DeepEqual(got, want) {
		t.Errorf("failed.Model() = %v, want %v", got, want)
	}
	if got := failed.ModelJSON(); got != `{"error":"mcp_tool_error"}` {
		t.Errorf("no envelope text on failure: got %q, want %q", got, `{"error":"mcp_tool_error"}`)
	}

	unencodable := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{},
		Structured: map[string]any{"c": make(chan int)}}}
	if got := unencodable.ModelJSON(); got != `{"error":"mcp_result_invalid"}` {
		t.Errorf("unencodable.ModelJSON() = %q, want %q", got, `{"error":"mcp_result_invalid"}`)
	}
	if purramcp.CodeHostFailure != "host_failure" {
		t.Errorf("purramcp.CodeHostFailure = %q, want %q", purramcp.CodeHostFailure, "host_failure")
	}
}
