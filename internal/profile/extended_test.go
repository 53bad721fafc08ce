package profile

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
)

var extendedOpts = Options{ExtendedKeywords: true}

func compileExt(t *testing.T, schema string) (*Schema, error) {
	t.Helper()
	v, err := strictjson.Parse(schema, roomy)
	require.NoError(t, err, schema)
	return CompileWith(v, extendedOpts)
}

func mustCompileExt(t *testing.T, schema string) *Schema {
	t.Helper()
	s, err := compileExt(t, schema)
	require.NoError(t, err, schema)
	return s
}

// TestExtended_DefaultRejects: without the option every extended keyword is
// rejected at its node, exactly as before.
func TestExtended_DefaultRejects(t *testing.T) {
	cases := []struct{ schema, path, keyword string }{
		{`{"type":"object","properties":{"v":{"exclusiveMinimum":0}}}`, "$.properties.v", "exclusiveMinimum"},
		{`{"type":"object","properties":{"v":{"exclusiveMaximum":0}}}`, "$.properties.v", "exclusiveMaximum"},
		{`{"type":"object","propertyNames":{"maxLength":3}}`, "$", "propertyNames"},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, "$", "additionalProperties"},
		{`{"type":"object","properties":{"v":{"pattern":"a"}}}`, "$.properties.v", "pattern"},
		{`{"type":"object","$defs":{"a":{}},"properties":{"v":{"$ref":"#/$defs/a"}}}`, "$", "$defs"},
	}
	for _, tc := range cases {
		_, err := compile(t, tc.schema)
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, tc.keyword, se.Keyword, tc.schema)
	}
}

// TestExtended_Inspection: what each keyword admits and the exact path and
// keyword of what it rejects.
func TestExtended_Inspection(t *testing.T) {
	accepted := []string{
		`{"type":"object","properties":{"v":{"exclusiveMinimum":0,"exclusiveMaximum":1.5}}}`,
		`{"type":"object","properties":{"v":{"exclusiveMinimum":-9007199254740991,"minimum":3}}}`,
		`{"type":"object","propertyNames":{"maxLength":3,"enum":["a","b"]}}`,
		`{"type":"object","propertyNames":{}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","additionalProperties":{}}`,
		`{"type":"object","additionalProperties":true}`,
		`{"type":"object","additionalProperties":{"additionalProperties":{"type":"integer"}}}`,
		`{"type":"object","properties":{"m":{"type":"object","propertyNames":{"minLength":1},"additionalProperties":{"type":"number"}}}}`,
	}
	for _, s := range accepted {
		_, err := compileExt(t, s)
		assert.NoError(t, err, s)
	}
	rejected := []struct{ schema, path, keyword string }{
		{`{"type":"object","properties":{"v":{"exclusiveMinimum":true}}}`, "$.properties.v", "exclusiveMinimum"},
		{`{"type":"object","properties":{"v":{"exclusiveMaximum":false}}}`, "$.properties.v", "exclusiveMaximum"},
		{`{"type":"object","properties":{"v":{"exclusiveMaximum":"1"}}}`, "$.properties.v", "exclusiveMaximum"},
		{`{"type":"object","properties":{"v":{"exclusiveMinimum":null}}}`, "$.properties.v", "exclusiveMinimum"},
		{`{"type":"object","propertyNames":true}`, "$.propertyNames", "schema"},
		{`{"type":"object","propertyNames":{"format":"uri"}}`, "$.propertyNames", "format"},
		{`{"type":"object","additionalProperties":null}`, "$.additionalProperties", "schema"},
		{`{"type":"object","additionalProperties":[]}`, "$.additionalProperties", "schema"},
		{`{"type":"object","additionalProperties":{"not":{}}}`, "$.additionalProperties", "not"},
		{`{"type":"object","additionalProperties":{"type":"strings"}}`, "$.additionalProperties", "type"},
		{`{"type":"object","allOf":[{}]}`, "$", "allOf"},
		{`{"type":"object","patternProperties":{}}`, "$", "patternProperties"},
		{`{"type":"object","properties":{"v":{"format":"email"}}}`, "$.properties.v", "format"},
		{`{"type":"object","prefixItems":[]}`, "$", "prefixItems"},
		{`{"type":"object","unevaluatedProperties":false}`, "$", "unevaluatedProperties"},
		{`{"type":"object","$id":"x"}`, "$", "$id"},
		{`{"type":"object","$anchor":"x"}`, "$", "$anchor"},
		{`{"type":"object","dependentSchemas":{}}`, "$", "dependentSchemas"},
	}
	for _, tc := range rejected {
		_, err := compileExt(t, tc.schema)
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, tc.keyword, se.Keyword, tc.schema)
	}
}

// TestExtended_Validation: 2020-12 semantics, the first violation in walk
// order, and paths that never echo an undeclared key.
func TestExtended_Validation(t *testing.T) {
	cases := []struct{ schema, value, keyword, path string }{
		{`{"type":"object","properties":{"v":{"exclusiveMinimum":0}}}`, `{"v":0}`, "exclusiveMinimum", "$.v"},
		{`{"type":"object","properties":{"v":{"exclusiveMinimum":0}}}`, `{"v":1e-300}`, "", ""},
		{`{"type":"object","properties":{"v":{"exclusiveMinimum":0}}}`, `{"v":-0}`, "exclusiveMinimum", "$.v"},
		{`{"type":"object","properties":{"v":{"exclusiveMaximum":1}}}`, `{"v":1.0}`, "exclusiveMaximum", "$.v"},
		{`{"type":"object","properties":{"v":{"exclusiveMaximum":1}}}`, `{"v":0.999}`, "", ""},
		{`{"type":"object","properties":{"v":{"exclusiveMaximum":1}}}`, `{"v":"2"}`, "", ""},
		{`{"type":"object","properties":{"v":{"minimum":5,"exclusiveMinimum":0}}}`, `{"v":3}`, "minimum", "$.v"},
		{`{"type":"object","properties":{"v":{"maximum":5,"exclusiveMaximum":5}}}`, `{"v":5}`, "exclusiveMaximum", "$.v"},
		{`{"type":"object","propertyNames":{"maxLength":2}}`, `{"ab":1,"secret":2}`, "propertyNames", "$"},
		{`{"type":"object","properties":{"m":{"propertyNames":{"enum":["a"]}}}}`, `{"m":{"a":1,"b":2}}`, "propertyNames", "$.m"},
		{`{"type":"object","propertyNames":{"type":"string"}}`, `{"a":1}`, "", ""},
		{`{"type":"object","propertyNames":{"type":"number"}}`, `{}`, "", ""},
		{`{"type":"object","propertyNames":{"type":"number"}}`, `{"1":1}`, "propertyNames", "$"},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"number"}}`, `{"a":"x","b":1}`, "", ""},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"number"}}`, `{"a":"x","secret":"y"}`, "additionalProperties", "$"},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"number"}}`, `{"a":1,"b":1}`, "type", "$.a"},
		{`{"type":"object","properties":{"m":{"additionalProperties":{"type":"number"}}}}`, `{"m":{"k":"v"}}`, "additionalProperties", "$"},
		{`{"type":"object","required":["z"],"additionalProperties":{"type":"number"}}`, `{"a":"x"}`, "required", "$.z"},
		{`{"type":"object","propertyNames":{"maxLength":1},"properties":{"ab":{"type":"string"}}}`, `{"ab":1}`, "propertyNames", "$"},
		{`{"type":"object","additionalProperties":true}`, `{"a":1}`, "", ""},
	}
	for _, tc := range cases {
		vi, err := mustCompileExt(t, tc.schema).Validate(value(t, tc.value), 100000)
		require.NoError(t, err)
		if tc.keyword == "" {
			assert.Nil(t, vi, "%s %s", tc.schema, tc.value)
			continue
		}
		require.NotNil(t, vi, "%s %s", tc.schema, tc.value)
		assert.Equal(t, tc.keyword, vi.Keyword, "%s %s", tc.schema, tc.value)
		assert.Equal(t, tc.path, vi.Render(), "%s %s", tc.schema, tc.value)
		assert.NotContains(t, vi.Render(), "secret")
	}
}

// TestExtended_ChargePoints: every key under propertyNames and every
// undeclared member under an additionalProperties schema is one schema-node
// visit; exclusive bounds cost nothing beyond their node's visit.
func TestExtended_ChargePoints(t *testing.T) {
	cases := []struct {
		name, schema, value string
		want                int
	}{
		{"exclusive bounds", `{"type":"object","properties":{"v":{"exclusiveMinimum":0,"exclusiveMaximum":2}}}`, `{"v":1}`, 2},
		{"propertyNames per key", `{"type":"object","propertyNames":{}}`, `{"a":1,"b":2,"c":3}`, 4},
		{"propertyNames with enum", `{"type":"object","propertyNames":{"enum":["x","a"]}}`, `{"a":1}`, 4},
		{"additional per undeclared", `{"type":"object","properties":{"a":{}},"additionalProperties":{}}`, `{"a":1,"b":2,"c":3}`, 4},
		{"both", `{"type":"object","propertyNames":{},"additionalProperties":{}}`, `{"a":1,"b":2}`, 5},
	}
	for _, tc := range cases {
		s := mustCompileExt(t, tc.schema)
		assert.Equal(t, tc.want, steps(t, s, value(t, tc.value)), tc.name)
	}
}

// TestExtended_ManyPropertyNames: a value with many keys under propertyNames
// and an additionalProperties schema exhausts the budget, never more work.
func TestExtended_ManyPropertyNames(t *testing.T) {
	var b strings.Builder
	b.WriteByte('{')
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	b.WriteByte('}')
	s := mustCompileExt(t, `{"type":"object","propertyNames":{"anyOf":[{"maxLength":9},{"minLength":1}]},"additionalProperties":{"anyOf":[{},{}]}}`)
	v := value(t, b.String())
	// Root 1 + per key (propertyNames node + 2 branches) + per member (node + 2 branches).
	need := 1 + 3*5000 + 3*5000
	vi, err := s.Validate(v, need)
	require.NoError(t, err)
	assert.Nil(t, vi)
	_, err = s.Validate(v, need-1)
	assert.ErrorIs(t, err, ErrBudget)
	_, err = s.Validate(v, 10000)
	assert.ErrorIs(t, err, ErrBudget)
}

// TestExtended_Pattern: admitted and refused patterns, unanchored matching
// on code points, and the violation's keyword and path.
func TestExtended_Pattern(t *testing.T) {
	for _, p := range []string{`^[a-z]+$`, `\\d{4}`, `^(?!\\.)\\S+$`, ``, `.`} {
		_, err := compileExt(t, `{"type":"object","properties":{"v":{"type":"string","pattern":"`+p+`"}}}`)
		assert.NoError(t, err, p)
	}
	rejected := []struct{ schema, path string }{
		{`{"type":"object","properties":{"v":{"pattern":"(?<=a)b"}}}`, "$.properties.v"},
		{`{"type":"object","properties":{"v":{"pattern":"(a)\\1"}}}`, "$.properties.v"},
		{`{"type":"object","properties":{"v":{"pattern":"a{"}}}`, "$.properties.v"},
		{`{"type":"object","properties":{"v":{"pattern":"\\p{L}"}}}`, "$.properties.v"},
		{`{"type":"object","properties":{"v":{"pattern":"\\a"}}}`, "$.properties.v"},
		{`{"type":"object","properties":{"v":{"pattern":1}}}`, "$.properties.v"},
		{`{"type":"object","properties":{"v":{"pattern":null}}}`, "$.properties.v"},
		{`{"type":"object","propertyNames":{"pattern":"[z-a]"}}`, "$.propertyNames"},
	}
	for _, tc := range rejected {
		_, err := compileExt(t, tc.schema)
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, "pattern", se.Keyword, tc.schema)
	}
	cases := []struct{ schema, value, keyword, path string }{
		{`{"type":"object","properties":{"v":{"pattern":"b"}}}`, `{"v":"abc"}`, "", ""},
		{`{"type":"object","properties":{"v":{"pattern":"^b"}}}`, `{"v":"abc"}`, "pattern", "$.v"},
		{`{"type":"object","properties":{"v":{"pattern":"^.$"}}}`, `{"v":"😀"}`, "", ""},
		{`{"type":"object","properties":{"v":{"pattern":"^.$"}}}`, `{"v":"\n"}`, "pattern", "$.v"},
		{`{"type":"object","properties":{"v":{"pattern":"^\\s$"}}}`, `{"v":"\u00a0"}`, "", ""},
		{`{"type":"object","properties":{"v":{"pattern":"^a","maxLength":1}}}`, `{"v":"ba"}`, "maxLength", "$.v"},
		{`{"type":"object","properties":{"v":{"pattern":"^a"}}}`, `{"v":5}`, "", ""},
		{`{"type":"object","properties":{"v":{"items":{"pattern":"^[0-9]+$"}}}}`, `{"v":["1","x"]}`, "pattern", "$.v[1]"},
		{`{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}`, `{"ok":1,"NOT":2}`, "propertyNames", "$"},
	}
	for _, tc := range cases {
		vi, err := mustCompileExt(t, tc.schema).Validate(value(t, tc.value), 100000)
		require.NoError(t, err)
		if tc.keyword == "" {
			assert.Nil(t, vi, "%s %s", tc.schema, tc.value)
			continue
		}
		require.NotNil(t, vi, "%s %s", tc.schema, tc.value)
		assert.Equal(t, tc.keyword, vi.Keyword, "%s %s", tc.schema, tc.value)
		assert.Equal(t, tc.path, vi.Render(), "%s %s", tc.schema, tc.value)
	}
}

// TestExtended_PatternBudget: a match costs its pattern's Cost for the
// string, so a long string under a large (for a backtracker, exponential)
// pattern exhausts the budget instead of running unbounded.
func TestExtended_PatternBudget(t *testing.T) {
	s := mustCompileExt(t, `{"type":"object","properties":{"v":{"pattern":"^(a|aa)+(b|bb)*$"}}}`)
	re := s.root.properties["v"].ext.pattern
	short := `{"v":"aab"}`
	assert.Equal(t, 2+re.Cost("aab"), steps(t, s, value(t, short)))
	long := strings.Repeat("a", 200000) + "c"
	v := value(t, `{"v":"`+long+`"}`)
	need := 2 + re.Cost(long)
	require.Greater(t, need, 100000, "the long string costs more than the default budget")
	_, err := s.Validate(v, 100000)
	assert.ErrorIs(t, err, ErrBudget)
	vi, err := s.Validate(v, need)
	require.NoError(t, err)
	require.NotNil(t, vi)
	assert.Equal(t, "pattern", vi.Keyword)
	_, err = s.Validate(v, need-1)
	assert.ErrorIs(t, err, ErrBudget)
}

// TestExtended_PatternSourceBound: a pattern repeated through $ref is
// compiled once; distinct pattern source beyond MaxPatternBytesPerSchema is
// refused at the pattern that crosses it.
func TestExtended_PatternSourceBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{"p":{"pattern":"^` + strings.Repeat("a", 1000) + `$"}},"properties":{`)
	for i := range 30 { // 30 inlined copies of 1004 bytes: within the byte limit
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":{"$ref":"#/$defs/p"}`)
	}
	b.WriteString(`}}`)
	s := mustCompileExt(t, b.String())
	assert.Same(t, s.root.properties["k0"].ext.pattern, s.root.properties["k29"].ext.pattern)

	b.Reset()
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 9 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":{"pattern":"^` + strconv.Itoa(i) + strings.Repeat("a", 1000) + `$"}`)
	}
	b.WriteString(`}}`)
	_, err := compileExt(t, b.String())
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "$.properties.k8", se.Path, "1004 bytes each: the ninth crosses 8192")
	assert.Equal(t, "pattern", se.Keyword)
}
