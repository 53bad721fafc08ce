package purramcp_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

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
			require.ErrorAs(t, err, &ce, label)
			closed++
			continue
		}
		bound++
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
		require.NoError(t, err)
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "https://purra.invalid/ref-siblings-" + strconv.Itoa(i) + ".json"
		require.NoError(t, c.AddResource(url, doc))
		reference, err := c.Compile(url)
		require.NoError(t, err, "%s: jsonschema rejected %s", label, schema)
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
	assert.Greater(t, bound, schemas/4, "most intersections are written")
	assert.Positive(t, closed, "some are refused")
	assert.Greater(t, accepted, bound)
	assert.Greater(t, rejected, bound)
}
