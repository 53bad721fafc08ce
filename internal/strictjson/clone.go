package strictjson

// Clone deep-copies a decoded Go JSON value: every map[string]any and []any
// is copied, level by level; scalars are immutable and shared. The copy
// shares no map or slice with v, so either may be changed without the
// other seeing it.
func Clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneObject(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Clone(e)
		}
		return out
	default:
		return v
	}
}

// CloneObject is Clone of a JSON object; nil stays nil.
func CloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = Clone(v)
	}
	return out
}
