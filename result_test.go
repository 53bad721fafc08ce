package purramcp_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	if tc == nil {
		t.Fatalf("case %s in mcp_tools.json: got nil", id)
	}
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
	if got := h.monitor.ProtocolVersion(); got != version {
		t.Fatalf("case %s: got %q, want %q", tc.ID, got, version)
	}
	catalog, err := discoverDefault(t, h, limits)
	if err != nil {
		t.Fatalf("case %s: %v", tc.ID, err)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != 1 {
		t.Fatalf("len(regs) = %d, want %d", got, 1)
	}
	res, err := regs[0].Run(t.Context(), tc.Arguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
	if err != nil {
		t.Fatalf("case %s: %v", tc.ID, err)
	}

	want := ""
	if tc.ErrorCode != nil {
		want = *tc.ErrorCode
	}
	if res.ErrorCode != want {
		t.Errorf("case %s: got %q, want %q", tc.ID, res.ErrorCode, want)
	}
	if res.EffectState != "not_started" {
		t.Errorf("case %s: got %q, want %q", tc.ID, res.EffectState, "not_started")
	}
	lists, calls := h.counts()
	if lists != 1 {
		t.Errorf("case %s: tools/list requests: got %v, want %v", tc.ID, lists, 1)
	}
	wantCalls := 1
	if want == purramcp.CodeInvalidArguments {
		wantCalls = 0
	}
	if calls != wantCalls {
		t.Errorf("case %s: tools/call requests: got %v, want %v", tc.ID, calls, wantCalls)
	}
	if want == "" {
		var result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
		}
		if err := json.Unmarshal(tc.Result, &result); err != nil {
			t.Fatalf("json.Unmarshal(tc.Result, &result): %v", err)
		}
		text := []string{}
		for _, b := range result.Content {
			text = append(text, b.Text)
		}
		if want := (purramcp.Envelope{Text: text, Structured: result.StructuredContent}); !reflect.DeepEqual(res.Content, want) {
			t.Errorf("case %s: got %v, want %v", tc.ID, res.Content, want)
		}
		if got, want := decodeObject(t, h.lastArguments()), decodeObject(t, tc.Arguments); !reflect.DeepEqual(got, want) {
			t.Errorf("case %s: arguments sent: got %v, want %v", tc.ID, got, want)
		}
	} else {
		if !reflect.DeepEqual(res.Content, emptyEnvelope) {
			t.Errorf("case %s: got %v, want %v", tc.ID, res.Content, emptyEnvelope)
		}
		encoded, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(encoded), "private") {
			t.Errorf("case %s: no remote text: %q contains %q", tc.ID, string(encoded), "private")
		}
		if strings.Contains(string(encoded), "never echo") {
			t.Errorf("case %s: no remote text: %q contains %q", tc.ID, string(encoded), "never echo")
		}
	}
	if err := h.session.Ping(t.Context(), nil); err != nil {
		t.Errorf("case %s: session left open: %v", tc.ID, err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("H2: got %q, want empty", res.ErrorCode)
	}
	if got := string(h.lastArguments()); got != `{"n":1,"q":"😀"}` {
		t.Errorf("H2: the wire carries n=1: got %q, want %q", got, `{"n":1,"q":"😀"}`)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{`{"count":3}`}}, EffectState: "not_started"}); !reflect.DeepEqual(res, want) {
			t.Errorf("H15 at %s: got %v, want %v", version, res, want)
		}
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
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if res.ErrorCode != tc.want {
					t.Errorf("%s modern=%v: got %q, want %q", tc.id, modern, res.ErrorCode, tc.want)
				}
				if res.EffectState != "not_started" {
					t.Errorf("%v: got %q, want %q", tc.id, res.EffectState, "not_started")
				}
				if tc.want == "" {
					if want := (purramcp.Envelope{Text: []string{"t"}, Structured: tc.structuredWant}); !reflect.DeepEqual(res.Content, want) {
						t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res.Content, want)
					}
				} else {
					if !reflect.DeepEqual(res.Content, emptyEnvelope) {
						t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res.Content, emptyEnvelope)
					}
				}
				_, calls := h.counts()
				if calls != 1 {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, calls, 1)
				}
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
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, res.ErrorCode, tc.want)
			}
			if tc.wantEnvelope != nil {
				if want := *tc.wantEnvelope; !reflect.DeepEqual(res.Content, want) {
					t.Errorf("%v: got %v, want %v", tc.id, res.Content, want)
				}
			} else {
				if !reflect.DeepEqual(res.Content, emptyEnvelope) {
					t.Errorf("%v: got %v, want %v", tc.id, res.Content, emptyEnvelope)
				}
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("%v: %v", tc.id, err)
			}
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
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultInvalid}); !reflect.DeepEqual(res, want) {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res, want)
				}
				lists, calls := h.counts()
				if lists != 1 {
					t.Errorf("%v: got %v, want %v", tc.id, lists, 1)
				}
				if calls != 1 {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, calls, 1)
				}
				if err := h.session.Ping(t.Context(), nil); err != nil {
					t.Errorf("%s modern=%v: session alive: %v", tc.id, modern, err)
				}
				if err := h.monitor.Check(0); err != nil {
					t.Errorf("%s: the monitor stays open: %v", tc.id, err)
				}
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
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultUnsupported}); !reflect.DeepEqual(res, want) {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res, want)
				}
				_, calls := h.counts()
				if calls != 1 {
					t.Errorf("%s modern=%v: exactly one tools/call reached the server: got %v, want %v", tc.id, modern, calls, 1)
				}
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
	if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
		t.Errorf("control: a client without the monitor's options: got %q, want %q", got, purramcp.CodeBindingInvalid)
	}
	_, err = purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
	if got := purramcp.CodeOf(err); got != purramcp.CodeNotInitialized {
		t.Errorf("control: the monitor never accepted a version: got %q, want %q", got, purramcp.CodeNotInitialized)
	}
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remote.search", Arguments: map[string]any{"a": 1}})
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	_, calls := raw.counts()
	if calls != 3 {
		t.Errorf("control: without the monitor's options go-sdk re-sends tools/call: got %v, want %v", calls, 3)
	}
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
	if got := len(results); got != 13 {
		t.Fatalf("decodable fixture results: len = %d, want %d", got, 13)
	}
	results = append(results, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<\u2029>"}},
		StructuredContent: map[string]any{"z": math.Copysign(0, -1), "s": "\xff<&>", "a": []any{1e-7, nil}},
		IsError:           true}, &mcp.CallToolResult{})
	for i, r := range results {
		want, err := jssize.Size(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := purramcp.ResultSize(r, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("result %d: got %v, want %v", i, got, want)
		}
		for _, limit := range []int{0, want / 2, want - 1, want} {
			n, err := purramcp.ResultSize(r, limit)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := n > limit, want > limit; got != want {
				t.Errorf("result %d under limit %d: %d: got %v, want %v", i, limit, n, got, want)
			}
			if want <= limit {
				if n != want {
					t.Errorf("result %d at limit %d: got %v, want %v", i, limit, n, want)
				}
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
		if err != nil {
			t.Fatal(err)
		}
		outer, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "envelope", SchemaVersion: "1",
			Schema: map[string]any{"type": "object"}, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		for j := range valuesPerSchema {
			label := "schema #" + strconv.Itoa(i) + " value #" + strconv.Itoa(j)
			text := g.encode(nil, g.objectFor(root, 4))
			if j%3 == 0 {
				text = g.encode(nil, g.valueFor(root, 4))
			}
			envelope := func() map[string]any {
				var structured any
				if err := json.Unmarshal(text, &structured); err != nil {
					t.Fatalf("%v: %v", label, err)
				}
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
			got, err := purramcp.ValidateWithMember(outer, value, inner)
			if !reflect.DeepEqual(err, wantErr) {
				t.Fatalf("%s: %s: got %v, want %v", label, text, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s: got %v, want %v", label, text, got, want)
			}
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
	if kept <= 500 {
		t.Fatalf("kept = %v, want > %v", kept, 500)
	}
	if copied <= 50 {
		t.Fatalf("copied = %v, want > %v", copied, 50)
	}
	if failed <= 500 {
		t.Fatalf("failed = %v, want > %v", failed, 500)
	}
}

// Fuzz targets for the MCP boundary: result conversion here, discovery
// pages in discover_paging_test.go and bindings in bindings_test.go. Each iteration
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
		if err := json.Unmarshal(tool, &rt); err != nil {
			t.Fatalf("json.Unmarshal(tool, &rt): %v", err)
		}
		if len(rt.OutputSchema) == 0 {
			t.Fatalf("rt.OutputSchema is empty")
		}
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
	if got := len(seeds); got != 2*14+62 {
		f.Fatalf("seed count: len = %d, want %d", got, 2*14+62)
	}
	for _, s := range seeds {
		f.Add([]byte(s.result), s.schema, s.schemaText, s.maxResultBytes, s.maxBlocks, s.modern)
	}
	f.Add([]byte(`{}`), uint8(1), "", uint32(6), uint32(0), true) // arguments over MaxResultBytes
	expected := map[string]string{}                               // compact fixture result → code, under the fixture schema and limits
	for _, tc := range fx.Cases {
		if tc.ErrorCode == nil || *tc.ErrorCode != purramcp.CodeInvalidArguments {
			var buf bytes.Buffer
			if err := json.Compact(&buf, tc.Result); err != nil {
				f.Fatalf("json.Compact(&buf, tc.Result): %v", err)
			}
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
			if got := purramcp.CodeOf(err); got != purramcp.CodeSchemaUnsupported {
				t.Fatalf("discovery of schema %q: got %q, want %q", schemaText, got, purramcp.CodeSchemaUnsupported)
			}
			return
		}
		if err != nil {
			t.Fatalf("discovery of output schema %s: %v", output, err)
		}

		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), fuzzArguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
		if err != nil {
			t.Fatalf("Run with result %q: %v", result, err)
		}
		if res.EffectState != "not_started" {
			t.Fatalf("result %q: got %q, want %q", result, res.EffectState, "not_started")
		}
		lists, calls := h.counts()
		if _, err := fuzzInputContract(t, fx, limits).Parse(string(fuzzArguments)); err != nil {
			// MaxResultBytes also bounds the argument text.
			if got, want := [2]int{lists, calls}, [2]int{1, 0}; !reflect.DeepEqual(got, want) {
				t.Fatalf("tools/list and tools/call requests: got %v, want %v", got, want)
			}
			if res.ErrorCode != purramcp.CodeInvalidArguments {
				t.Fatalf("MaxResultBytes %d: got %q, want %q", limits.MaxResultBytes, res.ErrorCode, purramcp.CodeInvalidArguments)
			}
			return
		}
		if got, want := [2]int{lists, calls}, [2]int{1, 1}; !reflect.DeepEqual(got, want) {
			t.Fatalf("tools/list and tools/call requests for %q: got %v, want %v", result, got, want)
		}

		var buf bytes.Buffer
		if err := json.Compact(&buf, result); err != nil {
			t.Fatalf("json.Compact(&buf, result): %v", err)
		}
		if want, ok := expected[buf.String()]; ok && fromFixture && schema%uint8(len(schemas)) == 0 &&
			fuzzFixtureLimits(fx, buf.String(), limits) {
			if res.ErrorCode != want {
				t.Errorf("fixture result %s: got %q, want %q", result, res.ErrorCode, want)
			}
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
	if err != nil {
		t.Fatal(err)
	}
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(fx.Tool, &tool); err != nil {
		t.Fatalf("json.Unmarshal(fx.Tool, &tool): %v", err)
	}
	c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
		Schema: tool.InputSchema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	var decoded mcp.CallToolResult
	decodeErr := json.Unmarshal(result, &decoded)
	if res.ErrorCode != "" {
		if !slices.Contains(fuzzResultCodes, res.ErrorCode) {
			t.Fatalf("result %q: %v does not contain %q", result, fuzzResultCodes, res.ErrorCode)
		}
		if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started",
			ErrorCode: res.ErrorCode}); !reflect.DeepEqual(res, want) {
			t.Fatalf("failed result for %q: got %v, want %v", result, res, want)
		}
	}
	if decodeErr != nil {
		if res.ErrorCode != purramcp.CodeResultInvalid {
			t.Fatalf("undecodable result %q: got %q, want %q", result, res.ErrorCode, purramcp.CodeResultInvalid)
		}
		return
	}
	if fuzzDepth(result) > 990 {
		return // go-sdk's 1000-level bound applies to the whole JSON-RPC message
	}
	size, sizeErr := jssize.Size(&decoded) // the full encoding/json measure
	if sizeErr != nil {
		t.Fatalf("size of the decoded result %q: %v", result, sizeErr)
	}
	switch {
	case decoded.IsError:
		if res.ErrorCode != purramcp.CodeToolError {
			t.Fatalf("isError result %q: got %q, want %q", result, res.ErrorCode, purramcp.CodeToolError)
		}
		return
	case len(decoded.Content) > resolved.MaxContentBlocks || size > resolved.MaxResultBytes:
		if res.ErrorCode != purramcp.CodeResultTooLarge {
			t.Fatalf("result %q: %d blocks, %d bytes: got %q, want %q", result, len(decoded.Content), size, res.ErrorCode, purramcp.CodeResultTooLarge)
		}
		return
	}
	if res.ErrorCode == purramcp.CodeResultTooLarge {
		t.Fatalf("result %q: %d blocks, %d bytes: got %q, want anything else", result, len(decoded.Content), size, res.ErrorCode)
	}
	if res.ErrorCode != "" {
		return
	}
	text := []string{}
	for _, block := range decoded.Content {
		tc, ok := block.(*mcp.TextContent)
		if !ok {
			t.Fatalf("result %q succeeded with a %T block", result, block)
		}
		text = append(text, tc.Text)
	}
	if !reflect.DeepEqual(res.Content.Text, text) {
		t.Fatalf("text of result %q: got %v, want %v", result, res.Content.Text, text)
	}
	if decoded.NeedsInput() {
		t.Fatalf("result %q succeeded asking for input", result)
	}
	if decoded.StructuredContent == nil {
		if res.Content.Structured != nil {
			t.Fatalf("structured content of result %q: got %v, want nil", result, res.Content.Structured)
		}
	} else {
		if got := any(res.Content.Structured); !reflect.DeepEqual(got, decoded.StructuredContent) {
			t.Fatalf("structured content of %q: got %v, want %v", result, got, decoded.StructuredContent)
		}
	}
	if output != nil {
		var schema map[string]any // as go-sdk decodes it; the root $schema is not compiled
		if err := json.Unmarshal(output, &schema); err != nil {
			t.Fatalf("json.Unmarshal(output, &schema): %v", err)
		}
		delete(schema, "$schema")
		contract, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
			Schema: schema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
		if err != nil {
			t.Fatalf("output schema %s: %v", output, err)
		}
		got, err := contract.ValidateValue(res.Content.Structured)
		if err != nil {
			t.Fatalf("structured content of result %q under %s: %v", result, output, err)
		}
		if !reflect.DeepEqual(got, res.Content.Structured) {
			t.Fatalf("structured content of result %q: got %v, want %v", result, got, res.Content.Structured)
		}
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
