package purramcp_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// policyTool is the fixture tool with its input schema replaced.
func policyTool(t *testing.T, name string, input map[string]any) json.RawMessage {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "name", name)
	return withField(t, tool, "inputSchema", input)
}

var (
	dialectOnly     = purramcp.SchemaPolicy{DialectEquivalence: true}
	annotationsOnly = purramcp.SchemaPolicy{Annotations: true}
	bothPolicies    = purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true}
)

// discoverOne binds tool "t" under policy and returns the catalog or the code.
func discoverOne(t *testing.T, input map[string]any, policy purramcp.SchemaPolicy) (*purramcp.Catalog, string) {
	s := newSDKServer(t, nil, policyTool(t, "t", input))
	session, monitor := connectSDK(t, s.MCP, purramcp.ProtocolVersion20251125)
	catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", map[string]purramcp.ToolBinding{
		"t": {LocalName: "t", Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor, Policy: policy})
	return catalog, purramcp.CodeOf(err)
}

func object(members ...any) map[string]any {
	m := map[string]any{"type": "object"}
	for i := 0; i+1 < len(members); i += 2 {
		m[members[i].(string)] = members[i+1]
	}
	return m
}

func TestPolicy_DialectEquivalence(t *testing.T) {
	admitted := []string{
		"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema",
		"https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2019-09/schema#",
	}
	for _, uri := range admitted {
		_, code := discoverOne(t, object("$schema", uri), purramcp.SchemaPolicy{})
		if code != purramcp.CodeSchemaUnsupported {
			t.Errorf("%s is rejected by default: got %q, want %q", uri, code, purramcp.CodeSchemaUnsupported)
		}
		catalog, code := discoverOne(t, object("$schema", uri), dialectOnly)
		if code != "" {
			t.Fatalf("%v: got %q, want empty", uri, code)
		}
		entry := catalog.Snapshot().Entries[0]
		if !reflect.DeepEqual(entry.InputSchema["$schema"], uri) {
			t.Errorf("the declaration stays in the snapshot as declared: got %v, want %v", entry.InputSchema["$schema"], uri)
		}
		if _, ok := catalog.Registrations()[0].InputSchema["$schema"]; ok {
			t.Errorf("and is removed before compiling: has key %q", "$schema")
		}
	}
	rejected := []map[string]any{
		object("$schema", "https://json-schema.org/draft-07/schema#"), // https is not the draft-07 URI
		object("$schema", "http://json-schema.org/draft-04/schema#"),
		object("$schema", "https://example.invalid/schema"),
		object("$schema", 7),
		object("properties", map[string]any{"q": map[string]any{"$schema": "http://json-schema.org/draft-07/schema#"}}),
		object("$schema", "http://json-schema.org/draft-07/schema#", "items", []any{map[string]any{}}),
		object("$schema", "http://json-schema.org/draft-07/schema#", "$ref", "#/definitions/x"),
	}
	for _, input := range rejected {
		_, code := discoverOne(t, input, bothPolicies)
		if code != purramcp.CodeSchemaUnsupported {
			t.Errorf("%v stays rejected: got %q, want %q", input, code, purramcp.CodeSchemaUnsupported)
		}
	}
}

func TestPolicy_Annotations(t *testing.T) {
	prop := func(k string, v any) map[string]any {
		return object("properties", map[string]any{"q": map[string]any{"type": "string", k: v}})
	}
	admitted := []map[string]any{
		prop("default", nil), prop("default", map[string]any{"$ref": "#"}), prop("examples", []any{"a", 1.0}),
		prop("$comment", "c"), prop("deprecated", true), prop("readOnly", false), prop("writeOnly", true),
		prop("format", "uri"), object("default", map[string]any{}, "$comment", "root"),
		object("properties", map[string]any{"a": map[string]any{"items": map[string]any{"format": "date", "default": "x"}}}),
	}
	for _, input := range admitted {
		_, code := discoverOne(t, input, purramcp.SchemaPolicy{})
		if code != purramcp.CodeSchemaUnsupported {
			t.Errorf("%v is rejected by default: got %q, want %q", input, code, purramcp.CodeSchemaUnsupported)
		}
		catalog, code := discoverOne(t, input, annotationsOnly)
		if code != "" {
			t.Fatalf("%v: got %q, want empty", input, code)
		}
		if got := catalog.Snapshot().Entries[0].InputSchema; !reflect.DeepEqual(got, input) {
			t.Errorf("annotations stay in the snapshot: got %v, want %v", got, input)
		}
		if got := catalog.Registrations()[0].InputSchema; !reflect.DeepEqual(got, input) {
			t.Errorf("and in the registration's input schema: got %v, want %v", got, input)
		}
	}
	rejected := []map[string]any{
		prop("format", 1), prop("examples", "a"), prop("readOnly", "yes"), prop("deprecated", nil),
		prop("pattern", "^a"), prop("multipleOf", 2), prop("exclusiveMinimum", 0), prop("minProperties", 1),
		object("$defs", map[string]any{}), object("$ref", "#"), object("propertyNames", map[string]any{}),
		object("additionalProperties", map[string]any{"type": "string"}), object("allOf", []any{}),
		object("not", map[string]any{}), object("if", map[string]any{}), object("x-vendor", true),
		object("nullable", true), object("contentMediaType", "text/plain"),
	}
	for _, input := range rejected {
		_, code := discoverOne(t, input, bothPolicies)
		if code != purramcp.CodeSchemaUnsupported {
			t.Errorf("%v stays rejected: got %q, want %q", input, code, purramcp.CodeSchemaUnsupported)
		}
	}
}

// TestPolicy_AnnotationsNeverAssert: a default is never filled in, a format
// never asserted, and a readOnly never enforced.
func TestPolicy_AnnotationsNeverAssert(t *testing.T) {
	input := object("properties", map[string]any{
		"q": map[string]any{"type": "string", "format": "email", "default": "x@example.com", "readOnly": true},
		"n": map[string]any{"type": "integer", "default": 5},
	}, "required", []any{"q"}, "additionalProperties", false)
	s := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), policyTool(t, "t", input))
	session, monitor := connectSDK(t, s.MCP, purramcp.ProtocolVersion20251125)
	catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", map[string]purramcp.ToolBinding{
		"t": {LocalName: "t", Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor, Policy: annotationsOnly})
	if err != nil {
		t.Fatal(err)
	}
	run := catalog.Registrations()[0].Run
	res, err := run(t.Context(), json.RawMessage(`{"q":"not an email"}`), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("format is an annotation: got %q, want empty", res.ErrorCode)
	}
	if got, want := string(s.lastArguments()), `{"q":"not an email"}`; !jsonEqual(t, got, want) {
		t.Errorf("no default filled in: got %s, want JSON equal to %s", got, want)
	}
	res, err = run(t.Context(), json.RawMessage(`{}`), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeInvalidArguments {
		t.Errorf("a default does not satisfy required: got %q, want %q", res.ErrorCode, purramcp.CodeInvalidArguments)
	}
	res, err = run(t.Context(), json.RawMessage(`{"q":"a","n":"5"}`), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeInvalidArguments {
		t.Errorf("no coercion: got %q, want %q", res.ErrorCode, purramcp.CodeInvalidArguments)
	}
}

// TestPolicy_DigestFollowsSnapshot: the digest of a fixture tool is the same
// under every policy, and a widened schema's digest differs exactly because
// its snapshot does.
func TestPolicy_DigestFollowsSnapshot(t *testing.T) {
	f := loadMCPFixture(t)
	for _, policy := range []purramcp.SchemaPolicy{{}, dialectOnly, annotationsOnly, bothPolicies} {
		s := newSDKServer(t, nil, f.Tool)
		session, monitor := connectSDK(t, s.MCP, purramcp.ProtocolVersion20251125)
		catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: monitor, Policy: policy})
		if err != nil {
			t.Fatalf("%v: %v", policy.String(), err)
		}
		if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
			t.Errorf("policy %s leaves the fixture digest: got %q, want %q", policy, got, f.RevisionDigest)
		}
	}
	plain, code := discoverOne(t, object("properties", map[string]any{"q": map[string]any{"type": "string"}}), bothPolicies)
	if code != "" {
		t.Fatalf("code = %q, want empty", code)
	}
	annotated, code := discoverOne(t, object("properties", map[string]any{"q": map[string]any{"type": "string", "format": "uri"}}), bothPolicies)
	if code != "" {
		t.Fatalf("code = %q, want empty", code)
	}
	declared, code := discoverOne(t, object("$schema", "http://json-schema.org/draft-07/schema#",
		"properties", map[string]any{"q": map[string]any{"type": "string"}}), bothPolicies)
	if code != "" {
		t.Fatalf("code = %q, want empty", code)
	}
	digests := map[string]bool{}
	for _, c := range []*purramcp.Catalog{plain, annotated, declared} {
		snap := c.Snapshot()
		digests[snap.RevisionDigest] = true
		entries, err := json.Marshal(snap.Entries)
		if err != nil {
			t.Fatal(err)
		}
		var identityEntries []any
		if err := json.Unmarshal(entries, &identityEntries); err != nil {
			t.Fatalf("json.Unmarshal(entries, &identityEntries): %v", err)
		}
		d, err := purramcp.IdentityDigest(map[string]any{"schemaVersion": 1, "serverId": snap.ServerID,
			"protocolVersion": snap.ProtocolVersion, "entries": identityEntries})
		if err != nil {
			t.Fatal(err)
		}
		if d != snap.RevisionDigest {
			t.Errorf("the digest is the snapshot's identity: got %q, want %q", d, snap.RevisionDigest)
		}
	}
	if got := len(digests); got != 3 {
		t.Errorf("three different snapshots, three different digests: len = %d, want %d", got, 3)
	}
}

func TestPolicy_InspectorSuggests(t *testing.T) {
	f := loadMCPFixture(t)
	want := map[string]string{
		"unknown-default-annotation":        "annotations",
		"unknown-vendor-output-annotation":  "",
		"other-input-dialect":               "dialect",
		"other-output-dialect":              "",
		"nested-dialect":                    "",
		"reference-with-recognized-dialect": "",
	}
	for _, sc := range f.SchemaCases {
		t.Run(sc.ID, func(t *testing.T) {
			tool := sdkTool(t, sc.Tool)
			r, err := purramcp.InspectTool(tool, purramcp.Limits{}, purramcp.SchemaPolicy{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Bindable {
				t.Errorf("%v", sc.ID)
			}
			if r.BindsWith != want[sc.ID] {
				t.Errorf("%v: got %q, want %q", sc.ID, r.BindsWith, want[sc.ID])
			}
		})
	}
	both := &mcp.Tool{Name: "t", InputSchema: object("$schema", "http://json-schema.org/draft-07/schema",
		"properties", map[string]any{"q": map[string]any{"type": "string", "default": "a"}})}
	r, err := purramcp.InspectTool(both, purramcp.Limits{}, purramcp.SchemaPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if r.BindsWith != "dialect+annotations" {
		t.Errorf("r.BindsWith = %q, want %q", r.BindsWith, "dialect+annotations")
	}
	r, err = purramcp.InspectTool(both, purramcp.Limits{}, bothPolicies)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Bindable {
		t.Errorf("r.Bindable is false")
	}
	if r.BindsWith != "" {
		t.Errorf("r.BindsWith = %q, want empty", r.BindsWith)
	}
}

var (
	extendedOnly = purramcp.SchemaPolicy{ExtendedKeywords: true}
	allPolicies  = purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true}
)

func TestPolicy_String(t *testing.T) {
	want := map[purramcp.SchemaPolicy]string{
		{}:                         "default",
		{DialectEquivalence: true}: "dialect",
		{Annotations: true}:        "annotations",
		{DialectEquivalence: true, Annotations: true}:      "dialect+annotations",
		{ExtendedKeywords: true}:                           "extended",
		{DialectEquivalence: true, ExtendedKeywords: true}: "dialect+extended",
		{Annotations: true, ExtendedKeywords: true}:        "annotations+extended",
		allPolicies: "dialect+annotations+extended",
	}
	for p, s := range want {
		if got := p.String(); got != s {
			t.Errorf("p.String() = %q, want %q", got, s)
		}
	}
}

// refSchema is an input schema with a root $defs used twice.
func refSchema() map[string]any {
	return object(
		"$defs", map[string]any{"id": map[string]any{"type": "string", "pattern": "^[a-z]+$", "maxLength": 8.0}},
		"properties", map[string]any{
			"a": map[string]any{"$ref": "#/$defs/id"},
			"b": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/id"}},
			"n": map[string]any{"type": "number", "exclusiveMinimum": 0.0},
			"m": map[string]any{"type": "object", "propertyNames": map[string]any{"maxLength": 3.0},
				"additionalProperties": map[string]any{"type": "integer"}},
		},
		"required", []any{"a"}, "additionalProperties", false)
}

// TestPolicy_ExtendedSnapshotAsSent: the snapshot and the digest keep the
// schema exactly as the server sent it; the registration's input schema is
// the inlined one.
func TestPolicy_ExtendedSnapshotAsSent(t *testing.T) {
	_, code := discoverOne(t, refSchema(), bothPolicies)
	if code != purramcp.CodeSchemaUnsupported {
		t.Errorf("rejected without ExtendedKeywords: got %q, want %q", code, purramcp.CodeSchemaUnsupported)
	}
	catalog, code := discoverOne(t, refSchema(), extendedOnly)
	if code != "" {
		t.Fatalf("code = %q, want empty", code)
	}
	snap := catalog.Snapshot()
	if want := refSchema(); !reflect.DeepEqual(snap.Entries[0].InputSchema, want) {
		t.Errorf("the snapshot is the schema as sent: got %v, want %v", snap.Entries[0].InputSchema, want)
	}
	inlinedID := map[string]any{"type": "string", "pattern": "^[a-z]+$", "maxLength": 8.0}
	want := refSchema()
	delete(want, "$defs")
	props := want["properties"].(map[string]any)
	props["a"] = inlinedID
	props["b"] = map[string]any{"type": "array", "items": inlinedID}
	reg := catalog.Registrations()[0]
	if !reflect.DeepEqual(reg.InputSchema, want) {
		t.Errorf("the registration's schema is inlined, $defs removed: got %v, want %v", reg.InputSchema, want)
	}
	if got, want := reg.ArgumentContract.Schema(), refSchema(); !reflect.DeepEqual(got, want) {
		t.Errorf("the contract's own schema stays as sent: got %v, want %v", got, want)
	}

	entries, err := json.Marshal(snap.Entries)
	if err != nil {
		t.Fatal(err)
	}
	var identityEntries []any
	if err := json.Unmarshal(entries, &identityEntries); err != nil {
		t.Fatalf("json.Unmarshal(entries, &identityEntries): %v", err)
	}
	d, err := purramcp.IdentityDigest(map[string]any{"schemaVersion": 1, "serverId": snap.ServerID,
		"protocolVersion": snap.ProtocolVersion, "entries": identityEntries})
	if err != nil {
		t.Fatal(err)
	}
	if d != snap.RevisionDigest {
		t.Errorf("the digest hashes the schema as sent: got %q, want %q", d, snap.RevisionDigest)
	}

	// A schema with nothing to inline registers exactly its snapshot.
	plain := object("properties", map[string]any{"n": map[string]any{"exclusiveMaximum": 3.0}})
	catalog, code = discoverOne(t, plain, extendedOnly)
	if code != "" {
		t.Fatalf("code = %q, want empty", code)
	}
	if got := catalog.Registrations()[0].InputSchema; !reflect.DeepEqual(got, plain) {
		t.Errorf("catalog.Registrations()[0].InputSchema = %v, want %v", got, plain)
	}
	if got := catalog.Snapshot().Entries[0].InputSchema; !reflect.DeepEqual(got, plain) {
		t.Errorf("catalog.Snapshot().Entries[0].InputSchema = %v, want %v", got, plain)
	}
}

// TestPolicy_ExtendedAsserts: every extended keyword is asserted on
// arguments before anything is sent.
func TestPolicy_ExtendedAsserts(t *testing.T) {
	s := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), policyTool(t, "t", refSchema()))
	session, monitor := connectSDK(t, s.MCP, purramcp.ProtocolVersion20251125)
	catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", map[string]purramcp.ToolBinding{
		"t": {LocalName: "t", Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor, Policy: extendedOnly})
	if err != nil {
		t.Fatal(err)
	}
	run := catalog.Registrations()[0].Run
	cases := []struct{ args, code string }{
		{`{"a":"abc","b":["x"],"n":0.5,"m":{"k":1}}`, ""},
		{`{"a":"ABC"}`, purramcp.CodeInvalidArguments},
		{`{"a":"abc","b":["x","y1"]}`, purramcp.CodeInvalidArguments},
		{`{"a":"abcdefghi"}`, purramcp.CodeInvalidArguments},
		{`{"a":"abc","n":0}`, purramcp.CodeInvalidArguments},
		{`{"a":"abc","m":{"long":1}}`, purramcp.CodeInvalidArguments},
		{`{"a":"abc","m":{"k":1.5}}`, purramcp.CodeInvalidArguments},
		{`{"a":"abc","z":1}`, purramcp.CodeInvalidArguments},
	}
	for _, tc := range cases {
		res, err := run(t.Context(), json.RawMessage(tc.args), purramcp.ToolContext{})
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if res.ErrorCode != tc.code {
			t.Errorf("%v: got %q, want %q", tc.args, res.ErrorCode, tc.code)
		}
	}
	if got, want := string(s.lastArguments()), `{"a":"abc","b":["x"],"n":0.5,"m":{"k":1}}`; !jsonEqual(t, got, want) {
		t.Errorf("only the valid call was sent: got %s, want JSON equal to %s", got, want)
	}
}

// TestPolicy_ExtendedDraft07: a $ref with siblings under a declared draft-07
// root is rejected (draft-07 ignores the siblings); under 2020-12 it binds.
func TestPolicy_ExtendedDraft07(t *testing.T) {
	withSibling := func(dialect string) map[string]any {
		return object("$schema", dialect, "$defs", map[string]any{"s": map[string]any{"type": "string"}},
			"properties", map[string]any{"a": map[string]any{"$ref": "#/$defs/s", "maxLength": 2.0}})
	}
	_, code := discoverOne(t, withSibling("http://json-schema.org/draft-07/schema#"), allPolicies)
	if code != purramcp.CodeSchemaUnsupported {
		t.Errorf("code = %q, want %q", code, purramcp.CodeSchemaUnsupported)
	}
	r, err := purramcp.InspectTool(&mcp.Tool{Name: "t", InputSchema: withSibling("http://json-schema.org/draft-07/schema#")},
		purramcp.Limits{}, allPolicies)
	if err != nil {
		t.Fatal(err)
	}
	if want := (purramcp.ToolReport{Name: "t", Code: purramcp.CodeSchemaUnsupported, Schema: "inputSchema",
		Path: "$.properties.a", Keyword: "$ref", InputSchemaBytes: r.InputSchemaBytes}); !reflect.DeepEqual(r, want) {
		t.Errorf("r = %v, want %v", r, want)
	}
	_, code = discoverOne(t, withSibling("https://json-schema.org/draft/2020-12/schema"), extendedOnly)
	if code != "" {
		t.Errorf("code = %q, want empty", code)
	}
	_, code = discoverOne(t, withSibling("https://json-schema.org/draft/2019-09/schema"), allPolicies)
	if code != "" {
		t.Errorf("code = %q, want empty", code)
	}
}

func TestPolicy_InspectorSuggestsExtended(t *testing.T) {
	cases := []struct {
		input map[string]any
		want  string
	}{
		{refSchema(), "extended"},
		{object("$schema", "http://json-schema.org/draft-07/schema#", "propertyNames", map[string]any{"maxLength": 2.0}), "dialect+extended"},
		{object("properties", map[string]any{"q": map[string]any{"format": "email", "pattern": "^a"}}), "annotations+extended"},
		{object("$schema", "http://json-schema.org/draft-07/schema#",
			"properties", map[string]any{"q": map[string]any{"format": "email", "exclusiveMinimum": 1.0}}), "dialect+annotations+extended"},
		{object("allOf", []any{}), ""},
		{object("properties", map[string]any{"q": map[string]any{"pattern": "(?<=a)b"}}), ""},
	}
	for _, tc := range cases {
		r, err := purramcp.InspectTool(&mcp.Tool{Name: "t", InputSchema: tc.input}, purramcp.Limits{}, purramcp.SchemaPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Bindable {
			t.Errorf("r.Bindable is true")
		}
		if r.BindsWith != tc.want {
			t.Errorf("%v: got %q, want %q", tc.input, r.BindsWith, tc.want)
		}
	}
}

// TestPolicy_ExtendedHostile: a wide $ref fan-out is refused at bind time
// where the expansion crosses the schema node limit, and an argument that
// would make a pattern match cost more than the validation budget is
// refused before anything is sent.
func TestPolicy_ExtendedHostile(t *testing.T) {
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 30; i++ {
		ref := map[string]any{"$ref": "#/$defs/d" + strconv.Itoa(i-1)}
		defs["d"+strconv.Itoa(i)] = map[string]any{"anyOf": []any{ref, ref}}
	}
	fanOut := object("$defs", defs, "properties", map[string]any{"x": map[string]any{"$ref": "#/$defs/d30"}})
	_, code := discoverOne(t, fanOut, allPolicies)
	if code != purramcp.CodeSchemaUnsupported {
		t.Errorf("code = %q, want %q", code, purramcp.CodeSchemaUnsupported)
	}
	r, err := purramcp.InspectTool(&mcp.Tool{Name: "t", InputSchema: fanOut}, purramcp.Limits{}, allPolicies)
	if err != nil {
		t.Fatal(err)
	}
	if r.Keyword != "$ref" {
		t.Errorf("r.Keyword = %q, want %q", r.Keyword, "$ref")
	}
	if !strings.HasPrefix(r.Path, "$.$defs.d") {
		t.Errorf("%v", r.Path)
	}

	input := object("properties", map[string]any{"q": map[string]any{"type": "string", "pattern": "^(?:[a-c]{1,40})+$"}})
	s := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), policyTool(t, "t", input))
	session, monitor := connectSDK(t, s.MCP, purramcp.ProtocolVersion20251125)
	catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", map[string]purramcp.ToolBinding{
		"t": {LocalName: "t", Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor, Policy: extendedOnly})
	if err != nil {
		t.Fatal(err)
	}
	run := catalog.Registrations()[0].Run
	res, err := run(t.Context(), json.RawMessage(`{"q":"`+strings.Repeat("a", 60000)+`"}`), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeInvalidArguments {
		t.Errorf("the match would cost more than ValidationSteps: got %q, want %q", res.ErrorCode, purramcp.CodeInvalidArguments)
	}
	if got := len(s.lastArguments()); got != 0 {
		t.Errorf("nothing was sent: got %v, want empty", got)
	}
	res, err = run(t.Context(), json.RawMessage(`{"q":"aaaa"}`), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
}
