package purramcp_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// Result conversion: a tools/call result becomes an envelope or a code,
// checked in order (isError, block count, result size, content, structured
// output).

// sharedRow runs the mcp_tools.json case id through discovery and Run at
// both negotiated versions (one test per row).
func sharedRow(t *testing.T, id string) {
	f := loadMCPFixture(t)
	var tc *mcpCallCase
	for i := range f.Cases {
		if f.Cases[i].ID == id {
			tc = &f.Cases[i]
		}
	}
	require.NotNil(t, tc, "case %s in mcp_tools.json", id)
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			runSharedCase(t, f, *tc, version)
		})
	}
}

func runSharedCase(t *testing.T, f mcpFixture, tc mcpCallCase, version string) sessionHarness {
	var limits purramcp.Limits
	if tc.Limits != nil {
		limits.MaxResultBytes, limits.MaxContentBlocks = tc.Limits.MaxResultBytes, tc.Limits.MaxContentBlocks
	}
	var h sessionHarness
	if tc.Malformed {
		raw := &rawServer{modern: version == purramcp.ProtocolVersion20260728,
			pages: []string{toolsPage(t, "", f.Tool)},
			call:  func(json.RawMessage) (string, *jsonrpcError) { return string(tc.Result), nil }}
		h = rawHarness(t, raw)
	} else {
		h = sdkHarness(t, newSDKServer(t, tc.Result, f.Tool), version)
	}
	require.Equal(t, version, h.monitor.ProtocolVersion(), "case %s", tc.ID)
	catalog, err := discoverDefault(t, h, limits)
	require.NoError(t, err, "case %s", tc.ID)
	regs := catalog.Registrations()
	require.Len(t, regs, 1)
	res, err := regs[0].Run(t.Context(), tc.Arguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
	require.NoError(t, err, "case %s", tc.ID)

	want := ""
	if tc.ErrorCode != nil {
		want = *tc.ErrorCode
	}
	assert.Equal(t, want, res.ErrorCode, "case %s", tc.ID)
	assert.Equal(t, "not_started", res.EffectState, "case %s", tc.ID)
	lists, calls := h.counts()
	assert.Equal(t, 1, lists, "case %s: tools/list requests", tc.ID)
	wantCalls := 1
	if want == purramcp.CodeInvalidArguments {
		wantCalls = 0
	}
	assert.Equal(t, wantCalls, calls, "case %s: tools/call requests", tc.ID)
	if want == "" {
		var result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(tc.Result, &result))
		text := []string{}
		for _, b := range result.Content {
			text = append(text, b.Text)
		}
		assert.Equal(t, purramcp.Envelope{Text: text, Structured: result.StructuredContent}, res.Content, "case %s", tc.ID)
		assert.Equal(t, decodeObject(t, tc.Arguments), decodeObject(t, h.lastArguments()), "case %s: arguments sent", tc.ID)
	} else {
		assert.Equal(t, emptyEnvelope, res.Content, "case %s", tc.ID)
		encoded, err := json.Marshal(res)
		require.NoError(t, err)
		assert.NotContains(t, string(encoded), "private", "case %s: no remote text", tc.ID)
		assert.NotContains(t, string(encoded), "never echo", "case %s: no remote text", tc.ID)
	}
	assert.NoError(t, h.session.Ping(t.Context(), nil), "case %s: session left open", tc.ID)
	return h
}

// TestBehaviorH1_Valid: {q:"猫"} → {text:["found"], structured:{count:1}}.
func TestBehaviorH1_Valid(t *testing.T) { sharedRow(t, "valid") }

// TestBehaviorH2_UnicodeInteger: 😀 is one code point; 1.0 is an integer and
// the server receives n=1.
func TestBehaviorH2_UnicodeInteger(t *testing.T) {
	sharedRow(t, "unicode_integer")
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, nil)
	res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"\ud83d\ude00","n":1.0}`), purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode, "H2")
	assert.Equal(t, `{"n":1,"q":"😀"}`, string(h.lastArguments()), "H2: the wire carries n=1")
}

// TestBehaviorH3_NoCoercion: a JSON-looking string is not an array.
func TestBehaviorH3_NoCoercion(t *testing.T) { sharedRow(t, "no_coercion") }

// TestBehaviorH4_ExtraArgument: additionalProperties false holds.
func TestBehaviorH4_ExtraArgument(t *testing.T) { sharedRow(t, "extra_argument") }

// TestBehaviorH5_MissingArgument: q is required.
func TestBehaviorH5_MissingArgument(t *testing.T) { sharedRow(t, "missing_argument") }

// TestBehaviorH6_MissingStructured: text that looks like JSON never stands in
// for required structured content.
func TestBehaviorH6_MissingStructured(t *testing.T) { sharedRow(t, "missing_structured") }

// TestBehaviorH7_WrongOutput: {count:"1"} fails the output schema.
func TestBehaviorH7_WrongOutput(t *testing.T) { sharedRow(t, "wrong_output") }

// TestBehaviorH8_ExtraOutput: an extra property fails the output schema and
// is never echoed.
func TestBehaviorH8_ExtraOutput(t *testing.T) { sharedRow(t, "extra_output") }

// TestBehaviorH9_ToolError: isError → mcp_tool_error; remote text not echoed.
func TestBehaviorH9_ToolError(t *testing.T) { sharedRow(t, "tool_error") }

// TestBehaviorH10_ImageBlock: a non-text block is unsupported.
func TestBehaviorH10_ImageBlock(t *testing.T) { sharedRow(t, "image") }

// TestBehaviorH11_ResourceLink: a resource_link block is unsupported.
func TestBehaviorH11_ResourceLink(t *testing.T) { sharedRow(t, "resource_link") }

// TestBehaviorH12_ResultSize: a ~371-byte result over maxResultBytes 256.
func TestBehaviorH12_ResultSize(t *testing.T) { sharedRow(t, "result_size") }

// TestBehaviorH13_ContentCount: two blocks over maxContentBlocks 1.
func TestBehaviorH13_ContentCount(t *testing.T) { sharedRow(t, "content_count") }

// TestBehaviorH14_InvalidWireContent: a text block whose text is a number
// fails go-sdk's decoding → mcp_result_invalid; the session stays usable.
func TestBehaviorH14_InvalidWireContent(t *testing.T) { sharedRow(t, "invalid_wire_content") }

// TestBehaviorH15_TextNeverPromoted: a text-only tool's JSON-looking text
// stays text; structured is null.
func TestBehaviorH15_TextNeverPromoted(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	forEachVersion(t, func(t *testing.T, version string) {
		srv := newSDKServer(t, json.RawMessage(`{"content":[{"type":"text","text":"{\"count\":3}"}]}`), tool)
		h := sdkHarness(t, srv, version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{`{"count":3}`}}, EffectState: "not_started"},
			res, "H15 at %s", version)
	})
}

// TestGap14_StructuredWithoutOutputSchema:
// without an output schema, structuredContent passes through unvalidated when
// it is an object within the limits; anything else fails mcp_result_invalid
// (too large: mcp_result_too_large).
func TestGap14_StructuredWithoutOutputSchema(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	deep := strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)
	for _, tc := range []struct {
		id, structured string
		limits         purramcp.Limits
		want           string
		structuredWant map[string]any
	}{
		{"object", `{"any":[1,"x",null],"nested":{"ok":true}}`, purramcp.Limits{}, "",
			map[string]any{"any": []any{1.0, "x", nil}, "nested": map[string]any{"ok": true}}},
		{"empty_object", `{}`, purramcp.Limits{}, "", map[string]any{}},
		{"null_is_absent", `null`, purramcp.Limits{}, "", nil},
		{"array", `[1]`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"string", `"x"`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"number", `1`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"boolean", `true`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"too_deep", deep, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"too_large", `{"s":"` + strings.Repeat("x", 300) + `"}`, purramcp.Limits{MaxResultBytes: 256}, purramcp.CodeResultTooLarge, nil},
	} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)},
					call: func(json.RawMessage) (string, *jsonrpcError) {
						return `{"content":[{"type":"text","text":"t"}],"structuredContent":` + tc.structured + `}`, nil
					}}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, tc.limits, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				require.NoError(t, err, tc.id)
				assert.Equal(t, tc.want, res.ErrorCode, "%s modern=%v", tc.id, modern)
				assert.Equal(t, "not_started", res.EffectState, tc.id)
				if tc.want == "" {
					assert.Equal(t, purramcp.Envelope{Text: []string{"t"}, Structured: tc.structuredWant}, res.Content, "%s modern=%v", tc.id, modern)
				} else {
					assert.Equal(t, emptyEnvelope, res.Content, "%s modern=%v", tc.id, modern)
				}
				_, calls := h.counts()
				assert.Equal(t, 1, calls, "%s modern=%v", tc.id, modern)
			}
		})
	}
}

// TestRun_ResultShapes covers result conversion beyond the shared rows.
func TestRun_ResultShapes(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	for _, tc := range []struct {
		id, result, want string
		tool             json.RawMessage
		wantEnvelope     *purramcp.Envelope
	}{
		{"structured_without_output_schema", `{"content":[{"type":"text","text":"t"}],"structuredContent":{"a":[1,"x"]}}`, "", textOnly,
			&purramcp.Envelope{Text: []string{"t"}, Structured: map[string]any{"a": []any{1.0, "x"}}}},
		{"structured_array", `{"content":[],"structuredContent":[1]}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"structured_string", `{"content":[],"structuredContent":"x"}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"unknown_block_type", `{"content":[{"type":"video"}]}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"audio_block", `{"content":[{"type":"audio","data":"eA==","mimeType":"audio/wav"}]}`, purramcp.CodeResultUnsupported, textOnly, nil},
		{"embedded_resource", `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`, purramcp.CodeResultUnsupported, textOnly, nil},
		{"input_required", `{"content":[],"resultType":"input_required","inputRequests":{}}`, purramcp.CodeResultUnsupported, textOnly, nil},
		{"wrong_field_type", `{"content":"nope"}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"missing_content", `{"structuredContent":{"count":1}}`, "", f.Tool,
			&purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}}},
		{"tool_error_first", `{"content":[{"type":"image","data":"eA==","mimeType":"image/png"}],"isError":true}`, purramcp.CodeToolError, textOnly, nil},
	} {
		t.Run(tc.id, func(t *testing.T) {
			raw := &rawServer{pages: []string{toolsPage(t, "", tc.tool)},
				call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.ErrorCode, tc.id)
			if tc.wantEnvelope != nil {
				assert.Equal(t, *tc.wantEnvelope, res.Content, tc.id)
			} else {
				assert.Equal(t, emptyEnvelope, res.Content, tc.id)
			}
			assert.NoError(t, h.session.Ping(t.Context(), nil), tc.id)
		})
	}
}

// TestResult_UndecodableContent: go-sdk fails the whole result for an
// unknown block type, a null block or bad base64; the adapter reports
// mcp_result_invalid after exactly one call and the session stays usable.
func TestResult_UndecodableContent(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct{ id, result string }{
		{"unknown_type", `{"content":[{"type":"video","data":"private"}],"structuredContent":{"count":1}}`},
		{"future_type_after_text", `{"content":[{"type":"text","text":"ok"},{"type":"hologram"}],"structuredContent":{"count":1}}`},
		{"null_block", `{"content":[null],"structuredContent":{"count":1}}`},
		{"bad_base64", `{"content":[{"type":"image","data":"%%%","mimeType":"image/png"}],"structuredContent":{"count":1}}`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", f.Tool)},
					call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, purramcp.Limits{}, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				require.NoError(t, err, tc.id)
				assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultInvalid},
					res, "%s modern=%v", tc.id, modern)
				lists, calls := h.counts()
				assert.Equal(t, 1, lists, tc.id)
				assert.Equal(t, 1, calls, "%s modern=%v", tc.id, modern)
				assert.NoError(t, h.session.Ping(t.Context(), nil), "%s modern=%v: session alive", tc.id, modern)
				assert.NoError(t, h.monitor.Check(0), "%s: the monitor stays open", tc.id)
			}
		})
	}
}

// TestResult_InputRequestsOneCall: a result asking for more input fails
// mcp_result_unsupported after exactly one tools/call, because
// CatalogMonitor.ClientOptions disables go-sdk's multi-round-trip retries. The
// control client, built without those options, sends tools/call again.
func TestResult_InputRequestsOneCall(t *testing.T) {
	f := loadMCPFixture(t)
	elicit := `{"content":[],"resultType":"input_required","inputRequests":{"q1":{"method":"elicitation/create",` +
		`"params":{"message":"private question","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s"}`
	loadShed := `{"content":[],"resultType":"input_required","inputRequests":{}}`
	for _, tc := range []struct{ id, result string }{{"elicitation", elicit}, {"load_shedding", loadShed}} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", f.Tool)},
					call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, purramcp.Limits{}, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				require.NoError(t, err, tc.id)
				assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultUnsupported},
					res, "%s modern=%v", tc.id, modern)
				_, calls := h.counts()
				assert.Equal(t, 1, calls, "%s modern=%v: exactly one tools/call reached the server", tc.id, modern)
			}
		})
	}

	// Control: go-sdk's default client retries load shedding (3 requests),
	// which is why Attach refuses a session whose client the monitor did not
	// configure (mcp_binding_invalid), so no catalog can be discovered over it.
	raw := &rawServer{pages: []string{toolsPage(t, "", f.Tool)},
		call: func(json.RawMessage) (string, *jsonrpcError) { return loadShed, nil }}
	monitor := purramcp.NewCatalogMonitor()
	cs, err := raw.startWith(t, &mcp.ClientOptions{}, monitor)
	assert.Equal(t, purramcp.CodeBindingInvalid, purramcp.CodeOf(err), "control: a client without the monitor's options")
	_, err = purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
	assert.Equal(t, purramcp.CodeNotInitialized, purramcp.CodeOf(err), "control: the monitor never accepted a version")
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remote.search", Arguments: map[string]any{"a": 1}})
	require.Error(t, err)
	_, calls := raw.counts()
	assert.Equal(t, 3, calls, "control: without the monitor's options go-sdk re-sends tools/call")
}

// TestResult_ResultSizeIsJSSize: the result size Run charges, with the
// structured content measured apart from the result, equals jssize.Size of
// the whole result for every fixture result and values JavaScript and Go
// spell differently.
func TestResult_ResultSizeIsJSSize(t *testing.T) {
	f := loadMCPFixture(t)
	var results []*mcp.CallToolResult
	for _, tc := range f.Cases {
		var r mcp.CallToolResult
		if json.Unmarshal(tc.Result, &r) == nil {
			results = append(results, &r)
		}
	}
	require.Len(t, results, 13, "decodable fixture results")
	results = append(results, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<\u2029>"}},
		StructuredContent: map[string]any{"z": math.Copysign(0, -1), "s": "\xff<&>", "a": []any{1e-7, nil}},
		IsError:           true}, &mcp.CallToolResult{})
	for i, r := range results {
		want, err := jssize.Size(r)
		require.NoError(t, err)
		got, err := purramcp.ResultSize(r, math.MaxInt)
		require.NoError(t, err)
		assert.Equal(t, want, got, "result %d", i)
		for _, limit := range []int{0, want / 2, want - 1, want} {
			n, err := purramcp.ResultSize(r, limit)
			require.NoError(t, err)
			assert.Equal(t, want > limit, n > limit, "result %d under limit %d: %d", i, limit, n)
			if want <= limit {
				assert.Equal(t, want, n, "result %d at limit %d", i, limit)
			}
		}
	}
}

// TestValidateWithMember_MatchesSnapshotPath is the differential test of
// Run's result validation: validating the decoded envelope in place (member
// names ordered as a snapshot orders them, containers kept when already in
// decoded form) reaches exactly the outcome of the path it replaced,
// ValidateValue of the envelope and then of its structured member, each on
// a fresh snapshot: the same error code, keyword and path, including which
// violation comes first and when the work budget runs out, and an equal
// result. Random schemas inside the profile, values decoded by
// encoding/json as go-sdk decodes results, some respelled as −0, under
// roomy and tight limits.
func TestValidateWithMember_MatchesSnapshotPath(t *testing.T) {
	const schemas, valuesPerSchema = 400, 10
	var kept, copied, failed int
	for i := range schemas {
		g := newDiffGen(uint64(5000 + i))
		root := g.schema(3)
		root["type"] = "object"
		if _, ok := root["properties"]; !ok && g.chance(0.6) {
			g.children(root, 3)
		}
		limits := purramcp.ContractLimits{ValidationSteps: 100000}
		switch i % 4 {
		case 1:
			limits.ValidationSteps = 1 + g.r.IntN(40) // the budget runs out part way
		case 2:
			limits.OutputNodes, limits.OutputDepth = 4+g.r.IntN(30), 2+g.r.IntN(4)
		}
		inner, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "inner", SchemaVersion: "1",
			Schema: json.RawMessage(g.encode(nil, root)), Limits: limits})
		require.NoError(t, err)
		outer, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "envelope", SchemaVersion: "1",
			Schema: map[string]any{"type": "object"}, Limits: limits})
		require.NoError(t, err)
		for j := range valuesPerSchema {
			label := "schema #" + strconv.Itoa(i) + " value #" + strconv.Itoa(j)
			text := g.encode(nil, g.objectFor(root, 4))
			if j%3 == 0 {
				text = g.encode(nil, g.valueFor(root, 4))
			}
			envelope := func() map[string]any {
				var structured any
				require.NoError(t, json.Unmarshal(text, &structured), label)
				if j%5 == 4 {
					if m, ok := structured.(map[string]any); ok {
						m["negativeZero"] = math.Copysign(0, -1)
					}
				}
				return map[string]any{"text": []any{"one", "two"}, "structured": structured}
			}
			want, wantErr := outer.ValidateValue(envelope())
			if wantErr == nil {
				_, wantErr = inner.ValidateValue(want["structured"])
				if wantErr != nil {
					want = nil
				}
			}
			value := envelope()
			got, err := purramcp.ValidateWithMember(outer, value, "structured", inner)
			require.Equal(t, wantErr, err, "%s: %s", label, text)
			require.Equal(t, want, got, "%s: %s", label, text)
			switch {
			case err != nil:
				failed++
			case reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(value).UnsafePointer():
				kept++
			default:
				copied++
			}
		}
	}
	t.Logf("%d kept in place, %d copied, %d failed", kept, copied, failed)
	require.Greater(t, kept, 500)
	require.Greater(t, copied, 50)
	require.Greater(t, failed, 500)
}

// Fuzz targets for the MCP boundary: result conversion here, discovery
// pages in paging_test.go and bindings in bindings_test.go. Each iteration
// connects its own in-memory session, closed at the iteration's cleanup,
// and checks that no goroutine outlives it.

// fuzzResultCodes are the codes Run may report for a result the server
// answered: conversion failures and an undecodable result.
var fuzzResultCodes = []string{purramcp.CodeResultInvalid, purramcp.CodeResultTooLarge, purramcp.CodeResultUnsupported,
	purramcp.CodeToolError}

// fuzzResultSchemas are the output schemas FuzzConvertResult chooses from:
// the fixture tool's, none, the declared-dialect tool's (a root $schema),
// benchOutputSchema and the smallest object schema.
func fuzzResultSchemas(t testing.TB, fx mcpFixture) []json.RawMessage {
	t.Helper()
	outputOf := func(tool json.RawMessage) json.RawMessage {
		var rt rawTool
		require.NoError(t, json.Unmarshal(tool, &rt))
		require.NotEmpty(t, rt.OutputSchema)
		return rt.OutputSchema
	}
	return []json.RawMessage{outputOf(fx.Tool), nil, outputOf(fx.DeclaredDialectTool),
		json.RawMessage(benchOutputSchema), json.RawMessage(`{"type":"object"}`)}
}

// fuzzResultSeed is one FuzzConvertResult input.
type fuzzResultSeed struct {
	result                    string
	schema                    uint8
	schemaText                string
	maxResultBytes, maxBlocks uint32
	modern                    bool
}

// fuzzResultSeeds returns every mcp_tools.json call case under the fixture
// schema at both handshakes, with its limits, and every structured_output.json
// case text as structured content under its own schema text.
func fuzzResultSeeds(t testing.TB, fx mcpFixture) []fuzzResultSeed {
	t.Helper()
	var seeds []fuzzResultSeed
	for _, tc := range fx.Cases {
		s := fuzzResultSeed{result: string(tc.Result)}
		if tc.Limits != nil {
			s.maxResultBytes, s.maxBlocks = uint32(tc.Limits.MaxResultBytes), uint32(tc.Limits.MaxContentBlocks)
		}
		seeds = append(seeds, s)
		s.modern = true
		seeds = append(seeds, s)
	}
	for i, tc := range loadOutputVectors(t).Cases {
		seeds = append(seeds, fuzzResultSeed{
			result: `{"content":[{"type":"text","text":"case"}],"structuredContent":` + tc.Text + `}`,
			schema: uint8(i), schemaText: string(tc.Schema), modern: i%2 == 0})
	}
	return seeds
}

// FuzzConvertResult serves fuzzed tools/call result JSON from the raw
// scripted server for a tool whose output schema is chosen from the fixture
// or, when it compiles, is fuzzed schema text, under fuzzed MaxResultBytes
// and MaxContentBlocks. Run sends exactly one tools/call and
// never returns an error; a failure is a known result code with the empty
// envelope, predicted where the order of the checks decides it (isError, then the
// block count, then the result size, counted independently from the
// go-sdk decoding); a success has the text blocks in order and structured
// content that passes the output contract, and fits both limits. The
// fixture's own cases keep their expected codes.
func FuzzConvertResult(f *testing.F) {
	fx := loadMCPFixture(f)
	schemas := fuzzResultSchemas(f, fx)
	seeds := fuzzResultSeeds(f, fx)
	require.Len(f, seeds, 2*14+62, "seed count")
	for _, s := range seeds {
		f.Add([]byte(s.result), s.schema, s.schemaText, s.maxResultBytes, s.maxBlocks, s.modern)
	}
	f.Add([]byte(`{}`), uint8(1), "", uint32(6), uint32(0), true) // arguments over MaxResultBytes
	expected := map[string]string{}                               // compact fixture result → code, under the fixture schema and limits
	for _, tc := range fx.Cases {
		if tc.ErrorCode == nil || *tc.ErrorCode != purramcp.CodeInvalidArguments {
			var buf bytes.Buffer
			require.NoError(f, json.Compact(&buf, tc.Result))
			expected[buf.String()] = ""
			if tc.ErrorCode != nil {
				expected[buf.String()] = *tc.ErrorCode
			}
		}
	}
	f.Fuzz(func(t *testing.T, result []byte, schema uint8, schemaText string, maxResultBytes, maxBlocks uint32,
		modern bool) {
		if !json.Valid(result) {
			return // the raw server can only send JSON; undecodable results are behaviour tests
		}
		output, fromFixture := schemas[int(schema)%len(schemas)], true
		if schemaText != "" && json.Valid([]byte(schemaText)) {
			if _, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
				Schema: json.RawMessage(schemaText)}); err == nil {
				output, fromFixture = json.RawMessage(schemaText), false
			}
		}
		limits := purramcp.Limits{MaxResultBytes: fuzzLimit(maxResultBytes, 65536),
			MaxContentBlocks: fuzzLimit(maxBlocks, 128), Timeout: 10 * time.Second}
		fuzzNoGoroutineGrowth(t)
		tool := withField(t, fx.Tool, "outputSchema", nil)
		if output != nil {
			tool = withField(t, fx.Tool, "outputSchema", output)
		}
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)},
			call: func(json.RawMessage) (string, *jsonrpcError) { return string(result), nil }}
		h := rawHarness(t, raw)
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fuzz", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
		if !fromFixture && err != nil {
			// A compiled schema may still be over MaxSchemaBytes as compact JSON.
			require.Equal(t, purramcp.CodeSchemaUnsupported, purramcp.CodeOf(err), "discovery of schema %q", schemaText)
			return
		}
		require.NoError(t, err, "discovery of output schema %s", output)

		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), fuzzArguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
		require.NoError(t, err, "Run with result %q", result)
		require.Equal(t, "not_started", res.EffectState, "result %q", result)
		lists, calls := h.counts()
		if _, err := fuzzInputContract(t, fx, limits).Parse(string(fuzzArguments)); err != nil {
			// MaxResultBytes also bounds the argument text.
			require.Equal(t, [2]int{1, 0}, [2]int{lists, calls}, "tools/list and tools/call requests")
			require.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode, "MaxResultBytes %d", limits.MaxResultBytes)
			return
		}
		require.Equal(t, [2]int{1, 1}, [2]int{lists, calls}, "tools/list and tools/call requests for %q", result)

		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, result))
		if want, ok := expected[buf.String()]; ok && fromFixture && schema%uint8(len(schemas)) == 0 &&
			fuzzFixtureLimits(fx, buf.String(), limits) {
			assert.Equal(t, want, res.ErrorCode, "fixture result %s", result)
		}
		fuzzCheckResult(t, result, output, limits, res)
	})
}

// fuzzArguments are the arguments of every FuzzConvertResult call.
var fuzzArguments = json.RawMessage(`{"q":"a"}`)

// fuzzInputContract is the fixture tool's input contract under limits, as
// discovery compiles it: MaxResultBytes bounds the argument text and value.
func fuzzInputContract(t *testing.T, fx mcpFixture, limits purramcp.Limits) *purramcp.Contract {
	resolved, err := purramcp.ResolveLimits(limits)
	require.NoError(t, err)
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	require.NoError(t, json.Unmarshal(fx.Tool, &tool))
	c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
		Schema: tool.InputSchema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
	require.NoError(t, err)
	return c
}

// fuzzFixtureLimits reports whether limits are the ones the fixture case
// with this compact result runs under.
func fuzzFixtureLimits(fx mcpFixture, result string, limits purramcp.Limits) bool {
	for _, tc := range fx.Cases {
		var buf bytes.Buffer
		if json.Compact(&buf, tc.Result) != nil || buf.String() != result {
			continue
		}
		var want purramcp.Limits
		if tc.Limits != nil {
			want.MaxResultBytes, want.MaxContentBlocks = tc.Limits.MaxResultBytes, tc.Limits.MaxContentBlocks
		}
		return want.MaxResultBytes == limits.MaxResultBytes && want.MaxContentBlocks == limits.MaxContentBlocks
	}
	return false
}

// fuzzCheckResult checks Run's result against result as go-sdk decodes it.
func fuzzCheckResult(t *testing.T, result []byte, output json.RawMessage, limits purramcp.Limits,
	res purramcp.ToolResult) {
	resolved, err := purramcp.ResolveLimits(limits)
	require.NoError(t, err)
	var decoded mcp.CallToolResult
	decodeErr := json.Unmarshal(result, &decoded)
	if res.ErrorCode != "" {
		require.Contains(t, fuzzResultCodes, res.ErrorCode, "result %q", result)
		require.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started",
			ErrorCode: res.ErrorCode}, res, "failed result for %q", result)
	}
	if decodeErr != nil {
		require.Equal(t, purramcp.CodeResultInvalid, res.ErrorCode, "undecodable result %q", result)
		return
	}
	if fuzzDepth(result) > 990 {
		return // go-sdk's 1000-level bound applies to the whole JSON-RPC message
	}
	size, sizeErr := jssize.Size(&decoded) // the full encoding/json measure
	require.NoError(t, sizeErr, "size of the decoded result %q", result)
	switch {
	case decoded.IsError:
		require.Equal(t, purramcp.CodeToolError, res.ErrorCode, "isError result %q", result)
		return
	case len(decoded.Content) > resolved.MaxContentBlocks || size > resolved.MaxResultBytes:
		require.Equal(t, purramcp.CodeResultTooLarge, res.ErrorCode, "result %q: %d blocks, %d bytes", result,
			len(decoded.Content), size)
		return
	}
	require.NotEqual(t, purramcp.CodeResultTooLarge, res.ErrorCode, "result %q: %d blocks, %d bytes", result,
		len(decoded.Content), size)
	if res.ErrorCode != "" {
		return
	}
	text := []string{}
	for _, block := range decoded.Content {
		tc, ok := block.(*mcp.TextContent)
		require.True(t, ok, "result %q succeeded with a %T block", result, block)
		text = append(text, tc.Text)
	}
	require.Equal(t, text, res.Content.Text, "text of result %q", result)
	require.False(t, decoded.NeedsInput(), "result %q succeeded asking for input", result)
	if decoded.StructuredContent == nil {
		require.Nil(t, res.Content.Structured, "structured content of result %q", result)
	} else {
		require.Equal(t, decoded.StructuredContent, any(res.Content.Structured), "structured content of %q", result)
	}
	if output != nil {
		var schema map[string]any // as go-sdk decodes it; the root $schema is not compiled
		require.NoError(t, json.Unmarshal(output, &schema))
		delete(schema, "$schema")
		contract, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
			Schema: schema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
		require.NoError(t, err, "output schema %s", output)
		got, err := contract.ValidateValue(res.Content.Structured)
		require.NoError(t, err, "structured content of result %q under %s", result, output)
		require.Equal(t, res.Content.Structured, got, "structured content of result %q", result)
	}
}

// fuzzDepth is the deepest nesting of arrays and objects in JSON text.
func fuzzDepth(text []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range text {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
