package purraanthropic

import (
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"purra.dev/purramcp/integrations/internal/hostcore"
)

// StrictEligible reports whether schema can be sent with strict:true exactly
// as it is. It is conservative: a false answer only forgoes constrained
// decoding, while a wrong true answer would get the whole request refused.
// True only when every node uses the keywords type (one of object, array,
// string, number, integer, boolean, null), properties, required,
// additionalProperties, items, enum (at most 100 scalar values), const
// (a scalar), description and title; every object has properties,
// additionalProperties:false and lists every property in required; every
// array has one items schema; objects nest at most 5 deep; and the schema
// has at most 100 properties in all. No anyOf, oneOf, allOf, $ref, format,
// pattern, length, numeric or item bounds, defaults or examples.
func StrictEligible(schema map[string]any) bool { return hostcore.StrictEligible(schema, false) }

// strict is a declaration's Strict: true when [StrictEligible] holds for
// schema, else unset.
func strict(schema map[string]any) param.Opt[bool] {
	if StrictEligible(schema) {
		return param.NewOpt(true)
	}
	return param.Opt[bool]{}
}
