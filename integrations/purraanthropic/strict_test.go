package purraanthropic_test

import (
	"encoding/json"
	"testing"

	"purra.dev/purramcp/integrations/purraanthropic"
)

// The eligibility rule itself is tested where it is written (the shared
// integration core); this checks the vendor's one difference, anyOf.
func TestStrictEligible(t *testing.T) {
	cases := []struct {
		schema string
		want   bool
	}{
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"],"additionalProperties":false}`, false},
	}
	for _, c := range cases {
		var schema map[string]any
		if err := json.Unmarshal([]byte(c.schema), &schema); err != nil {
			t.Fatal(err)
		}
		if got := purraanthropic.StrictEligible(schema); got != c.want {
			t.Errorf("StrictEligible(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
}
