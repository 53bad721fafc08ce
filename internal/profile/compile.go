// Package profile compiles and enforces the purra.output-schema/v1 schema
// profile (schema-profile.md A4, A7, A8) over strictjson values.
//
// Compile inspects a snapshotted schema against the closed 18-keyword
// whitelist and the per-keyword rules; Validate walks a value depth-first,
// stops at the first violation and charges one work step per schema-node
// visit and per structural-equality call, never more.
package profile

import (
	"errors"
	"slices"

	"purra.dev/purramcp/internal/strictjson"
)

// Keywords is the closed keyword whitelist of A4.3, sorted by code unit.
var Keywords = []string{
	"additionalProperties", "anyOf", "const", "description", "enum", "items",
	"maxItems", "maxLength", "maximum", "minItems", "minLength", "minimum",
	"oneOf", "properties", "required", "title", "type", "uniqueItems",
}

// ErrInvalid is returned by Compile for every inspection failure; its
// details are never exposed (A4.7).
var ErrInvalid = errors.New("profile: schema outside purra.output-schema/v1")

// Type bits for the type keyword (A7.3).
const (
	typeArray uint8 = 1 << iota
	typeBoolean
	typeInteger
	typeNull
	typeNumber
	typeObject
	typeString
)

var typeNames = map[string]uint8{
	"array": typeArray, "boolean": typeBoolean, "integer": typeInteger, "null": typeNull,
	"number": typeNumber, "object": typeObject, "string": typeString,
}

// node is one compiled schema node. Absent keywords leave their has* flag
// (or nil pointer) unset.
type node struct {
	types      uint8 // 0 when type is absent
	enum       []any
	hasEnum    bool
	constant   any
	hasConst   bool
	minLength  int
	maxLength  int // -1 when absent
	minItems   int
	maxItems   int // -1 when absent
	unique     bool
	items      *node
	required   []string
	closed     bool // additionalProperties: false
	properties map[string]*node
	minimum    *float64
	maximum    *float64
	anyOf      []*node
	oneOf      []*node
}

// Schema is a compiled, immutable schema.
type Schema struct {
	root *node
}

// Compile inspects root, a strictjson snapshot, and compiles it. The root
// must be an object whose "type" is exactly "object" (A4.1).
func Compile(root any) (*Schema, error) {
	obj, ok := root.(*strictjson.Object)
	if !ok {
		return nil, ErrInvalid
	}
	if t, ok := obj.Get("type"); !ok || t != "object" {
		return nil, ErrInvalid
	}
	n, err := compileNode(root)
	if err != nil {
		return nil, err
	}
	return &Schema{root: n}, nil
}

func compileNode(v any) (*node, error) {
	obj, ok := v.(*strictjson.Object)
	if !ok {
		return nil, ErrInvalid // boolean schemas and non-objects (A4.2)
	}
	n := &node{maxLength: -1, maxItems: -1}
	for _, k := range obj.Keys {
		if _, ok := slices.BinarySearch(Keywords, k); !ok {
			return nil, ErrInvalid
		}
	}
	steps := []func(*node, *strictjson.Object) error{
		compileType, compileAnnotations, compileProperties, compileRequired,
		compileFlags, compileItems, compileBranches, compileValues, compileRanges,
	}
	for _, step := range steps {
		if err := step(n, obj); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func compileType(n *node, obj *strictjson.Object) error {
	t, ok := obj.Get("type")
	if !ok {
		return nil
	}
	var names []any
	switch x := t.(type) {
	case string:
		names = []any{x}
	case []any:
		names = x
	}
	if len(names) == 0 {
		return ErrInvalid
	}
	for _, name := range names {
		s, ok := name.(string)
		bit, known := typeNames[s]
		if !ok || !known || n.types&bit != 0 {
			return ErrInvalid // non-string, unknown or duplicate type name
		}
		n.types |= bit
	}
	return nil
}

func compileAnnotations(_ *node, obj *strictjson.Object) error {
	for _, k := range []string{"title", "description"} {
		if v, ok := obj.Get(k); ok {
			if _, isString := v.(string); !isString {
				return ErrInvalid
			}
		}
	}
	return nil
}

func compileProperties(n *node, obj *strictjson.Object) error {
	v, ok := obj.Get("properties")
	if !ok {
		return nil
	}
	props, ok := v.(*strictjson.Object)
	if !ok {
		return ErrInvalid
	}
	n.properties = make(map[string]*node, props.Len())
	for _, name := range props.Keys {
		child, err := compileNode(props.Members[name])
		if err != nil {
			return err
		}
		n.properties[name] = child
	}
	return nil
}

func compileRequired(n *node, obj *strictjson.Object) error {
	v, ok := obj.Get("required")
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return ErrInvalid
	}
	seen := make(map[string]bool, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok || s == "" || seen[s] {
			return ErrInvalid
		}
		seen[s] = true
		n.required = append(n.required, s)
	}
	return nil
}

func compileFlags(n *node, obj *strictjson.Object) error {
	if v, ok := obj.Get("additionalProperties"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return ErrInvalid // schema-valued additionalProperties is outside the profile
		}
		n.closed = !b
	}
	if v, ok := obj.Get("uniqueItems"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return ErrInvalid
		}
		n.unique = b
	}
	return nil
}

func compileItems(n *node, obj *strictjson.Object) error {
	v, ok := obj.Get("items")
	if !ok {
		return nil
	}
	child, err := compileNode(v) // the tuple form (an array) fails here too
	if err != nil {
		return err
	}
	n.items = child
	return nil
}

func compileBranches(n *node, obj *strictjson.Object) error {
	for _, k := range []string{"anyOf", "oneOf"} {
		v, ok := obj.Get(k)
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return ErrInvalid
		}
		branches := make([]*node, len(list))
		for i, b := range list {
			child, err := compileNode(b)
			if err != nil {
				return err
			}
			branches[i] = child
		}
		if k == "anyOf" {
			n.anyOf = branches
		} else {
			n.oneOf = branches
		}
	}
	return nil
}

func compileValues(n *node, obj *strictjson.Object) error {
	if v, ok := obj.Get("enum"); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return ErrInvalid
		}
		n.enum, n.hasEnum = list, true
	}
	if v, ok := obj.Get("const"); ok {
		n.constant, n.hasConst = v, true // "const": null means "must be null" (A4.5)
	}
	return nil
}

func compileRanges(n *node, obj *strictjson.Object) error {
	var err error
	if n.minLength, n.maxLength, err = countRange(obj, "minLength", "maxLength"); err != nil {
		return err
	}
	if n.minItems, n.maxItems, err = countRange(obj, "minItems", "maxItems"); err != nil {
		return err
	}
	lo, hasLo := obj.Get("minimum")
	hi, hasHi := obj.Get("maximum")
	if hasLo {
		f, ok := lo.(float64)
		if !ok {
			return ErrInvalid
		}
		n.minimum = &f
	}
	if hasHi {
		f, ok := hi.(float64)
		if !ok {
			return ErrInvalid
		}
		n.maximum = &f
	}
	if n.minimum != nil && n.maximum != nil && *n.minimum > *n.maximum {
		return ErrInvalid
	}
	return nil
}

// countRange reads a pair of non-negative safe-integer bounds (A4.6). An
// absent minimum is 0 and an absent maximum is -1.
func countRange(obj *strictjson.Object, minName, maxName string) (int, int, error) {
	lo, hi := 0, -1
	if v, ok := obj.Get(minName); ok {
		c, ok := count(v)
		if !ok {
			return 0, 0, ErrInvalid
		}
		lo = c
	}
	if v, ok := obj.Get(maxName); ok {
		c, ok := count(v)
		if !ok {
			return 0, 0, ErrInvalid
		}
		hi = c
	}
	if hi >= 0 && lo > hi {
		return 0, 0, ErrInvalid
	}
	return lo, hi, nil
}

// count accepts a non-negative safe integer; 2.0 is the same number as 2.
func count(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || !strictjson.IsIntegral(f) || f > strictjson.MaxSafeInteger {
		return 0, false
	}
	return int(f), true
}
