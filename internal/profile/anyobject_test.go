package profile

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/testvalues"
)

// TestValidate_AnyObjectFastPath: a schema that asserts only type "object"
// (the envelope contract) takes Validate's fast path, and every other
// schema does not; the fast path answers exactly what the walk answers, on
// decoded and snapshot values of every kind and on budgets of 0 to 2 steps.
func TestValidate_AnyObjectFastPath(t *testing.T) {
	for _, tc := range []struct {
		schema string
		fast   bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","title":"T","description":"d"}`, true},
		{`{"type":"object","additionalProperties":true}`, true},
		{`{"type":"object","required":["a"]}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{`{"type":"object","additionalProperties":false}`, false},
		{`{"type":"object","enum":[{}]}`, false},
		{`{"type":"object","const":{}}`, false},
		{`{"type":"object","anyOf":[{"type":"object"}]}`, false},
		{`{"type":"object","oneOf":[{"type":"object"}]}`, false},
	} {
		s := mustCompile(t, tc.schema)
		require.Equal(t, tc.fast, s.anyObject, tc.schema)
		walked := *s
		walked.anyObject = false
		r := rand.New(rand.NewPCG(7, uint64(len(tc.schema))))
		checked := 0
		for range 600 {
			v := testvalues.Plain(r, 3)
			values := []any{v}
			if snap, err := strictjson.Snapshot(v, roomy); err == nil {
				values = append(values, snap)
			}
			for _, v := range values {
				for steps := range 3 {
					gotV, gotErr := s.Validate(v, steps)
					wantV, wantErr := walked.Validate(v, steps)
					require.Equal(t, wantErr, gotErr, "%s, %#v, %d steps", tc.schema, v, steps)
					require.Equal(t, wantV, gotV, "%s, %#v, %d steps", tc.schema, v, steps)
					checked++
				}
			}
		}
		require.Greater(t, checked, 3000, tc.schema)
	}
}
