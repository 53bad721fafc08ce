package purramcp_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// TestValidateWithMember_MatchesSnapshotPath is the differential test of
// Run's result validation: validating the decoded envelope in place (member
// names ordered as a snapshot orders them, containers kept when already in
// decoded form) reaches exactly the outcome of the path it replaced,
// ValidateValue of the envelope and then of its structured member, each on
// a fresh snapshot: the same error code, keyword and path, including which
// violation comes first and when the work budget runs out, and an equal
// result. Random schemas inside the profile, values decoded by
// encoding/json as go-sdk decodes results, some respelled as −0, under
// roomy and tight limits.
func TestValidateWithMember_MatchesSnapshotPath(t *testing.T) {
	const schemas, valuesPerSchema = 400, 10
	var kept, copied, failed int
	for i := range schemas {
		g := newDiffGen(uint64(5000 + i))
		root := g.schema(3)
		root["type"] = "object"
		if _, ok := root["properties"]; !ok && g.chance(0.6) {
			g.children(root, 3)
		}
		limits := purramcp.ContractLimits{ValidationSteps: 100000}
		switch i % 4 {
		case 1:
			limits.ValidationSteps = 1 + g.r.IntN(40) // the budget runs out part way
		case 2:
			limits.OutputNodes, limits.OutputDepth = 4+g.r.IntN(30), 2+g.r.IntN(4)
		}
		inner, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "inner", SchemaVersion: "1",
			Schema: json.RawMessage(g.encode(nil, root)), Limits: limits})
		require.NoError(t, err)
		outer, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "envelope", SchemaVersion: "1",
			Schema: map[string]any{"type": "object"}, Limits: limits})
		require.NoError(t, err)
		for j := range valuesPerSchema {
			label := "schema #" + strconv.Itoa(i) + " value #" + strconv.Itoa(j)
			text := g.encode(nil, g.objectFor(root, 4))
			if j%3 == 0 {
				text = g.encode(nil, g.valueFor(root, 4))
			}
			envelope := func() map[string]any {
				var structured any
				require.NoError(t, json.Unmarshal(text, &structured), label)
				if j%5 == 4 {
					if m, ok := structured.(map[string]any); ok {
						m["negativeZero"] = math.Copysign(0, -1)
					}
				}
				return map[string]any{"text": []any{"one", "two"}, "structured": structured}
			}
			want, wantErr := outer.ValidateValue(envelope())
			if wantErr == nil {
				_, wantErr = inner.ValidateValue(want["structured"])
				if wantErr != nil {
					want = nil
				}
			}
			value := envelope()
			got, err := purramcp.ValidateWithMember(outer, value, "structured", inner)
			require.Equal(t, wantErr, err, "%s: %s", label, text)
			require.Equal(t, want, got, "%s: %s", label, text)
			switch {
			case err != nil:
				failed++
			case reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(value).UnsafePointer():
				kept++
			default:
				copied++
			}
		}
	}
	t.Logf("%d kept in place, %d copied, %d failed", kept, copied, failed)
	require.Greater(t, kept, 500)
	require.Greater(t, copied, 50)
	require.Greater(t, failed, 500)
}
