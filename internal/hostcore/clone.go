package hostcore

// CloneValue deep-copies a decoded JSON value (maps and slices; scalars are
// immutable), so that what an integration hands a vendor SDK never shares a
// map with a registration.
func CloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = CloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = CloneValue(e)
		}
		return out
	default:
		return v
	}
}

// CloneSchema deep-copies a schema object; nil stays nil.
func CloneSchema(schema map[string]any) map[string]any {
	if schema == nil {
		return nil
	}
	return CloneValue(schema).(map[string]any)
}
