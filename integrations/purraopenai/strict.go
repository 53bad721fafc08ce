package purraopenai

// Bounds of the strict-eligibility check: far below what the API documents,
// so that a schema within them is never refused for its size.
const (
	strictMaxDepth      = 5   // nested object levels, the root included
	strictMaxProperties = 100 // properties over the whole schema
	strictMaxEnum       = 100 // values of one enum
)

// strictKeywords are the only keywords a strict-eligible schema may use:
// ones OpenAI's strict function calling (Structured Outputs) accepts as they
// are.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "anyOf": true, "description": true, "title": true,
}

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
func StrictEligible(schema map[string]any) bool {
	if schema == nil || schema["type"] != "object" || schema["anyOf"] != nil {
		return false
	}
	props := 0
	return strictNode(schema, 1, &props)
}

// strictNode checks one schema node at object depth depth.
func strictNode(node map[string]any, depth int, props *int) bool {
	for k := range node {
		if !strictKeywords[k] {
			return false
		}
	}
	for _, k := range []string{"description", "title"} {
		if v, ok := node[k]; ok {
			if _, isString := v.(string); !isString {
				return false
			}
		}
	}
	if v, ok := node["enum"]; ok {
		values, isList := v.([]any)
		if !isList || len(values) == 0 || len(values) > strictMaxEnum {
			return false
		}
		for _, e := range values {
			if !scalar(e) {
				return false
			}
		}
	}
	if v, ok := node["const"]; ok && !scalar(v) {
		return false
	}
	if v, ok := node["anyOf"]; ok {
		return strictAnyOf(node, v, depth, props)
	}
	typ, _ := node["type"].(string)
	switch typ {
	case "object":
		return strictObject(node, depth, props)
	case "array":
		if _, ok := node["properties"]; ok {
			return false
		}
		if _, ok := node["required"]; ok {
			return false
		}
		if _, ok := node["additionalProperties"]; ok {
			return false
		}
		items, ok := node["items"].(map[string]any)
		return ok && strictNode(items, depth, props)
	case "string", "number", "integer", "boolean", "null":
		for _, k := range []string{"properties", "required", "additionalProperties", "items"} {
			if _, ok := node[k]; ok {
				return false
			}
		}
		return true
	default:
		return false // no type, or a list of types
	}
}

// strictObject checks an object node: closed, every property required.
func strictObject(node map[string]any, depth int, props *int) bool {
	if depth > strictMaxDepth || node["additionalProperties"] != false {
		return false
	}
	if _, ok := node["items"]; ok {
		return false
	}
	properties, ok := node["properties"].(map[string]any)
	if !ok {
		return false
	}
	*props += len(properties)
	if *props > strictMaxProperties {
		return false
	}
	required, isList := node["required"].([]any)
	if _, present := node["required"]; (present && !isList) || len(required) != len(properties) {
		return false
	}
	listed := make(map[string]bool, len(required))
	for _, r := range required {
		name, isString := r.(string)
		if !isString || listed[name] {
			return false
		}
		if _, ok := properties[name]; !ok {
			return false
		}
		listed[name] = true
	}
	for _, p := range properties {
		sub, ok := p.(map[string]any)
		if !ok || !strictNode(sub, depth+1, props) {
			return false
		}
	}
	return true
}

// strictAnyOf checks a node with anyOf: nothing beside it but description
// and title, and every branch a strict-eligible schema.
func strictAnyOf(node map[string]any, v any, depth int, props *int) bool {
	for k := range node {
		if k != "anyOf" && k != "description" && k != "title" {
			return false
		}
	}
	branches, ok := v.([]any)
	if !ok || len(branches) == 0 {
		return false
	}
	for _, b := range branches {
		sub, ok := b.(map[string]any)
		if !ok || !strictNode(sub, depth, props) {
			return false
		}
	}
	return true
}

// scalar reports whether v is a JSON string, number, boolean or null.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, float64, bool:
		return true
	}
	return false
}
