package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
)

func compileWith(t *testing.T, schema string, opts Options) (*Schema, error) {
	t.Helper()
	v, err := strictjson.Parse(schema, roomy)
	require.NoError(t, err, schema)
	return CompileWith(v, opts)
}

// TestParamHeaders_Inspection: what Options.ParamHeaders admits, and the
// exact path and keyword of every form it rejects; without it every
// x-mcp-header is rejected at its node, as before.
func TestParamHeaders_Inspection(t *testing.T) {
	accepted := []string{
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"b"}}}`,
		`{"type":"object","properties":{"s":{"x-mcp-header":"!#$%&'*+-.^_` + "`" + `|~09azAZ","type":"string"}}}`,
		`{"type":"object","required":["r"],"properties":{"r":{"type":"string","enum":["eu","us"],"x-mcp-header":"R"},"q":{"type":"string"}}}`,
	}
	for _, opts := range []Options{{ParamHeaders: true}, {ParamHeaders: true, Annotations: true}, {ParamHeaders: true, ExtendedKeywords: true}} {
		for _, schema := range accepted {
			_, err := compileWith(t, schema, opts)
			assert.NoError(t, err, schema)
			_, err = compileWith(t, schema, Options{Annotations: opts.Annotations, ExtendedKeywords: opts.ExtendedKeywords})
			var se *SchemaError
			require.ErrorAs(t, err, &se, "without ParamHeaders: %s", schema)
			assert.Equal(t, "x-mcp-header", se.Keyword, schema)
		}
	}
	rejected := []struct{ schema, path string }{
		// not a token, not a string, empty
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Re gion"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region:"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R\r\nX-Evil: 1"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Régión"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":""}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":1}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":null}}}`, "$.properties.r"},
		// duplicate, case-insensitively: the second one
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`, "$.properties.b"},
		// not a primitive type, or no single type
		{`{"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"object","x-mcp-header":"R"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":"array","items":{"type":"string"},"x-mcp-header":"R"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"type":["string","null"],"x-mcp-header":"R"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"x-mcp-header":"R"}}}`, "$.properties.r"},
		{`{"type":"object","properties":{"r":{"anyOf":[{"type":"string"}],"x-mcp-header":"R"}}}`, "$.properties.r"},
		// anywhere but a property written in the root's properties
		{`{"type":"object","x-mcp-header":"R"}`, "$"},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}}`, "$.properties.o.properties.r"},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"R"}}}}`, "$.properties.l.items"},
		{`{"type":"object","properties":{"u":{"anyOf":[{"type":"string","x-mcp-header":"R"}]}}}`, "$.properties.u.anyOf[0]"},
	}
	for _, tc := range rejected {
		_, err := compileWith(t, tc.schema, Options{ParamHeaders: true})
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, "x-mcp-header", se.Keyword, tc.schema)
	}
}

// TestParamHeaders_NotThroughRefs: under ExtendedKeywords a property that
// reaches x-mcp-header through $ref, or a $defs entry carrying it, is
// rejected: only a property written in the root's properties may carry it
// (a client reads the annotation there, without resolving references).
func TestParamHeaders_NotThroughRefs(t *testing.T) {
	opts := Options{ParamHeaders: true, ExtendedKeywords: true}
	for _, tc := range []struct{ schema, path string }{
		{`{"type":"object","$defs":{"R":{"type":"string","x-mcp-header":"R"}},"properties":{"r":{"$ref":"#/$defs/R"}}}`, "$.$defs.R"},
		{`{"type":"object","$defs":{"R":{"type":"string"}},"properties":{"r":{"$ref":"#/$defs/R","x-mcp-header":"R"}}}`, "$.properties.r"},
	} {
		_, err := compileWith(t, tc.schema, opts)
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, "x-mcp-header", se.Keyword, tc.schema)
	}
}

// TestParamHeaders_ValidationUnchanged: the keyword asserts nothing.
func TestParamHeaders_ValidationUnchanged(t *testing.T) {
	with, err := compileWith(t, `{"type":"object","properties":{"r":{"type":"string","maxLength":3,"x-mcp-header":"R"}}}`, Options{ParamHeaders: true})
	require.NoError(t, err)
	without, err := compileWith(t, `{"type":"object","properties":{"r":{"type":"string","maxLength":3}}}`, Options{})
	require.NoError(t, err)
	for _, value := range []string{`{"r":"eu"}`, `{"r":"europe"}`, `{"r":1}`, `{}`} {
		v, err := strictjson.Parse(value, roomy)
		require.NoError(t, err)
		wantV, wantErr := without.Validate(v, 1000)
		gotV, gotErr := with.Validate(v, 1000)
		assert.Equal(t, wantV, gotV, value)
		assert.Equal(t, wantErr, gotErr, value)
	}
}
