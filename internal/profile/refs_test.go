package profile

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
)

func inlinedJSON(t *testing.T, s *Schema) string {
	t.Helper()
	require.NotNil(t, s.Inlined())
	b, err := json.Marshal(strictjson.ToGo(s.Inlined()))
	require.NoError(t, err)
	return string(b)
}

// TestRefs_Inline: references are replaced by their definitions, $defs is
// removed, and a schema without either is compiled as it is.
func TestRefs_Inline(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`,
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{`{"type":"object","$defs":{"unused":{"type":"string"}}}`, `{"type":"object"}`},
		{`{"type":"object","$defs":{"a/b":{"type":"string"},"c~d":{"type":"null"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"}}}`,
			`{"properties":{"x":{"type":"string"},"y":{"type":"null"}},"type":"object"}`},
		{`{"type":"object","$defs":{"a":{"items":{"$ref":"#/$defs/b"}},"b":{"enum":[1]}},"properties":{"x":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}}}`,
			`{"properties":{"x":{"anyOf":[{"items":{"enum":[1]}},{"type":"null"}]}},"type":"object"}`},
		{`{"type":"object","$defs":{"s":{"type":"string","description":"d"}},"properties":{"a":{"$ref":"#/$defs/s","description":"mine","minLength":1}}}`,
			`{"properties":{"a":{"description":"mine","minLength":1,"type":"string"}},"type":"object"}`},
		{`{"type":"object","$defs":{"o":{"type":"object","properties":{"k":{}},"additionalProperties":false}},"properties":{"a":{"$ref":"#/$defs/o","required":["k"]}}}`,
			`{"properties":{"a":{"additionalProperties":false,"properties":{"k":{}},"required":["k"],"type":"object"}},"type":"object"}`},
		{`{"type":"object","$defs":{"s":{"type":"string"}},"additionalProperties":{"$ref":"#/$defs/s"},"propertyNames":{"$ref":"#/$defs/s"}}`,
			`{"additionalProperties":{"type":"string"},"propertyNames":{"type":"string"},"type":"object"}`},
		{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"$ref":{"const":{"$ref":"#/$defs/nothing"}}}}`,
			`{"properties":{"$ref":{"const":{"$ref":"#/$defs/nothing"}}},"type":"object"}`},
	}
	for _, tc := range cases {
		s := mustCompileExt(t, tc.schema)
		assert.Equal(t, tc.want, inlinedJSON(t, s), tc.schema)
	}
	s := mustCompileExt(t, `{"type":"object","properties":{"$ref":{"type":"string"}}}`)
	assert.Nil(t, s.Inlined(), "a property named $ref is data: nothing rewritten")
	s = mustCompileExt(t, `{"type":"object","properties":{"a":{"const":{"$ref":"#/x"}}}}`)
	assert.Nil(t, s.Inlined(), "a const holding $ref is data")
}

// TestRefs_Validation: the inlined schema validates with the definition's
// keywords and the referring node's siblings together (2020-12).
func TestRefs_Validation(t *testing.T) {
	schema := `{"type":"object","$defs":{"pos":{"type":"number","exclusiveMinimum":0},"list":{"type":"array","items":{"$ref":"#/$defs/pos"}}},
		"properties":{"a":{"$ref":"#/$defs/list","maxItems":2}}}`
	s := mustCompileExt(t, schema)
	cases := []struct{ value, keyword, path string }{
		{`{"a":[1,2]}`, "", ""},
		{`{"a":[1,0]}`, "exclusiveMinimum", "$.a[1]"},
		{`{"a":[1,2,3]}`, "maxItems", "$.a"},
		{`{"a":"x"}`, "type", "$.a"},
	}
	for _, tc := range cases {
		vi, err := s.Validate(value(t, tc.value), 1000)
		require.NoError(t, err)
		if tc.keyword == "" {
			assert.Nil(t, vi, tc.value)
			continue
		}
		require.NotNil(t, vi, tc.value)
		assert.Equal(t, tc.keyword, vi.Keyword, tc.value)
		assert.Equal(t, tc.path, vi.Render(), tc.value)
	}
}

// TestRefs_Rejected: exact path and keyword for every refused reference.
func TestRefs_Rejected(t *testing.T) {
	cases := []struct{ schema, path, keyword string }{
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":"#/$defs/x"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":"#"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":"other.json#/$defs/s"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":"#/definitions/s"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{"properties":{"t":{}}}},"properties":{"a":{"$ref":"#/$defs/s/properties/t"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"a b":{}},"properties":{"a":{"$ref":"#/$defs/a%20b"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":"#/$defs/s~2"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":1}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "$.$defs.a", "$ref"},
		{`{"type":"object","$defs":{"a":{"items":{"$ref":"#/$defs/b"}},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
			"$.$defs.b.anyOf[0]", "$ref"},
		{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","type":"number"}}}`, "$.properties.a", "$ref"},
		{`{"type":"object","$defs":[]}`, "$", "$defs"},
		{`{"type":"object","$defs":{"s":true}}`, "$.$defs.s", "schema"},
		{`{"type":"object","$defs":{"s":{"allOf":[]}}}`, "$.$defs.s", "allOf"},
		{`{"type":"object","$defs":{"s":{"$defs":{}}}}`, "$.$defs.s", "$defs"},
		{`{"type":"object","properties":{"a":{"$defs":{}}}}`, "$.properties.a", "$defs"},
		{`{"type":"object","$defs":{"s":{}},"properties":{"a":{"$ref":"#/$defs/s","$id":"x"}}}`, "$.properties.a", "$id"},
	}
	for _, tc := range cases {
		_, err := compileExt(t, tc.schema)
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, tc.keyword, se.Keyword, tc.schema)
	}
}

// TestRefs_Draft07Siblings: under draft-07 a $ref with any sibling is
// refused (draft-07 ignores them); alone it is inlined.
func TestRefs_Draft07Siblings(t *testing.T) {
	opts := Options{ExtendedKeywords: true, Draft07: true}
	v, err := strictjson.Parse(`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","description":"x"}}}`, roomy)
	require.NoError(t, err)
	_, err = CompileWith(v, opts)
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "$.properties.a", se.Path)
	assert.Equal(t, "$ref", se.Keyword)
	v, err = strictjson.Parse(`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, roomy)
	require.NoError(t, err)
	_, err = CompileWith(v, opts)
	assert.NoError(t, err)
}

// TestRefs_FanOut: a doubling chain of definitions expands exponentially;
// the expansion stops at the node limit with the path of the reference
// that crossed it, and the work done is bounded by the schema's own size.
func TestRefs_FanOut(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{"d0":{"type":"string"}`)
	for i := 1; i <= 40; i++ {
		p := `{"$ref":"#/$defs/d` + strconv.Itoa(i-1) + `"}`
		b.WriteString(`,"d` + strconv.Itoa(i) + `":{"anyOf":[` + p + `,` + p + `]}`)
	}
	b.WriteString(`},"properties":{"x":{"$ref":"#/$defs/d40"}}}`)
	_, err := compileExt(t, b.String())
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "$ref", se.Keyword)
	// d_k inlines 2^k string schemas, so some d_k crosses 4096 nodes first.
	assert.True(t, strings.HasPrefix(se.Path, "$.$defs.d"), se.Path)

	// Within the limit the same shape binds and validates, charging every
	// inlined node visit.
	small := strings.Replace(b.String(), `"x":{"$ref":"#/$defs/d40"}`, `"x":{"$ref":"#/$defs/d3"}`, 1)
	small = small[:strings.Index(small, `,"d4"`)] + small[strings.Index(small, `},"properties"`):]
	s := mustCompileExt(t, small)
	// x: d3 → 2 × d2 → 4 × d1 → 8 × d0: 1 + 2 + 4 + 8 visits below the root.
	assert.Equal(t, 1+1+2+4+8, steps(t, s, value(t, `{"x":"s"}`)))

	// Depth: d31 nests 31 levels through items, which fits alone but not
	// at level 2 under properties.
	b.Reset()
	b.WriteString(`{"type":"object","$defs":{"d0":{}`)
	for i := 1; i <= 31; i++ {
		b.WriteString(`,"d` + strconv.Itoa(i) + `":{"items":{"$ref":"#/$defs/d` + strconv.Itoa(i-1) + `"}}`)
	}
	b.WriteString(`},"properties":{"x":{"$ref":"#/$defs/d31"}}}`)
	v, err := strictjson.Parse(b.String(), roomy)
	require.NoError(t, err)
	_, err = CompileWith(v, Options{ExtendedKeywords: true, MaxDepth: 32})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "$.properties.x", se.Path)
	assert.Equal(t, "$ref", se.Keyword)
	_, err = CompileWith(v, Options{ExtendedKeywords: true, MaxDepth: 64})
	assert.NoError(t, err)
}

// TestRefs_DefsNotMeasured: the root $defs is removed from the inlined
// schema, so it does not count against the limits of the expansion.
func TestRefs_DefsNotMeasured(t *testing.T) {
	big := `"` + strings.Repeat("x", 30000) + `"`
	schema := `{"type":"object","$defs":{"d":{"description":` + big + `}},"properties":{"a":{"$ref":"#/$defs/d"}}}`
	v, err := strictjson.Parse(schema, roomy)
	require.NoError(t, err)
	// $defs (30 kB) plus one inlined copy (30 kB) is over 40 kB; the result alone is not.
	s, err := CompileWith(v, Options{ExtendedKeywords: true, MaxBytes: 40000})
	require.NoError(t, err)
	assert.NotNil(t, s.Inlined())
	schema = strings.Replace(schema, `"properties":{"a":{"$ref":"#/$defs/d"}}`, `"properties":{"a":{"$ref":"#/$defs/d"},"b":{"$ref":"#/$defs/d"}}`, 1)
	v, err = strictjson.Parse(schema, roomy)
	require.NoError(t, err)
	_, err = CompileWith(v, Options{ExtendedKeywords: true, MaxBytes: 40000})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "$ref", se.Keyword)
	assert.Equal(t, "$", se.Path, "two copies cross the limit only together")
}
