package purramcp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// Remote schemas: which listed schemas compile into contracts under each
// policy, and the fault a rejected one reports.

const dialect202012 = "https://json-schema.org/draft/2020-12/schema"

// TestBehaviorF1_FixtureSchemasCompile: the fixture's input and output
// schemas compile; snapshot and registration carry them unchanged.
func TestBehaviorF1_FixtureSchemasCompile(t *testing.T) {
	f := loadMCPFixture(t)
	tool := decodeObject(t, f.Tool)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err, "F1 at %s", version)
		entry := catalog.Snapshot().Entries[0]
		assert.Equal(t, tool["inputSchema"], entry.InputSchema, "F1 at %s", version)
		assert.Equal(t, tool["outputSchema"], entry.OutputSchema, "F1 at %s", version)
		reg := catalog.Registrations()[0]
		assert.Equal(t, tool["inputSchema"], reg.InputSchema, "F1 at %s", version)
		assert.Equal(t, tool["inputSchema"], reg.ArgumentContract.Schema(), "F1 at %s", version)
		_, calls := h.counts()
		assert.Zero(t, calls)
	})
}

// discoverDeclared discovers the declared-dialect fixture tool; the server
// answers result.
func discoverDeclared(t *testing.T, version string, result json.RawMessage) (*purramcp.Catalog, *sdkServer, sessionHarness) {
	t.Helper()
	f := loadMCPFixture(t)
	srv := newSDKServer(t, result, f.DeclaredDialectTool)
	h := sdkHarness(t, srv, version)
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err, "declared dialect at %s", version)
	return catalog, srv, h
}

// TestBehaviorF2_DeclaredDialectCompiles: both schemas carry the 2020-12
// root $schema and compile; the contract is the undeclared schema.
func TestBehaviorF2_DeclaredDialectCompiles(t *testing.T) {
	f := loadMCPFixture(t)
	plain := decodeObject(t, f.Tool)
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, _ := discoverDeclared(t, version, nil)
		reg := catalog.Registrations()[0]
		assert.Equal(t, plain["inputSchema"], reg.ArgumentContract.Schema(), "F2 at %s: declaration removed", version)
		assert.Equal(t, plain["inputSchema"], reg.InputSchema, "F2 at %s", version)
	})
}

// TestBehaviorF3_TextOnlyTool: no output schema → outputSchema null.
func TestBehaviorF3_TextOnlyTool(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	h := sdkHarness(t, newSDKServer(t, nil, tool), purramcp.ProtocolVersion20251125)
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	snap := catalog.Snapshot()
	assert.Nil(t, snap.Entries[0].OutputSchema)
	assert.Equal(t, "9828c43572192bfbeca54e94830f6658f448945c066240f375fa4d978d043e3f", snap.RevisionDigest)
	b, err := json.Marshal(snap.Entries[0])
	require.NoError(t, err)
	assert.Contains(t, decodeObject(t, b), "outputSchema")
	assert.Nil(t, decodeObject(t, b)["outputSchema"])
}

// TestBehaviorF4_SmokeSchemas: the installed smoke's schemas compile and
// give the smoke digest; {} runs, anything more is rejected.
func TestBehaviorF4_SmokeSchemas(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		srv := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":3}}`), json.RawMessage(smokeCountTool))
		h := sdkHarness(t, srv, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "local", countBinding("count"),
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		require.NoError(t, err, "F4 at %s", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, smokeDigest, catalog.Snapshot().RevisionDigest, "F4 at %s", version)
		}
		reg := catalog.Registrations()[0]
		assert.Equal(t, "Count", reg.Description, "F4: an empty description falls back to the title")
		res, err := reg.Run(t.Context(), json.RawMessage(`{}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 3.0}},
			EffectState: "not_started"}, res, "F4 at %s", version)
		res, err = reg.Run(t.Context(), json.RawMessage(`{"x":1}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode, "F4 at %s", version)
		_, calls := h.counts()
		assert.Equal(t, 1, calls, "F4 at %s", version)
	})
}

// TestBehaviorF5_WriteSmokeSchemas: the write smoke's schemas compile under a
// read binding (the write path itself is out of scope).
func TestBehaviorF5_WriteSmokeSchemas(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		srv := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"written":true}}`), json.RawMessage(smokeWriteTool))
		h := sdkHarness(t, srv, version)
		bindings := map[string]purramcp.ToolBinding{"write": {LocalName: "write",
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Write fixture"}, Scope: purramcp.Unscoped}}
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "synthetic", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		require.NoError(t, err, "F5 at %s", version)
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), json.RawMessage(`{"value":42}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.Envelope{Text: []string{}, Structured: map[string]any{"written": true}}, res.Content, "F5 at %s", version)
		res, err = reg.Run(t.Context(), json.RawMessage(`{"value":"42"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode, "F5 at %s", version)
	})
}

// TestBehaviorF6_LocalRef: the fixture tool with input {type:object,
// $ref:"#/$defs/x"} fails mcp_schema_unsupported with no call.
func TestBehaviorF6_LocalRef(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "inputSchema", map[string]any{"type": "object", "$ref": "#/$defs/x"})
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, tool), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodeSchemaUnsupported, purramcp.CodeOf(err), "F6 at %s", version)
		lists, calls := h.counts()
		assert.Equal(t, 1, lists, "F6 at %s", version)
		assert.Zero(t, calls, "F6 at %s", version)
	})
}

// schemaCase runs one mcp_tools.json schemaCase at both versions: discovery
// fails with its code after one tools/list and no call.
func schemaCase(t *testing.T, id string) {
	f := loadMCPFixture(t)
	var tc *mcpSchemaCase
	for i := range f.SchemaCases {
		if f.SchemaCases[i].ID == id {
			tc = &f.SchemaCases[i]
		}
	}
	require.NotNil(t, tc, "schemaCase %s in mcp_tools.json", id)
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, tc.Tool), version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			assert.Nil(t, catalog)
			assert.Equal(t, tc.ErrorCode, purramcp.CodeOf(err), "case %s at %s", tc.ID, version)
			lists, calls := h.counts()
			assert.Equal(t, 1, lists, "case %s at %s", tc.ID, version)
			assert.Equal(t, 0, calls, "case %s at %s", tc.ID, version)
		})
	}
}

// TestBehaviorF7_UnknownDefaultAnnotation: "default" is not in the profile.
func TestBehaviorF7_UnknownDefaultAnnotation(t *testing.T) {
	schemaCase(t, "unknown-default-annotation")
}

// TestBehaviorF8_UnknownVendorOutputAnnotation: an x-* keyword in the output.
func TestBehaviorF8_UnknownVendorOutputAnnotation(t *testing.T) {
	schemaCase(t, "unknown-vendor-output-annotation")
}

// TestBehaviorF9_OtherInputDialect: a draft-07 root $schema on the input.
func TestBehaviorF9_OtherInputDialect(t *testing.T) {
	schemaCase(t, "other-input-dialect")
}

// TestBehaviorF10_OtherOutputDialect: an unknown root $schema on the output.
func TestBehaviorF10_OtherOutputDialect(t *testing.T) {
	schemaCase(t, "other-output-dialect")
}

// TestBehaviorF11_NestedDialect: $schema below the root.
func TestBehaviorF11_NestedDialect(t *testing.T) {
	schemaCase(t, "nested-dialect")
}

// TestBehaviorF12_ReferenceWithRecognizedDialect: the 2020-12 declaration
// does not admit $ref.
func TestBehaviorF12_ReferenceWithRecognizedDialect(t *testing.T) {
	schemaCase(t, "reference-with-recognized-dialect")
}

// TestBehaviorF13_SchemaBytesIncludeDialect: 74 compact bytes with the
// declaration (17 without) against maxSchemaBytes 60.
func TestBehaviorF13_SchemaBytesIncludeDialect(t *testing.T) {
	tool := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema"}}`)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, tool), version)
		_, err := discoverDefault(t, h, purramcp.Limits{MaxSchemaBytes: 60})
		assert.Equal(t, purramcp.CodeSchemaUnsupported, purramcp.CodeOf(err), version)
		_, calls := h.counts()
		assert.Zero(t, calls)
	})
}

// TestBehaviorG7_DeclaredDialectSnapshot: the declaration stays in both
// snapshot schemas (and so in the digest) and leaves the argument contract.
func TestBehaviorG7_DeclaredDialectSnapshot(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, _ := discoverDeclared(t, version, nil)
		snap := catalog.Snapshot()
		assert.Equal(t, dialect202012, snap.Entries[0].InputSchema["$schema"], "G7 at %s", version)
		assert.Equal(t, dialect202012, snap.Entries[0].OutputSchema["$schema"], "G7 at %s", version)
		if version == purramcp.ProtocolVersion20251125 {
			assert.Equal(t, "4f50042f2d82970db42ef5e7437557a2722ec73e5b2d700c035538493dd0448c", snap.RevisionDigest)
		}
		assert.NotEqual(t, f.RevisionDigest, snap.RevisionDigest, "G7 at %s: differs from the plain tool", version)
		reg := catalog.Registrations()[0]
		assert.NotContains(t, reg.InputSchema, "$schema", "G7 at %s", version)
		assert.NotContains(t, reg.ArgumentContract.Schema(), "$schema", "G7 at %s", version)
	})
}

// TestBehaviorH17_DeclaredDialectKeepsConstraints: the declaration weakens
// nothing: "too long" fails without a call, "a" runs.
func TestBehaviorH17_DeclaredDialectKeepsConstraints(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, h := discoverDeclared(t, version, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`))
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"too long"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode, "H17 at %s", version)
		_, calls := h.counts()
		assert.Equal(t, 0, calls, "H17 at %s", version)

		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}}, res.Content, "H17 at %s", version)
		assert.Empty(t, res.ErrorCode)
		_, calls = h.counts()
		assert.Equal(t, 1, calls, "H17 at %s", version)
	})
}

// TestBehaviorH18_DeclaredDialectOutputChecked: a wrong structured result
// from the declared tool fails mcp_result_invalid after one call.
func TestBehaviorH18_DeclaredDialectOutputChecked(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, h := discoverDeclared(t, version, json.RawMessage(`{"content":[],"structuredContent":{"count":"wrong"}}`))
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultInvalid}, res, "H18 at %s", version)
		_, calls := h.counts()
		assert.Equal(t, 1, calls, "H18 at %s", version)
	})
}
