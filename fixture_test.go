package purramcp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The pinned vectors and fixtures the tests load: testdata/mcp_tools.json,
// the structured-output vectors, and the bindings and tools built on them.

// mcpFixture is testdata/mcp_tools.json, loaded strictly (unknown fields fail).
type mcpFixture struct {
	SchemaVersion         int             `json:"schemaVersion"`
	Tool                  json.RawMessage `json:"tool"`
	Cases                 []mcpCallCase   `json:"cases"`
	RevisionDigest        string          `json:"revisionDigest"`
	TestModelCapabilities json.RawMessage `json:"testModelCapabilities"`
	SchemaCases           []mcpSchemaCase `json:"schemaCases"`
	DeclaredDialectTool   json.RawMessage `json:"declaredDialectTool"`
}

// mcpCallCase is one shared-boundary row: a call and the outcome every
// implementation must reach.
type mcpCallCase struct {
	ID        string          `json:"id"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	ErrorCode *string         `json:"errorCode"`
	Limits    *struct {
		MaxResultBytes   int `json:"maxResultBytes"`
		MaxContentBlocks int `json:"maxContentBlocks"`
	} `json:"limits"`
	Malformed bool `json:"malformed"`
}

// mcpSchemaCase is one rejected tool and the fault discovery reports.
type mcpSchemaCase struct {
	ID        string          `json:"id"`
	Tool      json.RawMessage `json:"tool"`
	ErrorCode string          `json:"errorCode"`
}

func loadMCPFixture(t testing.TB) mcpFixture {
	t.Helper()
	var f mcpFixture
	decodeStrict(t, readVector(t, "mcp_tools.json"), &f)
	if got := len(f.Cases); got != 14 {
		t.Fatalf("mcp_tools.json cases: len = %d, want %d", got, 14)
	}
	if got := len(f.SchemaCases); got != 6 {
		t.Fatalf("mcp_tools.json schemaCases: len = %d, want %d", got, 6)
	}
	return f
}

// Negotiated versions every connected test runs under.
var testVersions = []string{purramcp.ProtocolVersion20251125, purramcp.ProtocolVersion20260728}

// rawTool is the wire shape of a fixture tool.
type rawTool struct {
	Name         string               `json:"name"`
	Description  string               `json:"description"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
}

// sdkTool turns fixture tool JSON into a go-sdk tool whose schemas are sent
// verbatim.
func sdkTool(t testing.TB, raw json.RawMessage) *mcp.Tool {
	t.Helper()
	var rt rawTool
	if err := json.Unmarshal(raw, &rt); err != nil {
		t.Fatalf("json.Unmarshal(raw, &rt): %v", err)
	}
	tool := &mcp.Tool{Name: rt.Name, Description: rt.Description, InputSchema: rt.InputSchema,
		Annotations: rt.Annotations}
	if len(rt.OutputSchema) > 0 {
		tool.OutputSchema = rt.OutputSchema
	}
	return tool
}

// withField returns tool JSON with one top-level field replaced (nil removes it).
func withField(t testing.TB, tool json.RawMessage, key string, value any) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(tool, &m); err != nil {
		t.Fatalf("json.Unmarshal(tool, &m): %v", err)
	}
	if value == nil {
		delete(m, key)
	} else {
		m[key] = value
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sharedConformance is where CI lays the reference project's vectors.
const sharedConformance = "../shared/conformance"

// readVector returns a pinned vector file from testdata/.
func readVector(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("pinned vector %s: %v", name, err)
	}
	return b
}

// decodeStrict decodes a vector file, failing on any field the loader does
// not know, so a changed vector format cannot be half-read.
func decodeStrict(t testing.TB, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("dec.Decode(v): %v", err)
	}
}

// otherBinding adds the reference's second binding: remote.other → another,
// title "Other", concurrencySafe omitted.
func otherBinding() map[string]purramcp.ToolBinding {
	bindings := searchBinding()
	bindings["remote.other"] = purramcp.ToolBinding{LocalName: "another",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Other"}, Scope: purramcp.Unscoped}
	return bindings
}

// otherTool is a second bound tool with a schema unlike the fixture's.
const otherTool = `{"name":"remote.other","description":"Delete a document","inputSchema":{"type":"object",` +
	`"properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}}`

// Installed smoke schemas: the count and write tools of the reference's
// smoke servers.
const (
	smokeCountTool = `{"name":"count","inputSchema":{"type":"object","properties":{},"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}}`
	smokeWriteTool = `{"name":"write","inputSchema":{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{"written":{"type":"boolean"}},"required":["written"],"additionalProperties":false}}`
	// smokeDigest is the installed smoke snapshot's digest at 2025-11-25.
	smokeDigest = "2f3abeae2653d364f7f1b3d3ea4c4bd5e55f64f50db3e7a128ae638adefbeea3"
)

// countBinding is the installed smoke binding: count → count, title "Count".
func countBinding(remote string) map[string]purramcp.ToolBinding {
	return map[string]purramcp.ToolBinding{remote: {LocalName: "count",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Count"}, Scope: purramcp.Unscoped}}
}

type outputVectors struct {
	Profile  string         `json:"profile"`
	Keywords []string       `json:"keywords"`
	Cases    []outputVector `json:"cases"`
}

type outputVector struct {
	Name           string          `json:"name"`
	Schema         json.RawMessage `json:"schema"`
	Text           string          `json:"text"`
	Code           *string         `json:"code"`
	Mode           string          `json:"mode"`
	Limits         map[string]int  `json:"limits"`
	SchemaDigest   string          `json:"schemaDigest"`
	ContractDigest string          `json:"contractDigest"`
}

func loadOutputVectors(t testing.TB) outputVectors {
	var v outputVectors
	decodeStrict(t, readVector(t, "structured_output.json"), &v)
	if got := len(v.Cases); got != 62 {
		t.Fatalf("structured_output.json case count: len = %d, want %d", got, 62)
	}
	return v
}
