package purramcp_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

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
		assert.Equal(t, s, p.String())
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
	assert.Equal(t, "mcp_schema_unsupported", code, "rejected without ExtendedKeywords")
	catalog, code := discoverOne(t, refSchema(), extendedOnly)
	require.Empty(t, code)
	snap := catalog.Snapshot()
	assert.Equal(t, refSchema(), snap.Entries[0].InputSchema, "the snapshot is the schema as sent")
	inlinedID := map[string]any{"type": "string", "pattern": "^[a-z]+$", "maxLength": 8.0}
	want := refSchema()
	delete(want, "$defs")
	props := want["properties"].(map[string]any)
	props["a"] = inlinedID
	props["b"] = map[string]any{"type": "array", "items": inlinedID}
	reg := catalog.Registrations()[0]
	assert.Equal(t, want, reg.InputSchema, "the registration's schema is inlined, $defs removed")
	assert.Equal(t, refSchema(), reg.ArgumentContract.Schema(), "the contract's own schema stays as sent")

	entries, err := json.Marshal(snap.Entries)
	require.NoError(t, err)
	var identityEntries []any
	require.NoError(t, json.Unmarshal(entries, &identityEntries))
	d, err := purramcp.IdentityDigest(map[string]any{"schemaVersion": 1, "serverId": snap.ServerID,
		"protocolVersion": snap.ProtocolVersion, "entries": identityEntries})
	require.NoError(t, err)
	assert.Equal(t, snap.RevisionDigest, d, "the digest hashes the schema as sent")

	// A schema with nothing to inline registers exactly its snapshot.
	plain := object("properties", map[string]any{"n": map[string]any{"exclusiveMaximum": 3.0}})
	catalog, code = discoverOne(t, plain, extendedOnly)
	require.Empty(t, code)
	assert.Equal(t, plain, catalog.Registrations()[0].InputSchema)
	assert.Equal(t, plain, catalog.Snapshot().Entries[0].InputSchema)
}

// TestPolicy_ExtendedAsserts: every extended keyword is asserted on
// arguments before anything is sent.
func TestPolicy_ExtendedAsserts(t *testing.T) {
	s := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), policyTool(t, "t", refSchema()))
	session, monitor := connectSDK(t, s.server, purramcp.ProtocolVersion20251125)
	catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", map[string]purramcp.ToolBinding{
		"t": {LocalName: "t", Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor, Policy: extendedOnly})
	require.NoError(t, err)
	run := catalog.Registrations()[0].Run
	cases := []struct{ args, code string }{
		{`{"a":"abc","b":["x"],"n":0.5,"m":{"k":1}}`, ""},
		{`{"a":"ABC"}`, "mcp_invalid_arguments"},
		{`{"a":"abc","b":["x","y1"]}`, "mcp_invalid_arguments"},
		{`{"a":"abcdefghi"}`, "mcp_invalid_arguments"},
		{`{"a":"abc","n":0}`, "mcp_invalid_arguments"},
		{`{"a":"abc","m":{"long":1}}`, "mcp_invalid_arguments"},
		{`{"a":"abc","m":{"k":1.5}}`, "mcp_invalid_arguments"},
		{`{"a":"abc","z":1}`, "mcp_invalid_arguments"},
	}
	for _, tc := range cases {
		res, err := run(t.Context(), json.RawMessage(tc.args), purramcp.ToolContext{})
		require.NoError(t, err, tc.args)
		assert.Equal(t, tc.code, res.ErrorCode, tc.args)
	}
	assert.JSONEq(t, `{"a":"abc","b":["x"],"n":0.5,"m":{"k":1}}`, string(s.lastArguments()), "only the valid call was sent")
}

// TestPolicy_ExtendedDraft07: a $ref with siblings under a declared draft-07
// root is rejected (draft-07 ignores the siblings); under 2020-12 it binds.
func TestPolicy_ExtendedDraft07(t *testing.T) {
	withSibling := func(dialect string) map[string]any {
		return object("$schema", dialect, "$defs", map[string]any{"s": map[string]any{"type": "string"}},
			"properties", map[string]any{"a": map[string]any{"$ref": "#/$defs/s", "maxLength": 2.0}})
	}
	_, code := discoverOne(t, withSibling("http://json-schema.org/draft-07/schema#"), allPolicies)
	assert.Equal(t, "mcp_schema_unsupported", code)
	r, err := purramcp.InspectTool(&mcp.Tool{Name: "t", InputSchema: withSibling("http://json-schema.org/draft-07/schema#")},
		purramcp.Limits{}, allPolicies)
	require.NoError(t, err)
	assert.Equal(t, purramcp.ToolReport{Name: "t", Code: "mcp_schema_unsupported", Schema: "inputSchema",
		Path: "$.properties.a", Keyword: "$ref", InputSchemaBytes: r.InputSchemaBytes}, r)
	_, code = discoverOne(t, withSibling("https://json-schema.org/draft/2020-12/schema"), extendedOnly)
	assert.Empty(t, code)
	_, code = discoverOne(t, withSibling("https://json-schema.org/draft/2019-09/schema"), allPolicies)
	assert.Empty(t, code)
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
		require.NoError(t, err)
		assert.False(t, r.Bindable)
		assert.Equal(t, tc.want, r.BindsWith, "%v", tc.input)
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
	assert.Equal(t, "mcp_schema_unsupported", code)
	r, err := purramcp.InspectTool(&mcp.Tool{Name: "t", InputSchema: fanOut}, purramcp.Limits{}, allPolicies)
	require.NoError(t, err)
	assert.Equal(t, "$ref", r.Keyword)
	assert.True(t, strings.HasPrefix(r.Path, "$.$defs.d"), r.Path)

	input := object("properties", map[string]any{"q": map[string]any{"type": "string", "pattern": "^(?:[a-c]{1,40})+$"}})
	s := newSDKServer(t, json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`), policyTool(t, "t", input))
	session, monitor := connectSDK(t, s.server, purramcp.ProtocolVersion20251125)
	catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", map[string]purramcp.ToolBinding{
		"t": {LocalName: "t", Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: monitor, Policy: extendedOnly})
	require.NoError(t, err)
	run := catalog.Registrations()[0].Run
	res, err := run(t.Context(), json.RawMessage(`{"q":"`+strings.Repeat("a", 60000)+`"}`), purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "mcp_invalid_arguments", res.ErrorCode, "the match would cost more than ValidationSteps")
	assert.Empty(t, len(s.lastArguments()), "nothing was sent")
	res, err = run(t.Context(), json.RawMessage(`{"q":"aaaa"}`), purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
}
