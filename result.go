package purramcp

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// convert turns a tools/call result into the envelope, in the order of
// adapter.md §6. result is the one go-sdk decoded for this call, which
// nothing else reads once Run returns: the envelope may keep its structured
// content when that is already in the decoded form the envelope promises
// (validateWithMember).
func (t *boundTool) convert(result *mcp.CallToolResult) (Envelope, error) {
	if result == nil {
		return Envelope{}, fail(CodeResultInvalid) // unreachable: go-sdk returns a value
	}
	if result.IsError {
		return Envelope{}, fail(CodeToolError) // remote text never echoed
	}
	if len(result.Content) > t.limits.MaxContentBlocks {
		return Envelope{}, fail(CodeResultTooLarge)
	}
	if n, err := resultSize(result, t.limits.MaxResultBytes); err != nil {
		return Envelope{}, fail(CodeResultInvalid)
	} else if n > t.limits.MaxResultBytes {
		return Envelope{}, fail(CodeResultTooLarge)
	}
	text := make([]any, 0, len(result.Content))
	for _, block := range result.Content {
		tc, ok := block.(*mcp.TextContent)
		if !ok || tc == nil {
			return Envelope{}, fail(CodeResultUnsupported)
		}
		text = append(text, tc.Text)
	}
	// adapter.md §6.3: a result asking for more input (multi-round-trip).
	if result.NeedsInput() || result.InputRequests != nil {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	return t.envelopeOf(text, result.StructuredContent)
}

// envelopeOf validates {text, structured} under the envelope contract and,
// when the tool has one, structured under its output contract (adapter.md
// §6.4). Text that looks like JSON never counts as structured content.
func (t *boundTool) envelopeOf(text []any, structured any) (Envelope, error) {
	var object any // absent structured content is null
	if structured != nil {
		m, ok := structured.(map[string]any)
		if !ok {
			return Envelope{}, fail(CodeResultInvalid)
		}
		object = m
	}
	// One snapshot serves the envelope and, when the tool has one, the output
	// contract (structured is required then: null fails its root type).
	value, err := t.envelope.validateWithMember(map[string]any{"text": text, "structured": object}, "structured", t.output)
	if err != nil {
		return Envelope{}, fail(CodeResultInvalid)
	}
	return envelopeFromValue(value)
}

// envelopeFromValue reads the validated envelope, a fresh value the contract
// returned, into an Envelope.
func envelopeFromValue(value map[string]any) (Envelope, error) {
	items, ok := value["text"].([]any)
	if !ok {
		return Envelope{}, fail(CodeResultInvalid) // unreachable: built above
	}
	env := Envelope{Text: make([]string, len(items))}
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return Envelope{}, fail(CodeResultInvalid) // unreachable: built above
		}
		env.Text[i] = s
	}
	if s, ok := value["structured"].(map[string]any); ok {
		env.Structured = s
	}
	return env, nil
}
