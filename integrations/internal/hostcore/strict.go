package hostcore

// Bounds of the strict-eligibility check: far below what the vendors
// document, so that a schema within them is never refused for its size.
const (
	strictMaxDepth      = 5   // nested object levels, the root included
	strictMaxProperties = 100 // properties over the whole schema
	strictMaxEnum       = 100 // values of one enum
)

// strictKeywords are the keywords a strict-eligible schema may use besides
// anyOf: ones both Anthropic's strict tool use (the SDK's own
// structured-output transformer keeps each unchanged) and OpenAI's strict
// function calling (Structured Outputs) accept as they are.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "description": true, "title": true,
}

// StrictEligible reports whether schema can be sent with strict:true exactly
// as it is. It is conservative: a false answer only forgoes constrained
// decoding, while a wrong true answer would get the whole request refused.
// True only when every node uses the keywords type (one of object, array,
// string, number, integer, boolean, null), properties, required,
// additionalProperties, items, enum (at most 100 scalar values), const (a
// scalar), description and title, and, when anyOf is true, anyOf (below the
// root, only beside description and title, every branch eligible); every
// node but an anyOf has a type; every object has properties,
// additionalProperties:false and lists every property in required; every
// array has one items schema; objects nest at most 5 deep; and the schema
// has at most 100 properties in all. No oneOf, allOf, $ref, format,
// pattern, length, numeric or item bounds, defaults or examples. Optional
// properties are never rewritten into required nullable ones: that would
// change the contract purramcp enforces.
func StrictEligible(schema map[string]any, anyOf bool) bool {
	if schema == nil || schema["type"] != "object" {
		return false
	}
	if _, ok := schema["anyOf"]; ok {
		return false
	}
	c := strictCheck{anyOf: anyOf}
	return c.node(schema, 1)
}

// strictCheck is one eligibility check: whether anyOf is allowed and the
// properties counted so far.
type strictCheck struct {
	anyOf bool
	props int
}

// node checks one schema node at object depth depth.
func (c *strictCheck) node(node map[string]any, depth int) bool {
	if v, ok := node["anyOf"]; ok && c.anyOf {
		return c.anyOfNode(node, v, depth)
	}
	for k := range node {
		if !strictKeywords[k] {
			return false
		}
	}
	if !annotationsOK(node) || !valuesOK(node) {
		return false
	}
	typ, _ := node["type"].(string)
	switch typ {
	case "object":
		return c.object(node, depth)
	case "array":
		if hasAny(node, "properties", "required", "additionalProperties") {
			return false
		}
		items, ok := node["items"].(map[string]any)
		return ok && c.node(items, depth)
	case "string", "number", "integer", "boolean", "null":
		return !hasAny(node, "properties", "required", "additionalProperties", "items")
	default:
		return false // no type, or a list of types
	}
}

// object checks an object node: closed, every property required.
func (c *strictCheck) object(node map[string]any, depth int) bool {
	if depth > strictMaxDepth || node["additionalProperties"] != false || hasAny(node, "items") {
		return false
	}
	properties, ok := node["properties"].(map[string]any)
	if !ok {
		return false
	}
	c.props += len(properties)
	if c.props > strictMaxProperties {
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
		if !ok || !c.node(sub, depth+1) {
			return false
		}
	}
	return true
}

// anyOfNode checks a node with anyOf: nothing beside it but description and
// title, and every branch a strict-eligible schema.
func (c *strictCheck) anyOfNode(node map[string]any, v any, depth int) bool {
	for k := range node {
		if k != "anyOf" && k != "description" && k != "title" {
			return false
		}
	}
	if !annotationsOK(node) {
		return false
	}
	branches, ok := v.([]any)
	if !ok || len(branches) == 0 {
		return false
	}
	for _, b := range branches {
		sub, ok := b.(map[string]any)
		if !ok || !c.node(sub, depth) {
			return false
		}
	}
	return true
}

// annotationsOK reports whether description and title, where present, are
// strings.
func annotationsOK(node map[string]any) bool {
	for _, k := range []string{"description", "title"} {
		if v, ok := node[k]; ok {
			if _, isString := v.(string); !isString {
				return false
			}
		}
	}
	return true
}

// valuesOK reports whether enum (1 to 100 scalars) and const (a scalar),
// where present, are as strict decoding accepts them.
func valuesOK(node map[string]any) bool {
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
	return true
}

// hasAny reports whether node has any of keys.
func hasAny(node map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := node[k]; ok {
			return true
		}
	}
	return false
}

// scalar reports whether v is a JSON string, number, boolean or null.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, float64, bool:
		return true
	}
	return false
}
