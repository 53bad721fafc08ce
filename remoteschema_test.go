package purramcp_test

import (
	"encoding/json"
	"reflect"
	"testing"

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
		if err != nil {
			t.Fatalf("F1 at %s: %v", version, err)
		}
		entry := catalog.Snapshot().Entries[0]
		if !reflect.DeepEqual(entry.InputSchema, tool["inputSchema"]) {
			t.Errorf("F1 at %s: got %v, want %v", version, entry.InputSchema, tool["inputSchema"])
		}
		if !reflect.DeepEqual(entry.OutputSchema, tool["outputSchema"]) {
			t.Errorf("F1 at %s: got %v, want %v", version, entry.OutputSchema, tool["outputSchema"])
		}
		reg := catalog.Registrations()[0]
		if !reflect.DeepEqual(reg.InputSchema, tool["inputSchema"]) {
			t.Errorf("F1 at %s: got %v, want %v", version, reg.InputSchema, tool["inputSchema"])
		}
		if got := reg.ArgumentContract.Schema(); !reflect.DeepEqual(got, tool["inputSchema"]) {
			t.Errorf("F1 at %s: got %v, want %v", version, got, tool["inputSchema"])
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("calls = %v, want 0", calls)
		}
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
	if err != nil {
		t.Fatalf("declared dialect at %s: %v", version, err)
	}
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
		if got := reg.ArgumentContract.Schema(); !reflect.DeepEqual(got, plain["inputSchema"]) {
			t.Errorf("F2 at %s: declaration removed: got %v, want %v", version, got, plain["inputSchema"])
		}
		if !reflect.DeepEqual(reg.InputSchema, plain["inputSchema"]) {
			t.Errorf("F2 at %s: got %v, want %v", version, reg.InputSchema, plain["inputSchema"])
		}
	})
}

// TestBehaviorF3_TextOnlyTool: no output schema → outputSchema null.
func TestBehaviorF3_TextOnlyTool(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	h := sdkHarness(t, newSDKServer(t, nil, tool), purramcp.ProtocolVersion20251125)
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	snap := catalog.Snapshot()
	if snap.Entries[0].OutputSchema != nil {
		t.Errorf("snap.Entries[0].OutputSchema = %v, want nil", snap.Entries[0].OutputSchema)
	}
	if snap.RevisionDigest != "9828c43572192bfbeca54e94830f6658f448945c066240f375fa4d978d043e3f" {
		t.Errorf("snap.RevisionDigest = %q, want %q", snap.RevisionDigest, "9828c43572192bfbeca54e94830f6658f448945c066240f375fa4d978d043e3f")
	}
	b, err := json.Marshal(snap.Entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeObject(t, b)["outputSchema"]; !ok {
		t.Errorf("no key %q", "outputSchema")
	}
	if got := decodeObject(t, b)["outputSchema"]; got != nil {
		t.Errorf("decodeObject(t, b)[\"outputSchema\"] = %v, want nil", got)
	}
}

// TestBehaviorF4_SmokeSchemas: the installed smoke's schemas compile and
// give the smoke digest; {} runs, anything more is rejected.
func TestBehaviorF4_SmokeSchemas(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		srv := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":3}}`), json.RawMessage(smokeCountTool))
		h := sdkHarness(t, srv, version)
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "local", countBinding("count"),
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		if err != nil {
			t.Fatalf("F4 at %s: %v", version, err)
		}
		if version == purramcp.ProtocolVersion20251125 {
			if got := catalog.Snapshot().RevisionDigest; got != smokeDigest {
				t.Errorf("F4 at %s: got %q, want %q", version, got, smokeDigest)
			}
		}
		reg := catalog.Registrations()[0]
		if reg.Description != "Count" {
			t.Errorf("F4: an empty description falls back to the title: got %q, want %q", reg.Description, "Count")
		}
		res, err := reg.Run(t.Context(), json.RawMessage(`{}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 3.0}},
			EffectState: "not_started"}); !reflect.DeepEqual(res, want) {
			t.Errorf("F4 at %s: got %v, want %v", version, res, want)
		}
		res, err = reg.Run(t.Context(), json.RawMessage(`{"x":1}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("F4 at %s: got %q, want %q", version, res.ErrorCode, purramcp.CodeInvalidArguments)
		}
		_, calls := h.counts()
		if calls != 1 {
			t.Errorf("F4 at %s: got %v, want %v", version, calls, 1)
		}
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
		if err != nil {
			t.Fatalf("F5 at %s: %v", version, err)
		}
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), json.RawMessage(`{"value":42}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.Envelope{Text: []string{}, Structured: map[string]any{"written": true}}); !reflect.DeepEqual(res.Content, want) {
			t.Errorf("F5 at %s: got %v, want %v", version, res.Content, want)
		}
		res, err = reg.Run(t.Context(), json.RawMessage(`{"value":"42"}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("F5 at %s: got %q, want %q", version, res.ErrorCode, purramcp.CodeInvalidArguments)
		}
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
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeSchemaUnsupported {
			t.Errorf("F6 at %s: got %q, want %q", version, got, purramcp.CodeSchemaUnsupported)
		}
		lists, calls := h.counts()
		if lists != 1 {
			t.Errorf("F6 at %s: got %v, want %v", version, lists, 1)
		}
		if calls != 0 {
			t.Errorf("F6 at %s: got %v, want 0", version, calls)
		}
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
	if tc == nil {
		t.Fatalf("schemaCase %s in mcp_tools.json: got nil", id)
	}
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, tc.Tool), version)
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != tc.ErrorCode {
				t.Errorf("case %s at %s: got %q, want %q", tc.ID, version, got, tc.ErrorCode)
			}
			lists, calls := h.counts()
			if lists != 1 {
				t.Errorf("case %s at %s: got %v, want %v", tc.ID, version, lists, 1)
			}
			if calls != 0 {
				t.Errorf("case %s at %s: got %v, want %v", tc.ID, version, calls, 0)
			}
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
		if got := purramcp.CodeOf(err); got != purramcp.CodeSchemaUnsupported {
			t.Errorf("%v: got %q, want %q", version, got, purramcp.CodeSchemaUnsupported)
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("calls = %v, want 0", calls)
		}
	})
}

// TestBehaviorG7_DeclaredDialectSnapshot: the declaration stays in both
// snapshot schemas (and so in the digest) and leaves the argument contract.
func TestBehaviorG7_DeclaredDialectSnapshot(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, _ := discoverDeclared(t, version, nil)
		snap := catalog.Snapshot()
		if !reflect.DeepEqual(snap.Entries[0].InputSchema["$schema"], dialect202012) {
			t.Errorf("G7 at %s: got %v, want %v", version, snap.Entries[0].InputSchema["$schema"], dialect202012)
		}
		if !reflect.DeepEqual(snap.Entries[0].OutputSchema["$schema"], dialect202012) {
			t.Errorf("G7 at %s: got %v, want %v", version, snap.Entries[0].OutputSchema["$schema"], dialect202012)
		}
		if version == purramcp.ProtocolVersion20251125 {
			if snap.RevisionDigest != "4f50042f2d82970db42ef5e7437557a2722ec73e5b2d700c035538493dd0448c" {
				t.Errorf("snap.RevisionDigest = %q, want %q", snap.RevisionDigest, "4f50042f2d82970db42ef5e7437557a2722ec73e5b2d700c035538493dd0448c")
			}
		}
		if snap.RevisionDigest == f.RevisionDigest {
			t.Errorf("G7 at %s: differs from the plain tool: got %q, want anything else", version, snap.RevisionDigest)
		}
		reg := catalog.Registrations()[0]
		if _, ok := reg.InputSchema["$schema"]; ok {
			t.Errorf("G7 at %s: has key %q", version, "$schema")
		}
		if _, ok := reg.ArgumentContract.Schema()["$schema"]; ok {
			t.Errorf("G7 at %s: has key %q", version, "$schema")
		}
	})
}

// TestBehaviorH17_DeclaredDialectKeepsConstraints: the declaration weakens
// nothing: "too long" fails without a call, "a" runs.
func TestBehaviorH17_DeclaredDialectKeepsConstraints(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, h := discoverDeclared(t, version, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`))
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"too long"}`), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("H17 at %s: got %q, want %q", version, res.ErrorCode, purramcp.CodeInvalidArguments)
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("H17 at %s: got %v, want %v", version, calls, 0)
		}

		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}}); !reflect.DeepEqual(res.Content, want) {
			t.Errorf("H17 at %s: got %v, want %v", version, res.Content, want)
		}
		if res.ErrorCode != "" {
			t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
		}
		_, calls = h.counts()
		if calls != 1 {
			t.Errorf("H17 at %s: got %v, want %v", version, calls, 1)
		}
	})
}

// TestBehaviorH18_DeclaredDialectOutputChecked: a wrong structured result
// from the declared tool fails mcp_result_invalid after one call.
func TestBehaviorH18_DeclaredDialectOutputChecked(t *testing.T) {
	forEachVersion(t, func(t *testing.T, version string) {
		catalog, _, h := discoverDeclared(t, version, json.RawMessage(`{"content":[],"structuredContent":{"count":"wrong"}}`))
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultInvalid}); !reflect.DeepEqual(res, want) {
			t.Errorf("H18 at %s: got %v, want %v", version, res, want)
		}
		_, calls := h.counts()
		if calls != 1 {
			t.Errorf("H18 at %s: got %v, want %v", version, calls, 1)
		}
	})
}
