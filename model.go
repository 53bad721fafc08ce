package purramcp

import (
	"bytes"
	"encoding/json"

	"purra.dev/purramcp/internal/strictjson"
)

// Model returns what a model is shown for r, and nothing else:
//
//   - on success (ErrorCode ""), {"text": [...], "structured": {...}} with the
//     envelope's text blocks in order (never nil) and its structured content,
//     or nil (JSON null) when there is none;
//   - on a failure, {"error": "<mcp_* code>"}.
//
// The value is a fresh deep copy: changing it changes nothing in r. It never
// holds remote text beyond the validated envelope (no error message, no
// description, nothing the server said about a failure).
func (r ToolResult) Model() map[string]any {
	if r.ErrorCode != "" {
		return map[string]any{"error": r.ErrorCode}
	}
	text := make([]any, len(r.Content.Text))
	for i, s := range r.Content.Text {
		text[i] = s
	}
	var structured any // absent structured content is null
	if r.Content.Structured != nil {
		structured = strictjson.CloneObject(r.Content.Structured)
	}
	return map[string]any{"text": text, "structured": structured}
}

// ModelJSON returns [ToolResult.Model] as compact JSON with object keys
// sorted and no HTML escaping, for frameworks whose tool results are text:
// {"structured":{...}|null,"text":[...]} on success, {"error":"mcp_..."} on
// a failure. The structured content is the value the output contract
// validated, so it always encodes.
func (r ToolResult) ModelJSON() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.Model()); err != nil {
		// Unreachable for results Run returns: the envelope holds only the
		// JSON values its contract admitted. A hand-built ToolResult with a
		// value JSON cannot encode is shown as a result failure.
		return `{"error":"` + CodeResultInvalid + `"}`
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
