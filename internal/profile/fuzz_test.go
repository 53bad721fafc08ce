package profile

import (
	"errors"
	"testing"

	"purra.dev/purramcp/internal/strictjson"
)

// FuzzExtended: any schema text and value under Options.ExtendedKeywords
// either fails to compile with a located SchemaError or compiles to a
// schema whose inlined form fits the schema limits and whose validation is
// deterministic and never exceeds its budget.
func FuzzExtended(f *testing.F) {
	f.Add(`{"type":"object","$defs":{"a":{"type":"string","pattern":"^a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, `{"x":"ab"}`, 50)
	f.Add(`{"type":"object","propertyNames":{"maxLength":2},"additionalProperties":{"exclusiveMinimum":0}}`, `{"ab":1,"c":0}`, 10)
	f.Add(`{"type":"object","$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{}},"items":{"$ref":"#/$defs/a","description":"d"}}`, `[1,2]`, 5)
	lim := strictjson.Limits{Depth: 32, Nodes: 4096, Bytes: 65536}
	f.Fuzz(func(t *testing.T, schemaText, valueText string, steps int) {
		root, err := strictjson.Parse(schemaText, lim)
		if err != nil {
			return
		}
		opts := Options{ExtendedKeywords: true, Annotations: steps%2 == 0, Draft07: steps%3 == 0,
			MaxNodes: lim.Nodes, MaxDepth: lim.Depth, MaxBytes: lim.Bytes}
		s, err := CompileWith(root, opts)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) || se.Path == "" || se.Keyword == "" {
				t.Fatalf("unlocated compile error %v", err)
			}
			return
		}
		if in := s.Inlined(); in != nil {
			if _, err := strictjson.Snapshot(strictjson.ToGo(in), lim); err != nil {
				t.Fatalf("inlined schema outside the schema limits: %v", err)
			}
		}
		v, err := strictjson.Parse(valueText, strictjson.Limits{Depth: 64, Nodes: 65536, Bytes: 1 << 20})
		if err != nil {
			return
		}
		budget := 1 + (steps%5000+5000)%5000
		vi1, err1 := s.Validate(v, budget)
		vi2, err2 := s.Validate(v, budget)
		if (err1 == nil) != (err2 == nil) || (vi1 == nil) != (vi2 == nil) {
			t.Fatal("non-deterministic validation")
		}
		if err1 != nil && !errors.Is(err1, ErrBudget) {
			t.Fatalf("unexpected validation error %v", err1)
		}
	})
}
