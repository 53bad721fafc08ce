package purraanthropic

import (
	"fmt"

	"purra.dev/purramcp"
)

// checkDefinitions rejects definitions this package cannot hand to the SDK
// unchanged: an empty or repeated name, a nil Run, or an input schema whose
// root is not {"type":"object",...} (the SDK always sends "type":"object").
func checkDefinitions(defs []purramcp.ToolDefinition) error {
	seen := make(map[string]bool, len(defs))
	for i, d := range defs {
		switch {
		case d.Name == "":
			return fmt.Errorf("purraanthropic: definition %d has no name", i)
		case seen[d.Name]:
			return fmt.Errorf("purraanthropic: tool %q is defined twice", d.Name)
		case d.Run == nil:
			return fmt.Errorf("purraanthropic: tool %q has no Run", d.Name)
		case d.InputSchema["type"] != "object":
			return fmt.Errorf("purraanthropic: tool %q: input schema root is not type \"object\"", d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

// schemaExtras returns a deep copy of every member of schema but "type",
// which the SDK's input-schema params always write as "object". Sent as
// the params' ExtraFields, it reproduces schema member for member.
func schemaExtras(schema map[string]any) map[string]any {
	extras := make(map[string]any, len(schema))
	for k, v := range schema {
		if k != "type" {
			extras[k] = cloneValue(v)
		}
	}
	return extras
}

// cloneValue deep-copies a decoded JSON value (maps and slices; scalars are
// immutable), so the SDK never shares the definition's maps.
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
