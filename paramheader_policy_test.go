package purramcp_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

var headersOnly = purramcp.SchemaPolicy{ParamHeaders: true}

// regionSchema is an input schema mirroring region into Mcp-Param-Region.
func regionSchema() map[string]any {
	return object("properties", map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"q":      map[string]any{"type": "string"},
	})
}

// TestPolicy_ParamHeaders: x-mcp-header binds only under ParamHeaders, in
// an input schema, and the inspector names the policy; the default still
// fails closed at the annotated property.
func TestPolicy_ParamHeaders(t *testing.T) {
	tool := &mcp.Tool{Name: "t", InputSchema: regionSchema()}
	r, err := purramcp.InspectTool(tool, purramcp.Limits{}, purramcp.SchemaPolicy{})
	require.NoError(t, err)
	assert.False(t, r.Bindable)
	assert.Equal(t, purramcp.CodeSchemaUnsupported, r.Code)
	assert.Equal(t, "inputSchema", r.Schema)
	assert.Equal(t, "$.properties.region", r.Path)
	assert.Equal(t, "x-mcp-header", r.Keyword)
	assert.Equal(t, "headers", r.BindsWith)
	r, err = purramcp.InspectTool(tool, purramcp.Limits{}, allPolicies)
	require.NoError(t, err)
	assert.False(t, r.Bindable, "dialect, annotations and extended do not admit it")
	assert.Equal(t, "dialect+annotations+extended+headers", r.BindsWith)
	r, err = purramcp.InspectTool(tool, purramcp.Limits{}, headersOnly)
	require.NoError(t, err)
	assert.True(t, r.Bindable)

	withDefault := &mcp.Tool{Name: "t", InputSchema: object("properties", map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region", "default": "eu"}})}
	r, err = purramcp.InspectTool(withDefault, purramcp.Limits{}, purramcp.SchemaPolicy{})
	require.NoError(t, err)
	assert.Equal(t, "annotations+headers", r.BindsWith)

	// In an output schema it names no request header: refused under every policy.
	output := &mcp.Tool{Name: "t", InputSchema: object(), OutputSchema: regionSchema()}
	r, err = purramcp.InspectTool(output, purramcp.Limits{}, headersOnly)
	require.NoError(t, err)
	assert.False(t, r.Bindable)
	assert.Equal(t, "outputSchema", r.Schema)
	assert.Equal(t, "$.properties.region", r.Path)
	assert.Equal(t, "x-mcp-header", r.Keyword)
	assert.Equal(t, "", r.BindsWith)

	// A type go-sdk lets through (an array of types) is refused at bind time.
	arrayType := &mcp.Tool{Name: "t", InputSchema: object("properties", map[string]any{
		"region": map[string]any{"type": []any{"string", "null"}, "x-mcp-header": "Region"}})}
	r, err = purramcp.InspectTool(arrayType, purramcp.Limits{}, headersOnly)
	require.NoError(t, err)
	assert.False(t, r.Bindable)
	assert.Equal(t, "$.properties.region", r.Path)
	assert.Equal(t, "x-mcp-header", r.Keyword)

	assert.Equal(t, "headers", headersOnly.String())
}

// TestPolicy_ParamHeadersSnapshot: a bound tool keeps x-mcp-header in its
// snapshot entry, so in the digest and the registration's input schema.
func TestPolicy_ParamHeadersSnapshot(t *testing.T) {
	catalog, code := discoverOne(t, regionSchema(), headersOnly)
	require.Equal(t, "", code)
	snap := catalog.Snapshot()
	text, err := json.Marshal(snap.Entries[0].InputSchema)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}}}`, string(text))
	_, code = discoverOne(t, regionSchema(), purramcp.SchemaPolicy{})
	assert.Equal(t, purramcp.CodeSchemaUnsupported, code)
	plain, code := discoverOne(t, object("properties", map[string]any{
		"region": map[string]any{"type": "string"}, "q": map[string]any{"type": "string"}}), headersOnly)
	require.Equal(t, "", code)
	assert.NotEqual(t, plain.Snapshot().RevisionDigest, snap.RevisionDigest, "the annotation is in the digest")
}
