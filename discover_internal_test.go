package purramcp

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCheckTool_UnmeasuredSchema: a schema whose size the caller could not
// measure (a negative size) fails mcp_schema_unsupported at "$" with keyword
// "schema", naming which schema, before anything compiles it; the input
// schema is checked first.
func TestCheckTool_UnmeasuredSchema(t *testing.T) {
	lim, err := Limits{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	text := `{"type":"object","properties":{},"additionalProperties":false}`
	var schema map[string]any // as go-sdk decodes a listed schema
	if err := json.Unmarshal([]byte(text), &schema); err != nil {
		t.Fatal(err)
	}
	size := len(text)
	tool := &mcp.Tool{Name: "remote.search", InputSchema: schema, OutputSchema: schema}
	for _, tc := range []struct {
		sizes [2]int
		want  toolFault
	}{
		{[2]int{-1, size}, toolFault{code: CodeSchemaUnsupported, schema: "inputSchema", path: "$", keyword: "schema"}},
		{[2]int{size, -1}, toolFault{code: CodeSchemaUnsupported, schema: "outputSchema", path: "$", keyword: "schema"}},
		{[2]int{-1, -1}, toolFault{code: CodeSchemaUnsupported, schema: "inputSchema", path: "$", keyword: "schema"}},
	} {
		_, fault := checkTool(tool, tc.sizes, lim, SchemaPolicy{}, nil)
		if fault == nil {
			t.Fatalf("sizes %v: no fault, want %+v", tc.sizes, tc.want)
		}
		if *fault != tc.want {
			t.Errorf("sizes %v: got %+v, want %+v", tc.sizes, *fault, tc.want)
		}
	}
	if _, fault := checkTool(tool, [2]int{size, size}, lim, SchemaPolicy{}, nil); fault != nil {
		t.Errorf("measured sizes: got %+v, want no fault", *fault)
	}
}

// TestSchemaFault_FixedText: a remote schema's fault carries its location
// for the inspector, but its text is fixed and never echoes the schema.
func TestSchemaFault_FixedText(t *testing.T) {
	f := &schemaFault{path: "$.properties.secret", keyword: "format"}
	if got := f.Error(); got != "purramcp: remote schema unsupported" {
		t.Errorf("Error() = %q, want the fixed text", got)
	}
}
