package purraopenai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"purra.dev/purramcp/integrations/purraopenai"
)

func TestStrictEligible(t *testing.T) {
	cases := []struct {
		schema string
		want   bool
	}{
		{`{"type":"object","properties":{},"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"q":{"type":"string","description":"d","title":"t"}},"required":["q"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"o":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false},"c":{"const":"x","type":"string"},"z":{"type":"null"}},"required":["tags","o","c","z"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`, false},                 // optional property
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, false},                             // open object
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":true}`, false}, // open object
		{`{"type":"object","additionalProperties":false}`, false},                                                      // no properties
		{`{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"q":{"type":"string","format":"uri"}},"required":["q"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"q":{"type":"string","pattern":"^a"}},"required":["q"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"minItems":2}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"array"}},"required":["a"],"additionalProperties":false}`, false}, // no items
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"d"}},"required":["a"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}],"type":"string"}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string","minLength":1}]}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"anyOf":[]}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","anyOf":[{"type":"object","properties":{},"additionalProperties":false}],"properties":{},"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"enum":[{"x":1}],"type":"object"}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":"a","additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"string"}`, false},
		{`{"properties":{},"additionalProperties":false}`, false},
	}
	for _, c := range cases {
		var schema map[string]any
		if err := json.Unmarshal([]byte(c.schema), &schema); err != nil {
			t.Fatal(err)
		}
		if got := purraopenai.StrictEligible(schema); got != c.want {
			t.Errorf("StrictEligible(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
	if purraopenai.StrictEligible(nil) {
		t.Error("nil schema eligible")
	}
}

func TestStrictEligible_Bounds(t *testing.T) {
	// Objects nested six deep and more than 100 properties are refused.
	nested := `{"type":"string"}`
	for i := 0; i < 5; i++ {
		nested = `{"type":"object","properties":{"x":` + nested + `},"required":["x"],"additionalProperties":false}`
	}
	deep := map[string]any{}
	_ = json.Unmarshal([]byte(nested), &deep)
	if !purraopenai.StrictEligible(deep) {
		t.Fatal("five levels refused")
	}
	nested = `{"type":"object","properties":{"x":` + nested + `},"required":["x"],"additionalProperties":false}`
	_ = json.Unmarshal([]byte(nested), &deep)
	if purraopenai.StrictEligible(deep) {
		t.Fatal("six levels accepted")
	}
	for _, n := range []int{100, 101} {
		var props, req []string
		for i := range n {
			props = append(props, fmt.Sprintf(`"p%d":{"type":"boolean"}`, i))
			req = append(req, fmt.Sprintf(`"p%d"`, i))
		}
		wide := map[string]any{}
		_ = json.Unmarshal([]byte(`{"type":"object","properties":{`+strings.Join(props, ",")+`},"required":[`+
			strings.Join(req, ",")+`],"additionalProperties":false}`), &wide)
		if got := purraopenai.StrictEligible(wide); got != (n == 100) {
			t.Fatalf("%d properties: eligible %v", n, got)
		}
	}
}
