package purraanthropic

import "purra.dev/purramcp/internal/strictjson"

// schemaExtras returns a deep copy of every member of schema but "type",
// which the SDK's input-schema params always write as "object". Sent as
// the params' ExtraFields, it reproduces schema member for member.
func schemaExtras(schema map[string]any) map[string]any {
	extras := make(map[string]any, len(schema))
	for k, v := range schema {
		if k != "type" {
			extras[k] = strictjson.Clone(v)
		}
	}
	return extras
}
