package purramcp

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/wire"
)

// convert turns a tools/call result into the envelope, in the order of
// ToolDefinition.Run (step 7). result is the one go-sdk decoded for this call, which
// nothing else reads once Run returns: the envelope may keep its structured
// content when that is already in the decoded form the envelope promises
// (validateWithMember).
//
// The size check comes before the block and envelope checks. For the
// common result, text blocks and structured content only, the envelope's
// walk runs first and its measure bounds the size (wire.SizeWithin); the
// exact count runs only when the bound does not settle it. Either way the
// first failure in that order decides the outcome.
func (t *catalogTool) convert(result *mcp.CallToolResult) (Envelope, error) {
	if result == nil {
		return Envelope{}, fail(CodeResultInvalid) // unreachable: go-sdk returns a value
	}
	if result.IsError {
		return Envelope{}, fail(CodeToolError) // remote text never echoed
	}
	if len(result.Content) > t.limits.MaxContentBlocks {
		return Envelope{}, fail(CodeResultTooLarge)
	}
	text, allText := textBlocks(result.Content)
	var walked map[string]any // the walked envelope, once its measure settled the size
	if allText && t.envelope.sharesLimits(t.output) {
		if envelope, ok := envelopeValue(text, result.StructuredContent); ok {
			v, m, err := t.envelope.walkShared(envelope)
			if err == nil && wire.SizeWithin(result, m, t.limits.MaxResultBytes) {
				walked = v
			}
		}
	}
	if walked == nil {
		if n, err := wire.ResultSize(result, t.limits.MaxResultBytes); err != nil {
			return Envelope{}, fail(CodeResultInvalid)
		} else if n > t.limits.MaxResultBytes {
			return Envelope{}, fail(CodeResultTooLarge)
		}
	}
	if !allText {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	// A result asking for more input (multi-round-trip) is not a result.
	if result.NeedsInput() || result.InputRequests != nil {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	if walked != nil {
		value, err := t.envelope.validateWalked(walked, "structured", t.output)
		if err != nil {
			return Envelope{}, fail(CodeResultInvalid)
		}
		return envelopeFromValue(value)
	}
	return t.envelopeOf(text, result.StructuredContent)
}

// textBlocks returns the texts of content, and false when a block is not a
// text block.
func textBlocks(content []mcp.Content) ([]any, bool) {
	text := make([]any, 0, len(content))
	for _, block := range content {
		tc, ok := block.(*mcp.TextContent)
		if !ok || tc == nil {
			return nil, false
		}
		text = append(text, tc.Text)
	}
	return text, true
}

// envelopeValue returns the value the envelope contract validates,
// {text, structured}, and false when structured is neither absent nor an
// object. Text that looks like JSON never counts as structured content.
func envelopeValue(text []any, structured any) (map[string]any, bool) {
	var object any // absent structured content is null
	if structured != nil {
		m, ok := structured.(map[string]any)
		if !ok {
			return nil, false
		}
		object = m
	}
	return map[string]any{"text": text, "structured": object}, true
}

// envelopeOf validates {text, structured} under the envelope contract and,
// when the tool has one, structured under its output contract.
func (t *catalogTool) envelopeOf(text []any, structured any) (Envelope, error) {
	envelope, ok := envelopeValue(text, structured)
	if !ok {
		return Envelope{}, fail(CodeResultInvalid)
	}
	// One walk serves the envelope and, when the tool has one, the output
	// contract (structured is required then: null fails its root type).
	value, err := t.envelope.validateWithMember(envelope, "structured", t.output)
	if err != nil {
		return Envelope{}, fail(CodeResultInvalid)
	}
	return envelopeFromValue(value)
}

// envelopeFromValue reads the validated envelope, a value the contract
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
