package profile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
)

var roomy = strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20}

func compile(t *testing.T, schema string) (*Schema, error) {
	t.Helper()
	v, err := strictjson.Parse(schema, roomy)
	require.NoError(t, err, schema)
	return Compile(v)
}

func mustCompile(t *testing.T, schema string) *Schema {
	t.Helper()
	s, err := compile(t, schema)
	require.NoError(t, err, schema)
	return s
}

func value(t *testing.T, text string) any {
	t.Helper()
	v, err := strictjson.Parse(text, roomy)
	require.NoError(t, err, text)
	return v
}

// TestInspect_Keywords covers each per-keyword inspection rule (the root
// object, boolean schemas, the keyword whitelist, const, the count bounds),
// one row each.
func TestInspect_Keywords(t *testing.T) {
	wrap := func(node string) string { return `{"type":"object","properties":{"v":` + node + `}}` }
	rejected := []string{
		`{"type":["object"]}`, `{"type":"array"}`, `[]`, `true`, `{"properties":{}}`,
		wrap(`{"type":[]}`), wrap(`{"type":["string","string"]}`), wrap(`{"type":"float"}`), wrap(`{"type":1}`),
		wrap(`{"type":null}`), wrap(`{"title":1}`), wrap(`{"description":null}`), wrap(`{"properties":[]}`),
		wrap(`{"properties":{"a":true}}`), wrap(`{"required":[""]}`), wrap(`{"required":["a","a"]}`),
		wrap(`{"required":"a"}`), wrap(`{"additionalProperties":{}}`), wrap(`{"additionalProperties":null}`),
		wrap(`{"uniqueItems":1}`), wrap(`{"items":[{}]}`), wrap(`{"items":false}`), wrap(`{"anyOf":[]}`),
		wrap(`{"oneOf":{}}`), wrap(`{"anyOf":[true]}`), wrap(`{"enum":[]}`), wrap(`{"enum":{}}`),
		wrap(`{"minLength":-1}`), wrap(`{"maxLength":1.5}`), wrap(`{"minItems":"1"}`),
		wrap(`{"maxItems":-0.5}`), wrap(`{"minLength":3,"maxLength":2}`),
		wrap(`{"minimum":"0"}`), wrap(`{"maximum":null}`), wrap(`{"minimum":1,"maximum":0.5}`),
		wrap(`{"Type":"string"}`), wrap(`{"format":"date"}`), wrap(`{"x-vendor":1}`), wrap(`{"$ref":"#"}`),
		wrap(`{"default":null}`), wrap(`{"nullable":true}`), wrap(`{"allOf":[{}]}`), wrap(`{"$schema":"x"}`),
		wrap(`{"items":{"pattern":"a"}}`), wrap(`{"anyOf":[{"not":{}}]}`),
	}
	for _, s := range rejected {
		_, err := compile(t, s)
		assert.ErrorIs(t, err, ErrInvalid, "%s", s)
	}
	accepted := []string{
		`{"type":"object"}`, wrap(`{}`), wrap(`{"type":["string","null"]}`), wrap(`{"title":"","description":""}`),
		wrap(`{"properties":{}}`), wrap(`{"properties":{"$ref":{},"__proto__":{}}}`), wrap(`{"required":[]}`),
		wrap(`{"required":["not-declared"]}`), wrap(`{"const":null}`), wrap(`{"enum":[1,"1",null,[1],{"a":1}]}`),
		wrap(`{"minLength":2,"maxLength":2}`), wrap(`{"minItems":2.0}`), wrap(`{"minimum":-1.5,"maximum":-1.5}`),
		wrap(`{"type":"integer","minLength":3}`), wrap(`{"items":{"items":{}}}`), wrap(`{"maxLength":9007199254740991}`),
		`{"type":"object","const":{"10":1.25,"2":0}}`,
	}
	for _, s := range accepted {
		_, err := compile(t, s)
		assert.NoError(t, err, "%s", s)
	}
}

// steps returns the exact budget a validation needs: the smallest budget
// that does not fail with ErrBudget.
func steps(t *testing.T, s *Schema, v any) int {
	t.Helper()
	for n := 0; n < 10000; n++ {
		if _, err := s.Validate(v, n); err == nil {
			_, err := s.Validate(v, n-1)
			require.ErrorIs(t, err, ErrBudget)
			return n
		}
	}
	t.Fatal("no budget under 10000 suffices")
	return 0
}

// TestValidate_ChargePoints pins the exact charge of each charge point: one step
// per schema-node visit and per structural-equality call.
func TestValidate_ChargePoints(t *testing.T) {
	cases := []struct {
		name, schema, value string
		want                int
	}{
		{"root only", `{"type":"object"}`, `{"a":1}`, 1},
		{"declared member", `{"type":"object","properties":{"a":{}}}`, `{"a":1,"b":2}`, 2},
		{"enum stops at first match", `{"type":"object","properties":{"v":{"enum":[1,2,3]}}}`, `{"v":3}`, 5},
		{"enum first", `{"type":"object","properties":{"v":{"enum":[1,2,3]}}}`, `{"v":1}`, 3},
		{"anyOf charges every branch", `{"type":"object","anyOf":[{},{},{}]}`, `{}`, 4},
		{"oneOf charges every branch", `{"type":"object","oneOf":[{},{"type":"string"}]}`, `{}`, 3},
		{"nested branches", `{"type":"object","anyOf":[{"anyOf":[{},{}]},{}]}`, `{}`, 5},
		{"const recursion", `{"type":"object","const":{"a":[1,2]}}`, `{"a":[1,2]}`, 5},
		{"const key missing stops", `{"type":"object","const":{"a":1,"b":2}}`, `{"a":1,"c":2}`, 0},
		{"const count mismatch stops", `{"type":"object","const":{"a":1}}`, `{"a":1,"c":2}`, 2},
		{"items", `{"type":"object","properties":{"v":{"items":{}}}}`, `{"v":[1,2,3]}`, 5},
		{"uniqueItems all pairs", `{"type":"object","properties":{"v":{"uniqueItems":true}}}`, `{"v":[1,2,3]}`, 5},
		{"uniqueItems nested", `{"type":"object","properties":{"v":{"uniqueItems":true}}}`, `{"v":[[1],[2]]}`, 4},
	}
	for _, tc := range cases {
		s := mustCompile(t, tc.schema)
		v := value(t, tc.value)
		if tc.want == 0 {
			vi, err := s.Validate(v, 100)
			require.NoError(t, err)
			require.NotNil(t, vi, tc.name)
			continue
		}
		assert.Equal(t, tc.want, steps(t, s, v), tc.name)
	}
	// The const mismatch fails after: root visit 1 + equal(obj) 1 + equal(a) 1.
	s := mustCompile(t, `{"type":"object","const":{"a":1,"b":2}}`)
	vi, err := s.Validate(value(t, `{"a":1,"c":2}`), 3)
	require.NoError(t, err)
	assert.Equal(t, "const", vi.Keyword)
	_, err = s.Validate(value(t, `{"a":1,"c":2}`), 2)
	assert.ErrorIs(t, err, ErrBudget, "exhaustion before the violation wins")
}

// TestValidate_Order: the first violation in walk order wins.
func TestValidate_Order(t *testing.T) {
	cases := []struct{ schema, value, keyword, path string }{
		{`{"type":"object","anyOf":[{"required":["x"]}],"required":["y"]}`, `{}`, "anyOf", "$"},
		{`{"type":"object","properties":{"v":{"type":"string","enum":[1]}}}`, `{"v":1}`, "type", "$.v"},
		{`{"type":"object","properties":{"v":{"enum":["a"],"const":"b"}}}`, `{"v":"b"}`, "enum", "$.v"},
		{`{"type":"object","properties":{"v":{"minLength":2,"maxLength":3}}}`, `{"v":"a"}`, "minLength", "$.v"},
		{`{"type":"object","properties":{"v":{"minItems":3,"uniqueItems":true}}}`, `{"v":[1,1]}`, "minItems", "$.v"},
		{`{"type":"object","properties":{"v":{"uniqueItems":true,"items":{"type":"string"}}}}`, `{"v":[1,1]}`, "uniqueItems", "$.v"},
		{`{"type":"object","properties":{"v":{"items":{"type":"string"}}}}`, `{"v":["a",1]}`, "type", "$.v[1]"},
		{`{"type":"object","required":["b","a"],"additionalProperties":false}`, `{"z":1}`, "required", "$.b"},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`, `{"a":1,"z":1}`, "additionalProperties", "$"},
		{`{"type":"object","properties":{"a":{"type":"object","additionalProperties":false}}}`, `{"a":{"z":1}}`, "additionalProperties", "$"},
		{`{"type":"object","properties":{"v":{"minimum":1,"maximum":0.5}}}`, `{}`, "", ""},
		{`{"type":"object","properties":{"v":{"minimum":1}}}`, `{"v":0.5}`, "minimum", "$.v"},
		{`{"type":"object","properties":{"v":{"maximum":1}}}`, `{"v":1}`, "", ""},
		{`{"type":"object","properties":{"v":{"type":"integer"}}}`, `{"v":1e-400}`, "", ""},
		{`{"type":"object","properties":{"v":{"type":"number"}}}`, `{"v":true}`, "type", "$.v"},
		{`{"type":"object","properties":{"v":{"const":null}}}`, `{"v":false}`, "const", "$.v"},
		{`{"type":"object","properties":{"v":{"maxLength":2}}}`, `{"v":"é😀"}`, "", ""},
		{`{"type":"object","properties":{"2":{"type":"string"},"a":{"type":"string"}}}`, `{"a":1,"2":1}`, "type", "$.2"},
	}
	for _, tc := range cases {
		if strings.Contains(tc.schema, `"minimum":1,"maximum":0.5`) {
			_, err := compile(t, tc.schema)
			assert.ErrorIs(t, err, ErrInvalid)
			continue
		}
		vi, err := mustCompile(t, tc.schema).Validate(value(t, tc.value), 100000)
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

// TestValidate_PathCap: a rendered path over 512 bytes is replaced by "$".
func TestValidate_PathCap(t *testing.T) {
	for _, n := range []int{509, 510, 600} {
		name := strings.Repeat("k", n)
		s := mustCompile(t, `{"type":"object","required":["`+name+`"]}`)
		vi, err := s.Validate(value(t, `{}`), 10)
		require.NoError(t, err)
		want := "$." + name
		if len(want) > MaxPathBytes {
			want = "$"
		}
		assert.Equal(t, want, vi.Render(), "name of %d bytes", n)
	}
}

func TestValidate_ArrayIndexPath(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"v":{"items":{"items":{"type":"null"}}}}}`)
	vi, err := s.Validate(value(t, `{"v":[[],[null,null,0]]}`), 100)
	require.NoError(t, err)
	assert.Equal(t, "$.v[1][2]", vi.Render())
}

// TestCompile_SchemaErrorLocation: every inspection failure names the node path
// and the keyword, for the compatibility inspector; contracts hide both.
func TestCompile_SchemaErrorLocation(t *testing.T) {
	cases := []struct{ schema, path, keyword string }{
		{`{"type":"array"}`, "$", "type"},
		{`{"properties":{}}`, "$", "type"},
		{`[]`, "$", "schema"},
		{`{"type":"object","$ref":"#/x"}`, "$", "$ref"},
		{`{"type":"object","properties":{"q":{"type":"string","pattern":"^a"}}}`, "$.properties.q", "pattern"},
		{`{"type":"object","properties":{"q":{"items":{"anyOf":[{},{"format":"uri"}]}}}}`, "$.properties.q.items.anyOf[1]", "format"},
		{`{"type":"object","properties":{"q":{"items":true}}}`, "$.properties.q.items", "schema"},
		{`{"type":"object","properties":{"q":{"additionalProperties":{}}}}`, "$.properties.q", "additionalProperties"},
		{`{"type":"object","properties":{"q":{"minLength":3,"maxLength":2}}}`, "$.properties.q", "minLength"},
		{`{"type":"object","properties":{"q":{"maxItems":-1}}}`, "$.properties.q", "maxItems"},
		{`{"type":"object","oneOf":[]}`, "$", "oneOf"},
		{`{"type":"object","required":["a","a"]}`, "$", "required"},
		{`{"type":"object","title":null}`, "$", "title"},
		{`{"type":"object","maximum":"1"}`, "$", "maximum"},
	}
	for _, tc := range cases {
		_, err := compile(t, tc.schema)
		var se *SchemaError
		require.ErrorAs(t, err, &se, tc.schema)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.Equal(t, tc.path, se.Path, tc.schema)
		assert.Equal(t, tc.keyword, se.Keyword, tc.schema)
	}
}
