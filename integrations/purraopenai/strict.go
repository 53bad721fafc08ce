package purraopenai

import "purra.dev/purramcp/integrations/internal/hostcore"

// StrictEligible reports whether schema can be sent with strict:true exactly
// as it is. It is conservative: a false answer only forgoes constrained
// decoding, while a wrong true answer would get the whole request refused.
// True only when every node uses the keywords type (one of object, array,
// string, number, integer, boolean, null), properties, required,
// additionalProperties, items, enum (at most 100 scalar values), const
// (a scalar), anyOf (below the root, only beside description and title),
// description and title; every node but an anyOf has a type; every object
// has properties, additionalProperties:false and lists every property in
// required; every array has one items schema; objects nest at most 5 deep;
// and the schema has at most 100 properties in all. No oneOf, allOf, $ref,
// format, pattern, length, numeric or item bounds, defaults or examples.
// Optional properties are never rewritten into required nullable ones: that
// would change the contract purramcp enforces.
func StrictEligible(schema map[string]any) bool { return hostcore.StrictEligible(schema, true) }
