package purramcp_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// The extended differential: schemas inside purra.output-schema/v1 plus the
// keywords SchemaPolicy.ExtendedKeywords admits (exclusiveMinimum,
// exclusiveMaximum, propertyNames, additionalProperties as a schema, root
// $defs with local $ref, with and without siblings), checked by the
// extended profile and by jsonschema/v6 (draft 2020-12). pattern is left
// out: jsonschema/v6 also uses Go's regexp, so it is no independent check;
// testdata/ecma_patterns.json is.

// extSchema is diffGen.schema with extended keywords added at each node and,
// when defs is not empty, $ref nodes into them.
func (g *diffGen) extSchema(depth int, defs []string) map[string]any {
	if len(defs) > 0 && g.chance(0.25) {
		s := map[string]any{"$ref": "#/$defs/" + diffPick(g, defs)}
		if g.chance(0.3) {
			s["description"] = g.str(0, 2) // an annotation the merge keeps from the referrer
		}
		return s
	}
	s := g.schema(0)
	if g.chance(0.3) {
		lo, hi := g.r.IntN(len(diffNumberClasses)), g.r.IntN(len(diffNumberClasses))
		if diffNumberValue(lo) > diffNumberValue(hi) {
			lo, hi = hi, lo
		}
		switch g.r.IntN(3) {
		case 0:
			s["exclusiveMinimum"] = g.number(lo)
		case 1:
			s["exclusiveMaximum"] = g.number(hi)
		default:
			s["exclusiveMinimum"], s["exclusiveMaximum"] = g.number(lo), g.number(hi)
		}
		if g.chance(0.5) {
			s["type"] = "number"
		}
	}
	if depth > 0 {
		if g.chance(0.3) {
			props := map[string]any{}
			for range g.r.IntN(3) {
				props[diffPick(g, diffNames)] = g.extSchema(depth-1, defs)
			}
			s["properties"] = props
		}
		if g.chance(0.2) {
			s["items"] = g.extSchema(depth-1, defs)
		}
		if g.chance(0.1) {
			s["anyOf"] = []any{g.extSchema(depth-1, defs), g.extSchema(depth-1, defs)}
		}
		if g.chance(0.2) {
			names := map[string]any{}
			switch g.r.IntN(3) {
			case 0:
				names["maxLength"] = json.Number(strconv.Itoa(g.r.IntN(3)))
			case 1:
				names["minLength"] = json.Number(strconv.Itoa(1 + g.r.IntN(2)))
			default:
				names["enum"] = []any{diffPick(g, diffNames), diffPick(g, diffNames), json.Number("1")}
			}
			s["propertyNames"] = names
		}
		if g.chance(0.25) {
			s["additionalProperties"] = g.extSchema(depth-1, defs)
		}
	}
	return s
}

// extInline returns s with every $ref replaced by its definition (siblings
// merged), for aiming values at what the schema means.
func extInline(s any, defs map[string]any) any {
	switch x := s.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			def := extInline(defs[strings.TrimPrefix(ref, "#/$defs/")], defs).(map[string]any)
			out := map[string]any{}
			for k, v := range def {
				out[k] = v
			}
			for k, v := range x {
				if k != "$ref" {
					out[k] = v
				}
			}
			return out
		}
		out := map[string]any{}
		for k, v := range x {
			if k == "const" || k == "enum" {
				out[k] = v
				continue
			}
			out[k] = extInline(v, defs)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = extInline(v, defs)
		}
		return out
	}
	return s
}

// extObjectFor is diffGen.objectFor plus members aimed at the extended
// keywords: undeclared keys under additionalProperties and numbers at the
// exclusive bounds.
func (g *diffGen) extObjectFor(s map[string]any, depth int) map[string]any {
	out := g.objectFor(s, depth)
	props, _ := s["properties"].(map[string]any)
	for _, name := range diffSortedKeys(props) {
		p, _ := props[name].(map[string]any)
		for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
			if b, ok := p[k].(json.Number); ok && g.chance(0.3) {
				out[name] = g.number(diffClassOf(b)) // exactly at the bound
			}
		}
		if sub, ok := p["properties"]; ok && sub != nil && g.chance(0.5) {
			out[name] = g.extObjectFor(p, depth-1)
		}
	}
	if add, ok := s["additionalProperties"].(map[string]any); ok && g.chance(0.6) {
		name := diffPick(g, diffNames)
		if _, declared := props[name]; !declared {
			out[name] = g.valueFor(add, depth-1)
		}
	}
	return out
}

func diffCompileExtended(t *testing.T, label, schema string) (*purramcp.Contract, *jsonschema.Schema) {
	t.Helper()
	contract, err := purramcp.NewExtendedContract(purramcp.ContractOptions{
		SchemaID: "differential", SchemaVersion: "1", Schema: json.RawMessage(schema),
		Limits: purramcp.ContractLimits{ValidationSteps: 100000},
	})
	require.NoError(t, err, "%s: the extended profile rejected %s", label, schema)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://purra.invalid/differential-extended.json"
	require.NoError(t, c.AddResource(url, doc))
	reference, err := c.Compile(url)
	require.NoError(t, err, "%s: jsonschema rejected %s", label, schema)
	return contract, reference
}

// TestExtended_DifferentialJSONSchema2020: 600 generated schemas with the
// extended keywords, 12 values each; both validators must agree.
func TestExtended_DifferentialJSONSchema2020(t *testing.T) {
	const schemas, valuesPerSchema = 600, 12
	var accepted, rejected, withRefs, withSiblings int
	keywords := map[string]int{}
	for i := range schemas {
		g := newDiffGen(uint64(1_000_000 + i))
		defs := map[string]any{}
		var names []string
		if g.chance(0.5) {
			for k := range 1 + g.r.IntN(3) {
				name := []string{"d0", "a/b", "c~d"}[k]
				defs[name] = g.extSchema(1, names) // only earlier definitions: no cycles
				names = append(names, strings.NewReplacer("~", "~0", "/", "~1").Replace(name))
			}
		}
		root := g.extSchema(3, names)
		delete(root, "$ref")
		root["type"] = "object"
		for _, kw := range []string{"const", "enum", "anyOf", "oneOf"} {
			delete(root, kw)
		}
		if len(defs) > 0 {
			root["$defs"] = defs
		}
		if _, ok := root["properties"]; !ok {
			root["properties"] = map[string]any{"v": g.extSchema(2, names), "w": g.extSchema(1, names)}
		}
		schema := string(g.encode(nil, root))
		label := "extended schema #" + strconv.Itoa(i)
		if strings.Contains(schema, `"$ref"`) {
			withRefs++
		}
		if strings.Contains(schema, `"description"`) && strings.Contains(schema, `"$ref"`) {
			withSiblings++
		}
		contract, reference := diffCompileExtended(t, label, schema)
		rawDefs := map[string]any{}
		for k, v := range defs {
			rawDefs[strings.NewReplacer("~", "~0", "/", "~1").Replace(k)] = v
		}
		meaning := extInline(root, rawDefs).(map[string]any)
		for j := range valuesPerSchema {
			var v any = g.extObjectFor(meaning, 4)
			if j%6 == 5 {
				v = g.value(2)
			}
			pair := diffCheck(t, label+" value #"+strconv.Itoa(j), contract, reference, schema, string(g.encode(nil, v)))
			var ce *purramcp.ContractError
			if errors.As(pair.profile, &ce) {
				keywords[ce.Keyword]++
				rejected++
			} else {
				accepted++
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	total := accepted + rejected
	t.Logf("%d pairs: %d accepted, %d rejected by both; violations by keyword: %v", total, accepted, rejected, keywords)
	t.Logf("%d schemas with $ref, %d of them with descriptions beside", withRefs, withSiblings)
	assert.Greater(t, withRefs, schemas/5)
	assert.Greater(t, accepted, total/5)
	assert.Greater(t, rejected, total/5)
	for _, kw := range []string{"exclusiveMinimum", "exclusiveMaximum", "propertyNames", "additionalProperties", "type"} {
		assert.Positive(t, keywords[kw], "no generated value was rejected for %s", kw)
	}
}
