package purraeino

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/eino-contrib/jsonschema"
)

// paramsJSON returns schema as JSON after checking that Eino's schema type
// (eino-contrib/jsonschema) keeps it: decoding the JSON into that type and
// encoding it again must give the same schema, up to the spellings that
// assert and annotate nothing (see equivalent). A nil schema is nil.
func paramsJSON(schema map[string]any) ([]byte, error) {
	if schema == nil {
		return nil, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("input schema does not encode: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("the input schema does not decode into Eino's schema type: %w", err)
	}
	again, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("the input schema does not encode from Eino's schema type: %w", err)
	}
	var before, after any
	if err := json.Unmarshal(b, &before); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(again, &after); err != nil {
		return nil, err
	}
	if at, ok := equivalent(before, after, ""); !ok {
		return nil, fmt.Errorf("the input schema would change in Eino's schema type at %q", at)
	}
	return b, nil
}

// noOp holds, for each keyword, the value whose absence changes nothing:
// Eino's schema type omits these when it encodes.
var noOp = map[string]any{
	"uniqueItems": false, "deprecated": false, "readOnly": false, "writeOnly": false,
	"title": "", "description": "", "required": []any{}, "examples": []any{},
}

// schemaMaps are the keywords whose value maps names to subschemas;
// schemaLists hold lists of subschemas; every other keyword in schemaOne
// holds one subschema.
var (
	schemaMaps  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaLists = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	schemaOne   = map[string]bool{"items": true, "additionalProperties": true, "not": true, "if": true, "then": true,
		"else": true, "contains": true, "propertyNames": true, "contentSchema": true,
		"unevaluatedItems": true, "unevaluatedProperties": true}
)

// equivalent reports whether schemas a and b (decoded JSON) are the same
// schema once true is read as {} and each noOp value as absent; when not, it
// returns the JSON pointer of the first difference.
func equivalent(a, b any, at string) (string, bool) {
	ma, mb := normal(a), normal(b)
	if ma == nil || mb == nil {
		return at, reflect.DeepEqual(a, b) // false, or anything that is not an object
	}
	for k, va := range ma {
		vb, ok := mb[k]
		if !ok {
			return at + "/" + escape(k), false
		}
		if where, same := member(k, va, vb, at+"/"+escape(k)); !same {
			return where, false
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			return at + "/" + escape(k), false
		}
	}
	return "", true
}

// member compares the values of keyword k in two schemas.
func member(k string, a, b any, at string) (string, bool) {
	switch {
	case schemaMaps[k]:
		ma, oka := a.(map[string]any)
		mb, okb := b.(map[string]any)
		if !oka || !okb || len(ma) != len(mb) {
			return at, false
		}
		for name, sa := range ma {
			sb, ok := mb[name]
			if !ok {
				return at + "/" + escape(name), false
			}
			if where, same := equivalent(sa, sb, at+"/"+escape(name)); !same {
				return where, false
			}
		}
		return "", true
	case schemaLists[k]:
		la, oka := a.([]any)
		lb, okb := b.([]any)
		if !oka || !okb || len(la) != len(lb) {
			return at, false
		}
		for i := range la {
			if where, same := equivalent(la[i], lb[i], at+"/"+strconv.Itoa(i)); !same {
				return where, false
			}
		}
		return "", true
	case schemaOne[k]:
		return equivalent(a, b, at)
	}
	return at, reflect.DeepEqual(a, b)
}

// normal returns schema v as an object without its noOp members (true is
// {}), or nil when v is neither an object nor true.
func normal(v any) map[string]any {
	if v == true {
		return map[string]any{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if none, ok := noOp[k]; ok && reflect.DeepEqual(x, none) {
			continue
		}
		out[k] = x
	}
	return out
}

// escape escapes a JSON pointer token.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
