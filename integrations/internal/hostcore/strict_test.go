package hostcore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/integrations/internal/hostcore"
)

func TestStrictEligible(t *testing.T) {
	cases := []struct {
		schema       string
		plain, anyOf bool // the answer without and with anyOf allowed
	}{
		{`{"type":"object","properties":{},"additionalProperties":false}`, true, true},
		{`{"type":"object","properties":{"q":{"type":"string","description":"d","title":"t"}},"required":["q"],"additionalProperties":false}`, true, true},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"o":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false},"c":{"const":"x","type":"string"},"z":{"type":"null"}},"required":["tags","o","c","z"],"additionalProperties":false}`, true, true},
		{`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`, false, false},                 // optional property
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, false, false},                             // open object
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":true}`, false, false}, // open object
		{`{"type":"object","additionalProperties":false}`, false, false},                                                      // no properties
		{`{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"q":{"type":"string","format":"uri"}},"required":["q"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"q":{"type":"string","pattern":"^a"}},"required":["q"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"minItems":2}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"array"}},"required":["a"],"additionalProperties":false}`, false, false}, // no items
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a"],"additionalProperties":false}`, false, true},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"d"}},"required":["a"],"additionalProperties":false}`, false, true},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}],"description":1}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}],"type":"string"}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string","minLength":1}]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"anyOf":[]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","anyOf":[{"type":"object","properties":{},"additionalProperties":false}],"properties":{},"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"enum":[{"x":1}],"type":"object"}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string","const":[1]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string","enum":[]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string","title":7}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string","items":{"type":"string"}}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"required":[]}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":"a","additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","a"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"],"additionalProperties":false}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"],"additionalProperties":false}`, false, false},
		{`{"type":"string"}`, false, false},
		{`{"properties":{},"additionalProperties":false}`, false, false},
	}
	for _, c := range cases {
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.schema), &schema))
		assert.Equal(t, c.plain, hostcore.StrictEligible(schema, false), "anyOf not allowed: %s", c.schema)
		assert.Equal(t, c.anyOf, hostcore.StrictEligible(schema, true), "anyOf allowed: %s", c.schema)
	}
	assert.False(t, hostcore.StrictEligible(nil, true))
}

func TestStrictEligible_Bounds(t *testing.T) {
	// Objects nested six deep, more than 100 properties and enums of more
	// than 100 values are refused.
	nested := `{"type":"string"}`
	for range 5 {
		nested = `{"type":"object","properties":{"x":` + nested + `},"required":["x"],"additionalProperties":false}`
	}
	assert.True(t, hostcore.StrictEligible(decode(t, nested), false), "five levels")
	nested = `{"type":"object","properties":{"x":` + nested + `},"required":["x"],"additionalProperties":false}`
	assert.False(t, hostcore.StrictEligible(decode(t, nested), false), "six levels")
	for _, n := range []int{100, 101} {
		var props, req, enum []string
		for i := range n {
			props = append(props, fmt.Sprintf(`"p%d":{"type":"boolean"}`, i))
			req = append(req, fmt.Sprintf(`"p%d"`, i))
			enum = append(enum, fmt.Sprint(i))
		}
		wide := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` +
			strings.Join(req, ",") + `],"additionalProperties":false}`
		assert.Equal(t, n == 100, hostcore.StrictEligible(decode(t, wide), true), "%d properties", n)
		enumSchema := `{"type":"object","properties":{"e":{"type":"integer","enum":[` + strings.Join(enum, ",") +
			`]}},"required":["e"],"additionalProperties":false}`
		assert.Equal(t, n == 100, hostcore.StrictEligible(decode(t, enumSchema), true), "enum of %d", n)
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}
