package wire

import (
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/jssize"
)

// Sizing in O(limit). Discovery and Run count a tools/list page and a
// tools/call result as JSON.stringify would write the decoded value, which
// is jssize.Size of go-sdk's own encoding of it. Going through go-sdk's
// MarshalJSON costs what the peer sent (it escapes '<' to six bytes and
// copies at every level), so the values are measured with jssize.Within,
// which stops once the limit is passed, over shapes below: plain structs with
// go-sdk's field names and omit rules and no MarshalJSON of their own. The
// counts are the same (TestDiscover_PageSizeIsJSSize,
// TestResult_ResultSizeIsJSSize check them against jssize.Size).

// toolShape is *mcp.Tool as encoding/json writes it, with annotations in
// their MarshalJSON spelling (both plain hints always written).
type toolShape struct {
	Meta         mcp.Meta              `json:"_meta,omitempty"`
	Annotations  *toolAnnotationsShape `json:"annotations,omitempty"`
	Description  string                `json:"description,omitempty"`
	InputSchema  any                   `json:"inputSchema"`
	Name         string                `json:"name"`
	OutputSchema any                   `json:"outputSchema,omitempty"`
	Title        string                `json:"title,omitempty"`
	Icons        []mcp.Icon            `json:"icons,omitempty"`
}

// toolAnnotationsShape is mcp.ToolAnnotations without its MarshalJSON (the
// spelling go-sdk v1.8.0 writes unless MCPGODEBUG=hintomitempty=1).
type toolAnnotationsShape struct {
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	Title           string `json:"title,omitempty"`
}

// pageShape is *mcp.ListToolsResult with its tools counted apart.
type pageShape struct {
	ResultType string   `json:"resultType,omitempty"`
	Meta       mcp.Meta `json:"_meta,omitempty"`
	TTLMs      int      `json:"ttlMs"`
	CacheScope string   `json:"cacheScope"`
	NextCursor string   `json:"nextCursor,omitempty"`
	Tools      []any    `json:"tools"`
}

// wireLayouts holds the encoded layouts of the shapes below and of the
// go-sdk structs they hold, worked out once: a page or a result is then
// measured without reflecting over its struct types again.
var wireLayouts = jssize.NewLayouts(pageShape{}, toolShape{}, toolAnnotationsShape{}, mcp.Icon{},
	resultShape{}, textShape{}, mediaShape{}, toolUseShape{}, toolResultShape{}, wireShape{},
	mcp.Annotations{}, mcp.ResourceContents{})

// placeholder stands for a schema measured apart: one byte, "0".
const placeholder = 0

// PageSize returns the JSON.stringify size of result and each tool's input
// and output schema sizes (0 when absent), so a bound schema is not measured
// twice. It stops once the count passes limit and then returns some n >
// limit; the schema sizes are exact only when n <= limit. result is only
// read: it may be shared with go-sdk's cache.
func PageSize(result *mcp.ListToolsResult, limit int) (int, [][2]int, error) {
	shell := pageShape{ResultType: string(result.ResultType), Meta: result.Meta, TTLMs: result.TTLMs,
		CacheScope: result.CacheScope, NextCursor: result.NextCursor}
	if result.Tools != nil { // nil stays null
		shell.Tools = []any{}
	}
	n, err := wireLayouts.Within(&shell, limit)
	if err != nil || n > limit {
		return n, nil, err
	}
	n += max(len(result.Tools)-1, 0) // commas
	schemaSizes := make([][2]int, len(result.Tools))
	var shape toolShape
	var annotations toolAnnotationsShape
	for i, tool := range result.Tools {
		if n > limit {
			return n, nil, nil
		}
		if tool == nil {
			n += len("null") // unreachable: go-sdk drops null tools
			continue
		}
		shape = toolShape{Meta: tool.Meta, Description: tool.Description, Name: tool.Name, Title: tool.Title, Icons: tool.Icons}
		if a := tool.Annotations; a != nil {
			annotations = toolAnnotationsShape(*a)
			shape.Annotations = &annotations
		}
		for j, schema := range [2]any{tool.InputSchema, tool.OutputSchema} {
			if schema == nil {
				continue // null, or omitted, either way
			}
			m, err := wireLayouts.Within(schema, limit-n)
			if err != nil || m > limit-n {
				return n + m, nil, err
			}
			schemaSizes[i][j] = m
			n += m - 1 // the placeholder's byte is counted with the shell
		}
		if tool.InputSchema != nil {
			shape.InputSchema = placeholder
		}
		if tool.OutputSchema != nil {
			shape.OutputSchema = placeholder
		}
		m, err := wireLayouts.Within(&shape, limit-n)
		if err != nil {
			return 0, nil, err
		}
		n += m
	}
	return n, schemaSizes, nil
}

// resultShape is *mcp.CallToolResult in its MarshalJSON spelling, with the
// content blocks counted apart.
type resultShape struct {
	Meta              mcp.Meta `json:"_meta,omitempty"`
	Content           []any    `json:"content"`
	StructuredContent any      `json:"structuredContent,omitempty"`
	IsError           bool     `json:"isError,omitempty"`
	RequestState      string   `json:"requestState,omitempty"`
	ResultType        string   `json:"resultType,omitempty"`
	InputRequests     any      `json:"inputRequests,omitempty"`
}

// Content blocks in their MarshalJSON spellings.
type (
	textShape struct {
		Type        string           `json:"type"`
		Text        string           `json:"text"`
		Meta        mcp.Meta         `json:"_meta,omitempty"`
		Annotations *mcp.Annotations `json:"annotations,omitempty"`
	}
	mediaShape struct {
		Type        string           `json:"type"`
		MIMEType    string           `json:"mimeType"`
		Data        []byte           `json:"data"`
		Meta        mcp.Meta         `json:"_meta,omitempty"`
		Annotations *mcp.Annotations `json:"annotations,omitempty"`
	}
	toolUseShape struct {
		Type  string         `json:"type"`
		ID    string         `json:"id"`
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
		Meta  mcp.Meta       `json:"_meta,omitempty"`
	}
	toolResultShape struct {
		Type              string       `json:"type"`
		ToolUseID         string       `json:"toolUseId"`
		Content           []*wireShape `json:"content"`
		StructuredContent any          `json:"structuredContent,omitempty"`
		IsError           bool         `json:"isError,omitempty"`
		Meta              mcp.Meta     `json:"_meta,omitempty"`
	}
	// wireShape is go-sdk's wireContent: how resource links and embedded
	// resources are written, and every block nested in a tool result.
	wireShape struct {
		Type              string                `json:"type"`
		Text              string                `json:"text,omitempty"`
		MIMEType          string                `json:"mimeType,omitempty"`
		Data              []byte                `json:"data,omitempty"`
		Resource          *mcp.ResourceContents `json:"resource,omitempty"`
		URI               string                `json:"uri,omitempty"`
		Name              string                `json:"name,omitempty"`
		Title             string                `json:"title,omitempty"`
		Description       string                `json:"description,omitempty"`
		Size              *int64                `json:"size,omitempty"`
		Meta              mcp.Meta              `json:"_meta,omitempty"`
		Annotations       *mcp.Annotations      `json:"annotations,omitempty"`
		Icons             []mcp.Icon            `json:"icons,omitempty"`
		ID                string                `json:"id,omitempty"`
		Input             map[string]any        `json:"input,omitempty"`
		ToolUseID         string                `json:"toolUseId,omitempty"`
		NestedContent     []*wireShape          `json:"content,omitempty"`
		StructuredContent any                   `json:"structuredContent,omitempty"`
		IsError           bool                  `json:"isError,omitempty"`
	}
)

// ResultSize returns the JSON.stringify size of result, stopping once the
// count passes limit (then some n > limit). result is only read.
func ResultSize(result *mcp.CallToolResult, limit int) (int, error) {
	shell := resultShape{Meta: result.Meta, StructuredContent: result.StructuredContent, IsError: result.IsError,
		RequestState: result.RequestState, ResultType: resultTypeOf(result)}
	if result.Content != nil { // nil stays null
		shell.Content = []any{}
	}
	if result.InputRequests != nil {
		// go-sdk's own spelling (its InputRequestMap.MarshalJSON), measured
		// alone. Within bounds it: the frame it came in passed the cap.
		shell.InputRequests = result.InputRequests
	}
	n, err := wireLayouts.Within(&shell, limit)
	if err != nil || n > limit {
		return n, err
	}
	n += max(len(result.Content)-1, 0) // commas
	for _, block := range result.Content {
		if n > limit {
			return n, nil
		}
		m, err := wireLayouts.Within(blockShape(block), limit-n)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// blockShape returns a value encoding/json writes as block's MarshalJSON does.
func blockShape(block mcp.Content) any {
	switch c := block.(type) {
	case *mcp.TextContent:
		if c != nil {
			return &textShape{Type: "text", Text: c.Text, Meta: c.Meta, Annotations: c.Annotations}
		}
	case *mcp.ImageContent:
		if c != nil {
			return &mediaShape{Type: "image", MIMEType: c.MIMEType, Data: nonNil(c.Data), Meta: c.Meta, Annotations: c.Annotations}
		}
	case *mcp.AudioContent:
		if c != nil {
			return &mediaShape{Type: "audio", MIMEType: c.MIMEType, Data: nonNil(c.Data), Meta: c.Meta, Annotations: c.Annotations}
		}
	case *mcp.ResourceLink, *mcp.EmbeddedResource:
		if w := wireOf(block); w != nil {
			return w
		}
	case *mcp.ToolUseContent:
		if c != nil {
			input := c.Input
			if input == nil {
				input = map[string]any{}
			}
			return &toolUseShape{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input, Meta: c.Meta}
		}
	case *mcp.ToolResultContent:
		if c != nil {
			nested := make([]*wireShape, 0, len(c.Content))
			for _, inner := range c.Content {
				nested = append(nested, wireOf(inner))
			}
			return &toolResultShape{Type: "tool_result", ToolUseID: c.ToolUseID, Content: nested,
				StructuredContent: c.StructuredContent, IsError: c.IsError, Meta: c.Meta}
		}
	case nil:
		return nil // null
	}
	return block // unreachable for decoded results: measured by its own MarshalJSON
}

// wireOf is block as go-sdk's wireContent holds it after a round trip through
// its MarshalJSON: what a tool result writes for each nested block.
func wireOf(block mcp.Content) *wireShape {
	switch c := block.(type) {
	case *mcp.TextContent:
		return &wireShape{Type: "text", Text: c.Text, Meta: c.Meta, Annotations: c.Annotations}
	case *mcp.ImageContent:
		return &wireShape{Type: "image", MIMEType: c.MIMEType, Data: c.Data, Meta: c.Meta, Annotations: c.Annotations}
	case *mcp.AudioContent:
		return &wireShape{Type: "audio", MIMEType: c.MIMEType, Data: c.Data, Meta: c.Meta, Annotations: c.Annotations}
	case *mcp.ResourceLink:
		return &wireShape{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Meta: c.Meta, Annotations: c.Annotations, Icons: c.Icons}
	case *mcp.EmbeddedResource:
		return &wireShape{Type: "resource", Resource: c.Resource, Meta: c.Meta, Annotations: c.Annotations}
	case *mcp.ToolUseContent:
		return &wireShape{Type: "tool_use", ID: c.ID, Name: c.Name, Input: c.Input, Meta: c.Meta}
	case *mcp.ToolResultContent:
		w := &wireShape{Type: "tool_result", ToolUseID: c.ToolUseID, StructuredContent: c.StructuredContent,
			IsError: c.IsError, Meta: c.Meta}
		for _, inner := range c.Content {
			w.NestedContent = append(w.NestedContent, wireOf(inner))
		}
		return w
	}
	return nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// resultTypeOf reads CallToolResult's unexported resultType, which its
// MarshalJSON writes as "resultType" (a 2026-07-28 server sends "complete").
func resultTypeOf(result *mcp.CallToolResult) string {
	if resultTypeField == nil {
		return "" // unreachable with go-sdk v1.8.0; the size tests would show it
	}
	return reflect.ValueOf(result).Elem().FieldByIndex(resultTypeField).String()
}

// resultTypeField is the index of CallToolResult's resultType, a string, or
// nil when go-sdk has no such field.
var resultTypeField = func() []int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || f.Type.Kind() != reflect.String {
		return nil
	}
	return f.Index
}()
