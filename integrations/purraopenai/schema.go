package purraopenai

import (
	"fmt"
	"regexp"

	"purra.dev/purramcp"
)

// functionName is what the OpenAI API accepts as a function name; every
// purramcp local name matches it.
var functionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkDefinitions rejects definitions the API would refuse or this package
// could not run: a name the API does not accept or a repeated one, a nil
// Run, or an input schema whose root is not {"type":"object",...}.
func checkDefinitions(defs []purramcp.ToolDefinition) error {
	seen := make(map[string]bool, len(defs))
	for i, d := range defs {
		switch {
		case !functionName.MatchString(d.Name):
			return fmt.Errorf("purraopenai: definition %d: name %q is not a valid function name", i, d.Name)
		case seen[d.Name]:
			return fmt.Errorf("purraopenai: tool %q is defined twice", d.Name)
		case d.Run == nil:
			return fmt.Errorf("purraopenai: tool %q has no Run", d.Name)
		case d.InputSchema["type"] != "object":
			return fmt.Errorf("purraopenai: tool %q: input schema root is not type \"object\"", d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

// cloneSchema deep-copies an input schema, so the SDK never shares the
// definition's maps.
func cloneSchema(schema map[string]any) map[string]any {
	return cloneValue(schema).(map[string]any)
}

// cloneValue deep-copies a decoded JSON value (maps and slices; scalars are
// immutable).
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	default:
		return v
	}
}
