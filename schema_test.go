package purramcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/profile"
)

// TestContractError_NilTargetMatchesNothing: errors.Is with a typed-nil
// *ContractError target (or receiver) reports false instead of panicking; a
// nil *ContractError has no code, so it matches nothing.
func TestContractError_NilTargetMatchesNothing(t *testing.T) {
	_, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1", Schema: map[string]any{"type": "string"}})
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	var nilTarget *purramcp.ContractError
	for name, matches := range map[string]func() bool{
		"errors.Is(err, nilTarget)": func() bool { return errors.Is(err, nilTarget) },
		"nilTarget.Is(err)":         func() bool { return nilTarget.Is(err) },
		"errors.Is(wrapped nilTarget, a ContractError)": func() bool {
			return errors.Is(fmt.Errorf("w: %w", nilTarget), &purramcp.ContractError{Code: purramcp.CodeSchemaInvalid})
		},
	} {
		var matched bool
		if r := recovered(func() { matched = matches() }); r != nil {
			t.Fatalf("%s panicked: %v", name, r)
		}
		if matched {
			t.Errorf("%s is true", name)
		}
	}
	if !errors.Is(err, &purramcp.ContractError{Code: purramcp.CodeSchemaInvalid}) {
		t.Errorf("a real target no longer matches")
	}
}

// The differential tests below are a second opinion on validation: random
// schemas inside purra.output-schema/v1 and random values are checked by the
// profile engine and by github.com/santhosh-tekuri/jsonschema/v6 (draft
// 2020-12), which must agree on accept or reject. What only the profile
// checks (work budget, lone surrogates, unsafe integers, resource limits)
// is kept out of the generated data instead.

// diffPair is one side-by-side verdict.
type diffPair struct {
	profile   error // nil or *purramcp.ContractError
	reference error // nil or the jsonschema validation error
}

// diffCompile builds both validators for schema text and fails the test if
// either rejects it: every generated schema is inside the profile and valid
// under the 2020-12 meta-schema.
func diffCompile(t *testing.T, label, schema string) (*purramcp.Contract, *jsonschema.Schema) {
	t.Helper()
	contract, err := purramcp.NewContract(purramcp.ContractOptions{
		SchemaID: "differential", SchemaVersion: "1", Schema: json.RawMessage(schema),
		Limits: purramcp.ContractLimits{ValidationSteps: 100000},
	})
	if err != nil {
		t.Fatalf("%s: NewContract rejected a schema inside the profile: %s: %v", label, schema, err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("%s: decode schema %s: %v", label, schema, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://purra.invalid/differential.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: AddResource %s: %v", label, schema, err)
	}
	reference, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: jsonschema rejected schema %s: %v", label, schema, err)
	}
	return contract, reference
}

// diffCheck runs one value through both validators and asserts they agree.
// It also checks that the profile reaches the same verdict through
// ValidateValue on the decoded value as through Parse on the text.
func diffCheck(t *testing.T, label string, contract *purramcp.Contract, reference *jsonschema.Schema, schema, value string) diffPair {
	t.Helper()
	var pair diffPair
	_, pair.profile = contract.Parse(value)
	var ce *purramcp.ContractError
	if pair.profile != nil {
		if !errors.As(pair.profile, &ce) {
			t.Fatalf("%s: Parse(%s): error %v, want one of type %T", label, value, pair.profile, &ce)
		}
		if ce.Code == purramcp.CodeValidationLimitExceeded {
			t.Fatalf("%s: the generator must stay inside the work budget; schema %s value %s: got %q, want anything else", label, schema, value, ce.Code)
		}
		if ce.Code != purramcp.CodeSchemaMismatch {
			t.Fatalf("%s: Parse(%s) code: got %q, want %q", label, value, ce.Code, purramcp.CodeSchemaMismatch)
		}
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(value))
	if err != nil {
		t.Fatalf("%s: decode value %s: %v", label, value, err)
	}
	_, viaValue := contract.ValidateValue(inst)
	if got, want := viaValue == nil, pair.profile == nil; got != want {
		t.Errorf("%s: Parse and ValidateValue disagree on %s: %v vs %v: got %v, want %v", label, value, pair.profile, viaValue, got, want)
	}
	pair.reference = reference.Validate(inst)
	if pair.reference != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(pair.reference, &ve) {
			t.Fatalf("%s: jsonschema failed on %s for another reason: error %v, want one of type %T", label, value, pair.reference, &ve)
		}
	}
	if got, want := pair.profile == nil, pair.reference == nil; got != want {
		t.Errorf("%s: disagreement\nschema:    %s\nvalue:     %s\npurramcp:  %+v\njsonschema: %v: got %v, want %v", label, schema, value, ce, pair.reference, got, want)
	}
	return pair
}

// TestProfileA7_DifferentialJSONSchema2020 compares accept/reject verdicts
// of the profile and of jsonschema/v6 over deterministic random schemas and
// values: 800 schemas, 12 values each.
func TestProfileA7_DifferentialJSONSchema2020(t *testing.T) {
	const schemas, valuesPerSchema = 800, 12
	var accepted, rejected int
	keywords := map[string]int{}
	for i := range schemas {
		g := newDiffGen(uint64(i))
		root := g.schema(3)
		root["type"] = "object"
		// A root const, enum or branch list masks every other violation,
		// so keep them rarer at the root than below it.
		for _, kw := range []string{"const", "enum", "anyOf", "oneOf"} {
			if g.chance(0.7) {
				delete(root, kw)
			}
		}
		if _, ok := root["properties"]; !ok && g.chance(0.6) {
			g.children(root, 3)
		}
		schema := string(g.encode(nil, root))
		label := "schema #" + strconv.Itoa(i)
		contract, reference := diffCompile(t, label, schema)
		for j := range valuesPerSchema {
			var v any
			switch p := g.r.Float64(); {
			case j == 0 || p < 0.8:
				v = g.objectFor(root, 4)
			case p < 0.95:
				v = g.valueFor(root, 4) // through const, enum or a branch
			default:
				v = g.value(2) // often not an object at all
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
			t.FailNow() // the first schema with a disagreement is the reproducer
		}
	}
	total := accepted + rejected
	t.Logf("%d pairs: %d accepted, %d rejected by both", total, accepted, rejected)
	if limit := total / 5; accepted <= limit {
		t.Errorf("too few accepted pairs for a meaningful comparison: got %v, want > %v", accepted, limit)
	}
	if limit := total / 5; rejected <= limit {
		t.Errorf("too few rejected pairs for a meaningful comparison: got %v, want > %v", rejected, limit)
	}
	t.Logf("violations by keyword: %v", keywords)
	for _, kw := range []string{"type", "enum", "const", "minLength", "maxLength", "minItems", "maxItems",
		"uniqueItems", "required", "additionalProperties", "minimum", "maximum", "anyOf", "oneOf"} {
		if keywords[kw] <= 0 {
			t.Errorf("no generated value was rejected for %s: got %v, want > 0", kw, keywords[kw])
		}
	}
}

// TestProfileA7_DifferentialSemanticPoints pins the places where JSON
// Schema 2020-12 and the profile must agree and a careless port would not:
// integer is an integral number, equality is numeric and structural, and
// string lengths count code points.
func TestProfileA7_DifferentialSemanticPoints(t *testing.T) {
	prop := func(v string) string {
		return `{"type":"object","properties":{"v":` + v + `},"required":["v"]}`
	}
	cases := []struct {
		name, schema, value string
		accept              bool
	}{
		{"integer_decimal", prop(`{"type":"integer"}`), `{"v":1.0}`, true},
		{"integer_exponent", prop(`{"type":"integer"}`), `{"v":10e-1}`, true},
		{"integer_negative_zero", prop(`{"type":"integer"}`), `{"v":-0.0}`, true},
		{"integer_fraction", prop(`{"type":"integer"}`), `{"v":1.5}`, false},
		{"integer_bool", prop(`{"type":"integer"}`), `{"v":true}`, false},
		{"unique_numeric", prop(`{"uniqueItems":true}`), `{"v":[1,1.0]}`, false},
		{"unique_nested_numeric", prop(`{"uniqueItems":true}`), `{"v":[[1,{"a":2}],[1e0,{"a":2.0}]]}`, false},
		{"unique_object_order", prop(`{"uniqueItems":true}`), `{"v":[{"a":1,"b":2},{"b":2,"a":1}]}`, false},
		{"unique_bool_number", prop(`{"uniqueItems":true}`), `{"v":[true,1,"1",null,0,false]}`, true},
		{"unique_zero_signs", prop(`{"uniqueItems":true}`), `{"v":[0,-0]}`, false},
		{"const_structural", prop(`{"const":{"a":[1,2],"b":null}}`), `{"v":{"b":null,"a":[1.0,2e0]}}`, true},
		{"const_array_order", prop(`{"const":[1,2]}`), `{"v":[2,1]}`, false},
		{"const_extra_key", prop(`{"const":{"a":1}}`), `{"v":{"a":1,"b":1}}`, false},
		{"const_null", prop(`{"const":null}`), `{"v":null}`, true},
		{"const_null_false", prop(`{"const":null}`), `{"v":false}`, false},
		{"enum_bool_number", prop(`{"enum":[1,"true"]}`), `{"v":true}`, false},
		{"enum_numeric", prop(`{"enum":["a",2.50]}`), `{"v":25e-1}`, true},
		{"minLength_astral", prop(`{"minLength":2}`), `{"v":"😀"}`, false},
		{"maxLength_astral", prop(`{"maxLength":1}`), `{"v":"\ud83d\ude00"}`, true},
		{"maxLength_combining", prop(`{"maxLength":1}`), `{"v":"e\u0301"}`, false},
		{"maxLength_multibyte", prop(`{"maxLength":3}`), `{"v":"日本語"}`, true},
		{"oneOf_ambiguous", prop(`{"oneOf":[{"type":"integer"},{"type":"number"}]}`), `{"v":1}`, false},
		{"oneOf_fraction", prop(`{"oneOf":[{"type":"integer"},{"type":"number"}]}`), `{"v":1.5}`, true},
		{"bounds_inclusive", prop(`{"minimum":-0.5,"maximum":2.5}`), `{"v":25e-1}`, true},
		{"required_proto", `{"type":"object","required":["__proto__","toString"]}`, `{"__proto__":1,"toString":2}`, true},
		{"closed_ref_name", `{"type":"object","properties":{"$ref":{"type":"string"}},"additionalProperties":false}`, `{"$ref":"#"}`, true},
		{"root_array", `{"type":"object"}`, `[]`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			contract, reference := diffCompile(t, tc.name, tc.schema)
			pair := diffCheck(t, tc.name, contract, reference, tc.schema, tc.value)
			if got := pair.profile == nil; got != tc.accept {
				t.Errorf("case %s: profile verdict: %v: got %v, want %v", tc.name, pair.profile, got, tc.accept)
			}
			if got := pair.reference == nil; got != tc.accept {
				t.Errorf("case %s: jsonschema verdict: %v: got %v, want %v", tc.name, pair.reference, got, tc.accept)
			}
		})
	}
}

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
	if err != nil {
		t.Fatalf("%s: the extended profile rejected %s: %v", label, schema, err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://purra.invalid/differential-extended.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("c.AddResource(url, doc): %v", err)
	}
	reference, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: jsonschema rejected %s: %v", label, schema, err)
	}
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
	if limit := schemas / 5; withRefs <= limit {
		t.Errorf("withRefs = %v, want > %v", withRefs, limit)
	}
	if limit := total / 5; accepted <= limit {
		t.Errorf("accepted = %v, want > %v", accepted, limit)
	}
	if limit := total / 5; rejected <= limit {
		t.Errorf("rejected = %v, want > %v", rejected, limit)
	}
	for _, kw := range []string{"exclusiveMinimum", "exclusiveMaximum", "propertyNames", "additionalProperties", "type"} {
		if keywords[kw] <= 0 {
			t.Errorf("no generated value was rejected for %s: got %v, want > 0", kw, keywords[kw])
		}
	}
}

// TestExtended_DifferentialRefSiblings: 400 generated schemas whose
// property v is a $ref with asserting sibling keywords (2020-12: both
// apply). Each is either refused at bind time (the intersection cannot be
// written as one node: fail closed) or agrees with jsonschema/v6 (draft
// 2020-12) on 12 values aimed at the definition, the siblings, or neither.
func TestExtended_DifferentialRefSiblings(t *testing.T) {
	const schemas, valuesPerSchema = 400, 12
	var bound, closed, accepted, rejected int
	for i := range schemas {
		g := newDiffGen(uint64(2_000_000 + i))
		def := g.extSchema(1, nil)
		siblings := g.extSchema(1, nil)
		delete(siblings, "$ref")
		ref := map[string]any{"$ref": "#/$defs/d"}
		for k, v := range siblings {
			ref[k] = v
		}
		root := map[string]any{"type": "object", "$defs": map[string]any{"d": def}, "properties": map[string]any{"v": ref}}
		schema := string(g.encode(nil, root))
		label := "ref-siblings schema #" + strconv.Itoa(i)
		contract, err := purramcp.NewExtendedContract(purramcp.ContractOptions{
			SchemaID: "differential", SchemaVersion: "1", Schema: json.RawMessage(schema),
			Limits: purramcp.ContractLimits{ValidationSteps: 100000},
		})
		if err != nil {
			var ce *purramcp.ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("%v: error %v, want one of type %T", label, err, &ce)
			}
			closed++
			continue
		}
		bound++
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "https://purra.invalid/ref-siblings-" + strconv.Itoa(i) + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatalf("c.AddResource(url, doc): %v", err)
		}
		reference, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: jsonschema rejected %s: %v", label, schema, err)
		}
		for j := range valuesPerSchema {
			var v any
			switch j % 3 {
			case 0:
				v = g.valueFor(def, 3)
			case 1:
				v = g.valueFor(siblings, 3)
			default:
				v = g.value(2)
			}
			pair := diffCheck(t, label+" value #"+strconv.Itoa(j), contract, reference, schema,
				string(g.encode(nil, map[string]any{"v": v})))
			if pair.profile == nil {
				accepted++
			} else {
				rejected++
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d schemas bound, %d refused (fail closed); %d values accepted, %d rejected by both", bound, closed, accepted, rejected)
	if limit := schemas / 4; bound <= limit {
		t.Errorf("most intersections are written: got %v, want > %v", bound, limit)
	}
	if closed <= 0 {
		t.Errorf("some are refused: got %v, want > 0", closed)
	}
	if accepted <= bound {
		t.Errorf("accepted = %v, want > %v", accepted, bound)
	}
	if rejected <= bound {
		t.Errorf("rejected = %v, want > %v", rejected, bound)
	}
}

// contractLimits maps the fixture's camelCase limit names; an unknown name
// fails the test rather than being ignored.
func contractLimits(t testing.TB, m map[string]int) purramcp.ContractLimits {
	var l purramcp.ContractLimits
	fields := map[string]*int{
		"schemaBytes": &l.SchemaBytes, "outputBytes": &l.OutputBytes, "schemaDepth": &l.SchemaDepth,
		"outputDepth": &l.OutputDepth, "schemaNodes": &l.SchemaNodes, "outputNodes": &l.OutputNodes,
		"validationSteps": &l.ValidationSteps,
	}
	for k, v := range m {
		p, ok := fields[k]
		if !ok {
			t.Fatalf("unknown limit %q", k)
		}
		*p = v
	}
	return l
}

// derivedDetails are the keyword and path the profile reports for every
// failing case.
var derivedDetails = map[string][2]string{
	"fenced": {"document", "$"}, "prefix": {"document", "$"}, "suffix": {"document", "$"},
	"two_documents": {"document", "$"}, "duplicate": {"document", "$"},
	"escaped_duplicate": {"document", "$"}, "nested_duplicate": {"document", "$"},
	"nan": {"document", "$"}, "infinity": {"document", "$"}, "overflow": {"document", "$"},
	"unsafe_integer": {"document", "$"}, "unsafe_integral_float": {"document", "$"},
	"negative_unsafe": {"document", "$"}, "lone_surrogate": {"document", "$"},
	"trailing_comma": {"document", "$"}, "leading_zero": {"document", "$"}, "bom": {"document", "$"},
	"root_array": {"type", "$"}, "root_null": {"type", "$"}, "root_string": {"type", "$"},
	"bool_not_integer": {"type", "$.v"}, "fraction_not_integer": {"type", "$.v"},
	"no_coercion": {"type", "$.v"}, "unicode_short": {"minLength", "$.v"},
	"bool_enum": {"enum", "$.v"}, "unique_object": {"uniqueItems", "$.v"},
	"same_numeric_unique": {"uniqueItems", "$.v"}, "oneof_ambiguous": {"oneOf", "$.v"},
	"range": {"maximum", "$.v"}, "no_array_coercion": {"type", "$.v"},
	"extra": {"additionalProperties", "$"}, "missing": {"required", "$.v"},
	"inherited_required": {"required", "$.toString"}, "inherited_extra": {"additionalProperties", "$"},
	"root_missing": {"schema", "$"}, "unknown": {"schema", "$"}, "required_null": {"schema", "$"},
	"type_invalid": {"schema", "$"}, "required_object": {"schema", "$"}, "items_bool": {"schema", "$"},
	"null_anyof": {"schema", "$"}, "null_enum": {"schema", "$"}, "range_reverse": {"schema", "$"},
	"unknown_mode": {"mode", "$"}, "work_limit": {"validation_steps", "$"},
	"node_limit": {"document", "$"}, "depth_limit": {"document", "$"}, "byte_limit": {"document", "$"},
}

func TestProfileC1_StructuredOutputVectors(t *testing.T) {
	vectors := loadOutputVectors(t)
	if vectors.Profile != purramcp.OutputSchemaProfile {
		t.Errorf("vectors.Profile = %q, want %q", vectors.Profile, purramcp.OutputSchemaProfile)
	}
	digests := 0
	for _, tc := range vectors.Cases {
		if tc.SchemaDigest != "" {
			digests++
		}
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			want := ""
			if tc.Code != nil {
				want = *tc.Code
				if _, ok := derivedDetails[tc.Name]; !ok {
					t.Fatalf("case %s has no derived details: no key %q", tc.Name, tc.Name)
				}
			}
			opts := purramcp.ContractOptions{SchemaID: "test", SchemaVersion: "1",
				Schema: tc.Schema, Mode: tc.Mode, Limits: contractLimits(t, tc.Limits)}
			c, err := purramcp.NewContract(opts)
			t.Run("Digests", func(t *testing.T) {
				if tc.SchemaDigest == "" {
					return
				}
				if err != nil {
					t.Fatalf("case %s: %v", tc.Name, err)
				}
				if got := c.SchemaDigest(); got != tc.SchemaDigest {
					t.Errorf("case %s schemaDigest: got %q, want %q", tc.Name, got, tc.SchemaDigest)
				}
				if got := c.ContractDigest(); got != tc.ContractDigest {
					t.Errorf("case %s contractDigest: got %q, want %q", tc.Name, got, tc.ContractDigest)
				}
			})
			t.Run("Parse", func(t *testing.T) {
				var got map[string]any
				if err == nil {
					got, err = c.Parse(tc.Text)
				}
				assertOutcome(t, tc, want, got, err)
			})
			t.Run("ValidateValue", func(t *testing.T) {
				if c == nil || (tc.Code != nil && derivedDetails[tc.Name][0] == "document") {
					return // needs a contract and a document the stdlib decodes faithfully
				}
				dec := json.NewDecoder(strings.NewReader(tc.Text))
				dec.UseNumber()
				var decoded any
				if err := dec.Decode(&decoded); err != nil {
					t.Fatalf("case %s: %v", tc.Name, err)
				}
				got, err := c.ValidateValue(decoded)
				assertOutcome(t, tc, want, got, err)
			})
		})
	}
	if digests != 48 {
		t.Errorf("schema/contract digest pairs: got %v, want %v", digests, 48)
	}
}

// assertOutcome checks a Parse or ValidateValue outcome against a case:
// the exact code, keyword and path, the fixed message, a nil map on error,
// and on success a value equal to a standard decode of the text.
func assertOutcome(t *testing.T, tc outputVector, want string, got map[string]any, err error) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("case %s: %v", tc.Name, err)
		}
		var std any
		if err := json.Unmarshal([]byte(tc.Text), &std); err != nil {
			t.Fatalf("case %s: %v", tc.Name, err)
		}
		if got := any(got); !reflect.DeepEqual(got, std) {
			t.Errorf("case %s value: got %v, want %v", tc.Name, got, std)
		}
		return
	}
	if err == nil {
		t.Fatalf("case %s: got no error", tc.Name)
	}
	if got != nil {
		t.Errorf("case %s returns no value on error: got %v, want nil", tc.Name, got)
	}
	var ce *purramcp.ContractError
	if !errors.As(err, &ce) {
		t.Fatalf("case %s: error %v, want one of type %T", tc.Name, err, &ce)
	}
	if ce.Code != want {
		t.Errorf("case %s code: got %q, want %q", tc.Name, ce.Code, want)
	}
	if got := [2]string{ce.Keyword, ce.Path}; !reflect.DeepEqual(got, derivedDetails[tc.Name]) {
		t.Errorf("case %s keyword and path: got %v, want %v", tc.Name, got, derivedDetails[tc.Name])
	}
	if got := err.Error(); got != "Structured output contract validation failed" {
		t.Errorf("case %s message: got %q, want %q", tc.Name, got, "Structured output contract validation failed")
	}
	if strings.Contains(ce.Path+ce.Keyword, "secret-candidate") {
		t.Errorf("case %s echoes candidate text: %q contains %q", tc.Name, ce.Path+ce.Keyword, "secret-candidate")
	}
}

func TestProfileA4_KeywordsMatchVectors(t *testing.T) {
	if want := loadOutputVectors(t).Keywords; !reflect.DeepEqual(profile.Keywords, want) {
		t.Errorf("profile.Keywords = %v, want %v", profile.Keywords, want)
	}
}

// fuzzSchemaValueSeeds pairs every structured_output.json schema with its
// text, and the mcp_tools.json input and output schemas with every case's
// arguments and structured content.
func fuzzSchemaValueSeeds(t testing.TB) [][2]string {
	t.Helper()
	var seeds [][2]string
	for _, tc := range loadOutputVectors(t).Cases {
		seeds = append(seeds, [2]string{string(tc.Schema), tc.Text})
	}
	f := loadMCPFixture(t)
	var tool struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(f.Tool, &tool); err != nil {
		t.Fatalf("mcp_tools.json tool: %v", err)
	}
	for _, tc := range f.Cases {
		var result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		_ = json.Unmarshal(tc.Result, &result) // malformed results stay unseeded
		seeds = append(seeds, [2]string{string(tool.InputSchema), string(tc.Arguments)},
			[2]string{string(tool.OutputSchema), string(result.StructuredContent)})
	}
	for _, sc := range f.SchemaCases {
		seeds = append(seeds, [2]string{string(sc.Tool), "{}"})
	}
	return seeds
}

// fuzzKeywords are the keywords a schema mismatch may name.
var fuzzKeywords = []string{"additionalProperties", "anyOf", "const", "enum", "maxItems", "maxLength",
	"maximum", "minItems", "minLength", "minimum", "oneOf", "required", "type", "uniqueItems"}

// fuzzCheckParseError asserts the closed error surface of Parse (A9).
func fuzzCheckParseError(t *testing.T, err error, text string) *purramcp.ContractError {
	var ce *purramcp.ContractError
	if !errors.As(err, &ce) {
		t.Fatalf("Parse(%q): error %T is not a *ContractError", text, err)
	}
	if got := err.Error(); got != "Structured output contract validation failed" {
		t.Fatalf("Parse(%q) error text: got %q, want %q", text, got, "Structured output contract validation failed")
	}
	switch ce.Code {
	case purramcp.CodeInvalidJSON:
		if got, want := [2]string{ce.Keyword, ce.Path}, [2]string{"document", "$"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q): got %v, want %v", text, got, want)
		}
	case purramcp.CodeValidationLimitExceeded:
		if got, want := [2]string{ce.Keyword, ce.Path}, [2]string{"validation_steps", "$"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q): got %v, want %v", text, got, want)
		}
	case purramcp.CodeSchemaMismatch:
		if !slices.Contains(fuzzKeywords, ce.Keyword) {
			t.Fatalf("Parse(%q) keyword: %v does not contain %q", text, fuzzKeywords, ce.Keyword)
		}
		if !strings.HasPrefix(ce.Path, "$") {
			t.Fatalf("Parse(%q) path %q", text, ce.Path)
		}
		if got := len(ce.Path); got > 512 {
			t.Fatalf("Parse(%q) path length: got %v, want <= %v", text, got, 512)
		}
		if ce.Keyword == "additionalProperties" {
			if ce.Path != "$" {
				t.Fatalf("Parse(%q): additionalProperties never echoes a key: got %q, want %q", text, ce.Path, "$")
			}
		}
	default:
		t.Fatalf("unexpected code: Parse(%q) code %q", text, ce.Code)
	}
	return ce
}

// FuzzValidate builds a contract from fuzzed schema text and parses fuzzed
// value text with it. A rejected schema is schema_invalid and
// no contract; a built contract's schema digest is the identity digest of
// the schema text. Parse is deterministic; on error it returns a nil map
// and a closed-surface error that ValidateValue of the same raw text
// repeats (up to the raw length check only Parse makes); on success ValidateValue of the result and a re-parse of its
// JSON encoding return an equal map, which also equals the encoding/json
// decoding of the text.
func FuzzValidate(f *testing.F) {
	seeds := fuzzSchemaValueSeeds(f)
	if got := len(seeds); got != 62+2*14+6 {
		f.Fatalf("seed count: len = %d, want %d", got, 62+2*14+6)
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schemaText, valueText string) {
		c, err := purramcp.NewContract(purramcp.ContractOptions{
			SchemaID: "fuzz", SchemaVersion: "1", Schema: json.RawMessage(schemaText)})
		if err != nil {
			if c != nil {
				t.Fatalf("NewContract(%q) failed but returned a contract: got %v, want nil", schemaText, c)
			}
			var ce *purramcp.ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("NewContract(%q): error %T", schemaText, err)
			}
			if got, want := *ce, (purramcp.ContractError{Code: purramcp.CodeSchemaInvalid, Path: "$", Keyword: "schema"}); !reflect.DeepEqual(got, want) {
				t.Fatalf("NewContract(%q): got %v, want %v", schemaText, got, want)
			}
			return
		}
		digest, err := purramcp.IdentityDigest(json.RawMessage(schemaText))
		if err != nil {
			t.Fatalf("IdentityDigest of an accepted schema %q: %v", schemaText, err)
		}
		if got := c.SchemaDigest(); got != digest {
			t.Fatalf("schemaDigest of %q: got %q, want %q", schemaText, got, digest)
		}

		got, err := c.Parse(valueText)
		again, errAgain := c.Parse(valueText)
		if err != nil {
			if got != nil {
				t.Fatalf("Parse(%q) failed but returned a map: got %v, want nil", valueText, got)
			}
			ce := fuzzCheckParseError(t, err, valueText)
			if !reflect.DeepEqual(errAgain, err) {
				t.Fatalf("Parse(%q) is not deterministic: got %v, want %v", valueText, errAgain, err)
			}
			if len(valueText) > 1<<20 {
				return // only Parse checks the raw text length
			}
			_, viaValue := c.ValidateValue(json.RawMessage(valueText))
			want := *ce
			if want.Code == purramcp.CodeInvalidJSON {
				want.Keyword = "value"
			}
			if want := &want; !reflect.DeepEqual(viaValue, want) {
				t.Fatalf("ValidateValue(json.RawMessage(%q)) vs Parse: got %v, want %v", valueText, viaValue, want)
			}
			return
		}
		if errAgain != nil {
			t.Fatalf("Parse(%q) is not deterministic: %v", valueText, errAgain)
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("Parse(%q) is not deterministic: got %v, want %v", valueText, again, got)
		}
		fuzzCheckAccepted(t, c, valueText, got)
	})
}

// fuzzCheckAccepted asserts the properties of an accepted value.
func fuzzCheckAccepted(t *testing.T, c *purramcp.Contract, text string, got map[string]any) {
	if got == nil {
		t.Fatalf("Parse(%q) returned a nil map: got nil", text)
	}
	revalidated, err := c.ValidateValue(got)
	if err != nil {
		t.Fatalf("ValidateValue of the result of Parse(%q): %v", text, err)
	}
	if !reflect.DeepEqual(revalidated, got) {
		t.Fatalf("ValidateValue of the result of Parse(%q): got %v, want %v", text, revalidated, got)
	}

	var std any
	if json.Unmarshal([]byte(text), &std) == nil {
		if got := any(got); !reflect.DeepEqual(got, std) {
			t.Fatalf("Parse(%q) and encoding/json values: got %v, want %v", text, got, std)
		}
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(got); err != nil {
		t.Fatalf("encode the result of Parse(%q): %v", text, err)
	}
	reparsed, err := c.Parse(buf.String())
	if err != nil {
		t.Fatalf("Parse of the re-encoding %q of %q: %v", buf.String(), text, err)
	}
	if !reflect.DeepEqual(reparsed, got) {
		t.Fatalf("re-encoding %q of %q: got %v, want %v", buf.String(), text, reparsed, got)
	}
}

// TestIdentityA10_ContractExamples checks the contract identity digests
// of derived example schemas.
func TestIdentityA10_ContractExamples(t *testing.T) {
	cases := []struct {
		id, mode, schema, schemaDigest, contractDigest string
	}{
		{"test", "", `{"type":"object"}`,
			"35d2b71e1c667ec7dde27eb339b795691b3d5f1582109fa87a51ce344dff98c0",
			"2ad666543996b1de6330a21191357c38604d23dd32992b2dd5cd9723d525af5f"},
		{"test", purramcp.ModeNativeRequired, `{"type":"object"}`,
			"35d2b71e1c667ec7dde27eb339b795691b3d5f1582109fa87a51ce344dff98c0",
			"95fd7a28da0295d1979cb9903d0b0353c66c9bff484f2ceb9c77246d5cbd442b"},
		{"label", purramcp.ModeLocal, `{"type":"object","properties":{"label":{"type":"string"}},"required":["label"],"additionalProperties":false}`,
			"a7cd58cae99f2e2353794927f9e4ef7b32770de0a2711c534ecb1e87486fe43c",
			"1069387100395a0407589c5c408b0cf54a90fa26383cb46a5682019f6b33582e"},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: tc.id, SchemaVersion: "1",
				Schema: json.RawMessage(tc.schema), Mode: tc.mode})
			if err != nil {
				t.Fatalf("%v: %v", tc.schema, err)
			}
			if got := c.SchemaDigest(); got != tc.schemaDigest {
				t.Errorf("%v: got %q, want %q", tc.schema, got, tc.schemaDigest)
			}
			if got := c.ContractDigest(); got != tc.contractDigest {
				t.Errorf("%v: got %q, want %q", tc.schema, got, tc.contractDigest)
			}
			d, err := purramcp.IdentityDigest(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if d != tc.schemaDigest {
				t.Errorf("IdentityDigest equals schemaDigest: got %q, want %q", d, tc.schemaDigest)
			}
		})
	}
}

// TestProfileA10_DigestsConcurrent: digests are computed once, on first use,
// and are the same from every goroutine (run under -race).
func TestProfileA10_DigestsConcurrent(t *testing.T) {
	c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "test", SchemaVersion: "1",
		Schema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan [2]string, 16)
	for range 16 {
		go func() { got <- [2]string{c.SchemaDigest(), c.ContractDigest()} }()
	}
	for range 16 {
		if got, want := <-got, [2]string{"35d2b71e1c667ec7dde27eb339b795691b3d5f1582109fa87a51ce344dff98c0",
			"2ad666543996b1de6330a21191357c38604d23dd32992b2dd5cd9723d525af5f"}; !reflect.DeepEqual(got, want) {
			t.Errorf("<-got = %v, want %v", got, want)
		}
	}
}

// TestProfileA9_NewContractErrorType: NewContract fails with a plain
// *ContractError, never a wrapper that could carry more.
func TestProfileA9_NewContractErrorType(t *testing.T) {
	for _, schema := range []any{map[string]any{"type": "object", "pattern": "x"}, map[string]any{}, math.NaN()} {
		c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1", Schema: schema})
		if c != nil {
			t.Errorf("c = %v, want nil", c)
		}
		ce, ok := err.(*purramcp.ContractError)
		if !ok {
			t.Fatalf("%T for %v", err, schema)
		}
		if got, want := *ce, (purramcp.ContractError{Code: "structured_output_schema_invalid", Path: "$", Keyword: "schema"}); !reflect.DeepEqual(got, want) {
			t.Errorf("*ce = %v, want %v", got, want)
		}
	}
	_, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1",
		Schema: map[string]any{"type": "object"}, Mode: "auto"})
	_, ok := err.(*purramcp.ContractError)
	if !ok {
		t.Errorf("%T", err)
	}
}

// TestContractLimits_ZeroDefaultRange: the contract limits follow the same
// rule as Limits through one resolver: zero takes the default, 1
// through the default is kept, 0 − 1 and default + 1 fail CodeSchemaInvalid.
func TestContractLimits_ZeroDefaultRange(t *testing.T) {
	newContract := func(l purramcp.ContractLimits) (*purramcp.Contract, error) {
		return purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1",
			Schema: map[string]any{"type": "object"}, Limits: l})
	}
	defaults := purramcp.ContractLimits{SchemaBytes: 65536, OutputBytes: 1048576, SchemaDepth: 32, OutputDepth: 64,
		SchemaNodes: 4096, OutputNodes: 65536, ValidationSteps: 100000}
	c, err := newContract(purramcp.ContractLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Limits(); !reflect.DeepEqual(got, defaults) {
		t.Errorf("zero means default: got %v, want %v", got, defaults)
	}
	fields := map[string]func(*purramcp.ContractLimits) *int{
		"SchemaBytes":     func(l *purramcp.ContractLimits) *int { return &l.SchemaBytes },
		"OutputBytes":     func(l *purramcp.ContractLimits) *int { return &l.OutputBytes },
		"SchemaDepth":     func(l *purramcp.ContractLimits) *int { return &l.SchemaDepth },
		"OutputDepth":     func(l *purramcp.ContractLimits) *int { return &l.OutputDepth },
		"SchemaNodes":     func(l *purramcp.ContractLimits) *int { return &l.SchemaNodes },
		"OutputNodes":     func(l *purramcp.ContractLimits) *int { return &l.OutputNodes },
		"ValidationSteps": func(l *purramcp.ContractLimits) *int { return &l.ValidationSteps },
	}
	for name, field := range fields {
		t.Run(name, func(t *testing.T) {
			def := *field(&defaults)
			for _, v := range []int{1, def} {
				var l purramcp.ContractLimits
				*field(&l) = v
				want := defaults
				*field(&want) = v
				if v == 1 && (name == "SchemaBytes" || name == "SchemaNodes") {
					continue // {"type":"object"} itself is 3 nodes and 22 bytes
				}
				c, err := newContract(l)
				if err != nil {
					t.Fatalf("%s = %d: %v", name, v, err)
				}
				if got := c.Limits(); !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %d: got %v, want %v", name, v, got, want)
				}
			}
			for _, v := range []int{-1, def + 1} {
				var l purramcp.ContractLimits
				*field(&l) = v
				_, err := newContract(l)
				var ce *purramcp.ContractError
				if !errors.As(err, &ce) {
					t.Fatalf("%s = %d: error %v, want one of type %T", name, v, err, &ce)
				}
				if ce.Code != purramcp.CodeSchemaInvalid {
					t.Errorf("%s = %d: got %q, want %q", name, v, ce.Code, purramcp.CodeSchemaInvalid)
				}
			}
		})
	}
}

// TestNewContract_IdentityStrings: a schema id or version must be at most
// 128 bytes of valid UTF-8 that JavaScript's trim() does not leave empty;
// anything else fails CodeSchemaInvalid at "$" with keyword "schema" and the
// fixed text, before the schema is looked at. Accepted strings are kept
// verbatim, surrounding whitespace included.
func TestNewContract_IdentityStrings(t *testing.T) {
	schema := map[string]any{"type": "object"}
	for _, bad := range []string{"", " ", "\t\n", "\u3000", "\ufeff", "\u2028", "\xff", strings.Repeat("a", 129)} {
		for _, field := range []string{"SchemaID", "SchemaVersion"} {
			opts := purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1", Schema: schema}
			if field == "SchemaID" {
				opts.SchemaID = bad
			} else {
				opts.SchemaVersion = bad
			}
			c, err := purramcp.NewContract(opts)
			if c != nil {
				t.Errorf("%s %q: got a contract, want none", field, bad)
			}
			var ce *purramcp.ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("%s %q: error %v, want a *ContractError", field, bad, err)
			}
			want := purramcp.ContractError{Code: purramcp.CodeSchemaInvalid, Path: "$", Keyword: "schema"}
			if *ce != want {
				t.Errorf("%s %q: got %+v, want %+v", field, bad, *ce, want)
			}
			if got := err.Error(); got != "Structured output contract validation failed" {
				t.Errorf("%s %q: error text %q", field, bad, got)
			}
		}
	}
	for _, good := range []string{"a", " a ", "é", strings.Repeat("a", 128)} {
		c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: good, SchemaVersion: good, Schema: schema})
		if err != nil {
			t.Fatalf("%q: %v", good, err)
		}
		if c.SchemaID() != good || c.SchemaVersion() != good {
			t.Errorf("%q: SchemaID() = %q, SchemaVersion() = %q, want them verbatim", good, c.SchemaID(), c.SchemaVersion())
		}
		if c.Mode() != purramcp.ModeLocal {
			t.Errorf("%q: Mode() = %q, want %q (the default)", good, c.Mode(), purramcp.ModeLocal)
		}
	}
}
