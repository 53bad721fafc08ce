package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refWith is a root whose property a is {"$ref":"#/$defs/d", siblings...}.
func refWith(def, siblings string) string {
	return `{"type":"object","$defs":{"d":` + def + `},"properties":{"a":{"$ref":"#/$defs/d",` + siblings + `}}}`
}

// TestMerge_Intersection: a $ref with sibling keywords (2020-12) inlines as
// one node asserting both the definition and the siblings, exactly.
func TestMerge_Intersection(t *testing.T) {
	cases := []struct {
		name, def, siblings, want string
		valid, invalid            []string // values of a
		keyword                   []string // the failing keyword of each invalid value
	}{
		{"bounds", `{"type":"string","maxLength":5,"minLength":1}`, `"maxLength":3,"minLength":2`,
			`{"maxLength":3,"minLength":2,"type":"string"}`,
			[]string{`"ab"`, `"abc"`}, []string{`"abcd"`, `"a"`}, []string{"maxLength", "minLength"}},
		{"numbers", `{"type":"number","minimum":0,"maximum":10,"exclusiveMaximum":9}`, `"minimum":2,"maximum":20,"exclusiveMaximum":5`,
			`{"exclusiveMaximum":5,"maximum":10,"minimum":2,"type":"number"}`,
			[]string{`2`, `4.5`}, []string{`1`, `5`}, []string{"minimum", "exclusiveMaximum"}},
		{"type", `{"type":["number","string","null"]}`, `"type":["integer","null"]`,
			`{"type":["integer","null"]}`,
			[]string{`3`, `null`}, []string{`3.5`, `"x"`}, []string{"type", "type"}},
		{"enum", `{"enum":["a","b","c"]}`, `"enum":["c","a","z"]`,
			`{"enum":["a","c"]}`,
			[]string{`"a"`, `"c"`}, []string{`"b"`, `"z"`}, []string{"enum", "enum"}},
		{"required", `{"type":"object","required":["x"]}`, `"required":["y","x"]`,
			`{"required":["x","y"],"type":"object"}`,
			[]string{`{"x":1,"y":2}`}, []string{`{"x":1}`, `{"y":1}`}, []string{"required", "required"}},
		{"items", `{"type":"array","items":{"type":"string","maxLength":4},"uniqueItems":false}`,
			`"items":{"minLength":2},"uniqueItems":true`,
			`{"items":{"maxLength":4,"minLength":2,"type":"string"},"type":"array","uniqueItems":true}`,
			[]string{`["ab","cd"]`}, []string{`["a"]`, `["abcde"]`, `["ab","ab"]`}, []string{"minLength", "maxLength", "uniqueItems"}},
		{"properties open", `{"type":"object","properties":{"k":{"type":"string"}}}`,
			`"properties":{"k":{"maxLength":2},"j":{"type":"number"}}`,
			`{"properties":{"k":{"maxLength":2,"type":"string"},"j":{"type":"number"}},"type":"object"}`,
			[]string{`{"k":"ab","j":1,"other":true}`}, []string{`{"k":"abc"}`, `{"k":1}`, `{"j":"x"}`},
			[]string{"maxLength", "type", "type"}},
		{"properties closed by the definition", `{"type":"object","properties":{"k":{}},"additionalProperties":false}`,
			`"properties":{"j":{}}`,
			`{"additionalProperties":false,"properties":{"k":{}},"type":"object"}`,
			[]string{`{"k":1}`, `{}`}, []string{`{"j":1}`}, []string{"additionalProperties"}},
		{"properties closed by the siblings", `{"type":"object","properties":{"k":{"type":"string"}}}`,
			`"properties":{"k":{},"j":{}},"additionalProperties":false`,
			`{"properties":{"k":{"type":"string"},"j":{}},"type":"object","additionalProperties":false}`,
			[]string{`{"k":"s","j":1}`}, []string{`{"k":1}`, `{"x":1}`}, []string{"type", "additionalProperties"}},
		{"nothing allowed", `{"type":"object","additionalProperties":false}`, `"properties":{"j":{}}`,
			`{"additionalProperties":false,"properties":{},"type":"object"}`,
			[]string{`{}`}, []string{`{"j":1}`}, []string{"additionalProperties"}},
		{"additional schemas", `{"type":"object","properties":{"k":{}},"additionalProperties":{"type":"string"}}`,
			`"properties":{"j":{"maxLength":1}},"additionalProperties":{"minLength":1}`,
			`{"additionalProperties":{"minLength":1,"type":"string"},"properties":{"k":{"minLength":1},"j":{"maxLength":1,"type":"string"}},"type":"object"}`,
			[]string{`{"k":"x","j":"y","z":"zz"}`}, []string{`{"k":""}`, `{"j":"yy"}`, `{"j":1}`, `{"z":""}`},
			[]string{"minLength", "maxLength", "type", "additionalProperties"}},
		{"closed on both sides", `{"type":"object","properties":{"k":{}},"additionalProperties":false}`,
			`"properties":{"j":{}},"additionalProperties":{"type":"string"}`,
			`{"additionalProperties":false,"properties":{"k":{"type":"string"}},"type":"object"}`,
			[]string{`{"k":"s"}`}, []string{`{"k":1}`, `{"j":"x"}`}, []string{"type", "additionalProperties"}},
		{"additional only", `{"type":"object","additionalProperties":{"type":"string"}}`,
			`"additionalProperties":{"maxLength":2}`,
			`{"additionalProperties":{"maxLength":2,"type":"string"},"type":"object"}`,
			[]string{`{"x":"ab"}`, `{}`}, []string{`{"x":"abc"}`, `{"x":1}`}, []string{"additionalProperties", "additionalProperties"}},
		{"annotations", `{"type":"string","title":"T","description":"d"}`, `"description":"mine","title":"U"`,
			`{"description":"mine","title":"U","type":"string"}`,
			[]string{`"x"`}, []string{`1`}, []string{"type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompileExt(t, refWith(tc.def, tc.siblings))
			assert.JSONEq(t, `{"type":"object","properties":{"a":`+tc.want+`}}`, inlinedJSON(t, s))
			for _, v := range tc.valid {
				vi, err := s.Validate(value(t, `{"a":`+v+`}`), 10000)
				require.NoError(t, err)
				assert.Nil(t, vi, v)
			}
			require.Len(t, tc.keyword, len(tc.invalid))
			for i, v := range tc.invalid {
				vi, err := s.Validate(value(t, `{"a":`+v+`}`), 10000)
				require.NoError(t, err)
				require.NotNil(t, vi, v)
				assert.Equal(t, tc.keyword[i], vi.Keyword, v)
			}
		})
	}
}

// TestMerge_FailsClosed: combinations one node cannot assert exactly are
// refused at the $ref, with its path.
func TestMerge_FailsClosed(t *testing.T) {
	cases := []struct{ name, def, siblings string }{
		{"disjoint types", `{"type":"string"}`, `"type":"number"`},
		{"disjoint enums", `{"enum":[1,2]}`, `"enum":[3]`},
		{"two consts", `{"const":1}`, `"const":2`},
		{"two patterns", `{"type":"string","pattern":"^a"}`, `"pattern":"b$"`},
		{"two anyOf", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `"anyOf":[{"type":"number"},{"type":"null"}]`},
		{"two oneOf", `{"oneOf":[{"type":"string"}]}`, `"oneOf":[{"type":"number"}]`},
		{"nested disjoint", `{"type":"array","items":{"type":"string"}}`, `"items":{"type":"number"}`},
		{"disjoint property", `{"type":"object","properties":{"k":{"type":"string"}}}`, `"properties":{"k":{"type":"number"}}`},
		{"disjoint additional", `{"type":"object","additionalProperties":{"type":"string"}}`,
			`"additionalProperties":{"type":"number"}`},
		{"bound of the wrong type", `{"type":"string","maxLength":3}`, `"maxLength":"2"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileExt(t, refWith(tc.def, tc.siblings))
			var se *SchemaError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "$.properties.a", se.Path)
			assert.Equal(t, "$ref", se.Keyword)
		})
	}
}

// TestMerge_Draft07StaysRejected: under a declared draft-07 root every
// sibling of a $ref is still refused, even where 2020-12 would intersect.
func TestMerge_Draft07StaysRejected(t *testing.T) {
	v := value(t, refWith(`{"type":"string","maxLength":5}`, `"maxLength":3`))
	_, err := CompileWith(v, Options{ExtendedKeywords: true, Draft07: true})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "$.properties.a", se.Path)
	assert.Equal(t, "$ref", se.Keyword)
}
