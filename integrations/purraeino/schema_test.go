package purraeino_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraeino"
)

func handBuilt(name, schemaJSON string) purramcp.ToolDefinition {
	var s map[string]any
	if schemaJSON != "" {
		if err := json.Unmarshal([]byte(schemaJSON), &s); err != nil {
			panic(err)
		}
	}
	return purramcp.ToolDefinition{Name: name, Description: "d", InputSchema: s,
		Run: func(context.Context, json.RawMessage, purramcp.ToolContext) (purramcp.ToolResult, error) {
			return purramcp.ToolResult{}, nil
		}}
}

// TestTools_SchemaRefused: a schema Eino's schema type would change is
// refused with the tool's name and where, never rewritten.
func TestTools_SchemaRefused(t *testing.T) {
	for schemaJSON, at := range map[string]string{
		`{"type":"object","properties":{"a":{"const":null}}}`:                   `"/properties/a/const"`,
		`{"type":"object","properties":{"a":{"default":null}}}`:                 `"/properties/a/default"`,
		`{"type":"object","x-purra":1}`:                                         `"/x-purra"`,
		`{"type":"object","properties":{"a":{"anyOf":[{"x-b":true},{}]}}}`:      `"/properties/a/anyOf/0/x-b"`,
		`{"type":"object","properties":{"a/b~":{"items":{"const":null}}}}`:      `"/properties/a~1b~0/items/const"`,
		`{"type":"object","additionalProperties":{"type":"string","x-c":null}}`: `"/additionalProperties/x-c"`,
	} {
		_, err := purraeino.Tools([]purramcp.ToolDefinition{handBuilt("lossy", schemaJSON)}, purraeino.Options{})
		if err == nil || !strings.Contains(err.Error(), `tool "lossy"`) || !strings.Contains(err.Error(), at) {
			t.Errorf("%s: error %v, want one naming the tool and %s", schemaJSON, err, at)
		}
	}
}

// TestTools_SchemaKept: what the model is sent for schemas Eino's type holds,
// exactly; only spellings that assert and annotate nothing are dropped.
func TestTools_SchemaKept(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"object","properties":{"q":{"type":"string","maxLength":64}},"required":["q"],"additionalProperties":false}`:                                                                `{"properties":{"q":{"maxLength":64,"type":"string"}},"additionalProperties":false,"required":["q"],"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":["string","null"],"uniqueItems":false,"title":""},"b":{"items":true,"minItems":0}},"required":[],"$defs":{"x":{"enum":[null,1.5e300]}}}`: `{"$defs":{"x":{"enum":[null,1.5e+300]}},"properties":{"a":{"type":["string","null"]},"b":{"items":true,"minItems":0}},"type":"object"}`,
		`{"type":"object","properties":{"c":{"oneOf":[{"const":"x"},{"type":"integer","minimum":-1}]}}}`:                                                                                     `{"properties":{"c":{"oneOf":[{"const":"x"},{"minimum":-1,"type":"integer"}]}},"type":"object"}`,
	} {
		tools, err := purraeino.Tools([]purramcp.ToolDefinition{handBuilt("kept", in)}, purraeino.Options{})
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		info, err := tools[0].Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		js, err := info.ToJSONSchema()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(js)
		if string(b) != want {
			t.Errorf("%s:\n sent %s\n want %s", in, b, want)
		}
	}
}

// TestTools_InfoFresh: Eino's model adapters change the schema they get
// (sorting required in place); the next Info is unaffected.
func TestTools_InfoFresh(t *testing.T) {
	tools, err := purraeino.Tools([]purramcp.ToolDefinition{
		handBuilt("t", `{"type":"object","properties":{"b":{},"a":{}},"required":["b","a"]}`)}, purraeino.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := tools[0].Info(t.Context())
	js, _ := first.ToJSONSchema()
	js.Required[0], js.Required[1] = "changed", "too"
	js.Properties.Delete("a")
	first.Name, first.Desc = "x", "y"
	second, _ := tools[0].Info(t.Context())
	js2, _ := second.ToJSONSchema()
	b, _ := json.Marshal(js2)
	if second.Name != "t" || second.Desc != "d" || string(b) != `{"properties":{"a":true,"b":true},"required":["b","a"],"type":"object"}` {
		t.Fatalf("second Info %s %q: %s", second.Name, second.Desc, b)
	}
}

func TestTools_Errors(t *testing.T) {
	noRun := handBuilt("x", `{"type":"object"}`)
	noRun.Run = nil
	for name, defs := range map[string][]purramcp.ToolDefinition{
		`empty name`:           {handBuilt("", `{"type":"object"}`)},
		`"a" is defined twice`: {handBuilt("a", `{"type":"object"}`), handBuilt("a", `{"type":"object"}`)},
		`"x" has no Run`:       {noRun},
	} {
		if _, err := purraeino.Tools(defs, purraeino.Options{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	tools, err := purraeino.Tools([]purramcp.ToolDefinition{handBuilt("none", "")}, purraeino.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := tools[0].Info(t.Context()); err != nil || info.ParamsOneOf != nil {
		t.Fatalf("no schema: %+v %v", info, err)
	}
	if tools, err := purraeino.Tools(nil, purraeino.Options{}); err != nil || len(tools) != 0 {
		t.Fatalf("no definitions: %v %v", tools, err)
	}
}

func TestNewToolset_NilSource(t *testing.T) {
	var none *purramcp.Catalog
	for name, src := range map[string]purraeino.Source{"nil": nil, "nil catalog": none} {
		if ts, err := purraeino.NewToolset(src, purraeino.Options{}); err == nil || ts != nil {
			t.Errorf("%s: NewToolset = %v, %v; want an error", name, ts, err)
		}
	}
}
