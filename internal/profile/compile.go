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
	"strconv"

	"purra.dev/purramcp/internal/ecmaregexp"
	"purra.dev/purramcp/internal/strictjson"
)

// Keywords is the closed keyword whitelist of A4.3, sorted by code unit.
var Keywords = []string{
	"additionalProperties", "anyOf", "const", "description", "enum", "items",
	"maxItems", "maxLength", "maximum", "minItems", "minLength", "minimum",
	"oneOf", "properties", "required", "title", "type", "uniqueItems",
}

// ErrInvalid matches every inspection failure (errors.Is). Contracts never
// expose the details (A4.7); a compatibility inspector may.
var ErrInvalid = errors.New("profile: schema outside purra.output-schema/v1")

// A SchemaError locates an inspection failure: Path is the JSON path of the
// offending schema node from "$" ("$.properties.q"), and Keyword the member
// that failed ("pattern", "type", …), or "schema" when the node itself is
// not an object or the root lacks "type": "object".
type SchemaError struct {
	Path    string
	Keyword string
}

// Error names the keyword and path; it is for inspectors, never for contracts.
func (e *SchemaError) Error() string {
	return "profile: schema outside purra.output-schema/v1: " + e.Keyword + " at " + e.Path
}

// Is makes every SchemaError match ErrInvalid.
func (e *SchemaError) Is(target error) bool { return target == ErrInvalid }

// compiler tracks the path of the node being inspected.
type compiler struct {
	opts Options
	path []string
	// refsAllowed admits $ref members while inline inspects the root's
	// $defs as written; inline resolves them.
	refsAllowed bool
	// patterns holds each pattern compiled so far and patternBytes their
	// total source (Options.ExtendedKeywords).
	patterns     map[string]*ecmaregexp.Regexp
	patternBytes int
}

func (c *compiler) invalid(keyword string) error {
	return &SchemaError{Path: joinPath(c.path), Keyword: keyword}
}

// child compiles the schema node at the path segment seg.
func (c *compiler) child(seg string, v any) (*node, error) {
	c.path = append(c.path, seg)
	n, err := c.node(v)
	c.path = c.path[:len(c.path)-1]
	return n, err
}

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
	ext        *extension // nil unless Options.ExtendedKeywords compiled one
}

// Schema is a compiled, immutable schema.
type Schema struct {
	root    *node
	inlined *strictjson.Object
}

// Inlined returns the schema that was compiled when Options.ExtendedKeywords
// inlined a $ref or removed a root $defs: every reference replaced by its
// definition, $defs removed, subtrees shared with the input and with each
// other (read only). It is nil when nothing was rewritten, so the compiled
// schema is the input itself.
func (s *Schema) Inlined() *strictjson.Object { return s.inlined }

// Compile inspects root, a strictjson snapshot, and compiles it. The root
// must be an object whose "type" is exactly "object" (A4.1).
func Compile(root any) (*Schema, error) { return CompileWith(root, Options{}) }

// Options widens the profile for a host that opts in explicitly. The zero
// value is purra.output-schema/v1 exactly.
type Options struct {
	// Annotations accepts the non-asserting keywords of AnnotationKeywords
	// wherever a schema node may stand. They never change validation, never
	// fill in a value, and stay in the schema (so in its digest).
	Annotations bool
	// ExtendedKeywords accepts, wherever a schema node may stand, the
	// asserting keywords exclusiveMinimum, exclusiveMaximum, propertyNames,
	// pattern and a schema-valued additionalProperties, and a root $defs
	// with local $ref pointers into it, each asserted by Validate with
	// JSON Schema 2020-12 semantics (see extension).
	ExtendedKeywords bool
	// Draft07 reports that the root declared draft-07: a $ref with sibling
	// keywords is then rejected (draft-07 ignores the siblings).
	Draft07 bool
	// MaxNodes and MaxDepth bound the schema after every $ref is inlined,
	// counted as strictjson counts nodes (keys included) and levels; they
	// apply only when ExtendedKeywords inlines something. Zero means 4096
	// nodes and depth 32.
	MaxNodes, MaxDepth int
	// MaxBytes bounds the detached bytes of the inlined schema likewise.
	// Zero means 65536.
	MaxBytes int
}

// AnnotationKeywords are the keywords Options.Annotations admits, with the
// JSON kind each value must have ("any" for default).
var AnnotationKeywords = map[string]string{
	"$comment": "string", "default": "any", "deprecated": "boolean", "examples": "array",
	"format": "string", "readOnly": "boolean", "writeOnly": "boolean",
}

// CompileWith is Compile under opts.
func CompileWith(root any, opts Options) (*Schema, error) {
	c := &compiler{opts: opts}
	obj, ok := root.(*strictjson.Object)
	if !ok {
		return nil, c.invalid("schema")
	}
	if t, ok := obj.Get("type"); !ok || t != "object" {
		return nil, c.invalid("type")
	}
	var inlined *strictjson.Object
	if opts.ExtendedKeywords {
		out, rewritten, err := c.inline(obj)
		if err != nil {
			return nil, err
		}
		if rewritten {
			root, inlined = out, out
		}
	}
	n, err := c.node(root)
	if err != nil {
		return nil, err
	}
	return &Schema{root: n, inlined: inlined}, nil
}

func (c *compiler) node(v any) (*node, error) {
	obj, ok := v.(*strictjson.Object)
	if !ok {
		return nil, c.invalid("schema") // boolean schemas and non-objects (A4.2)
	}
	n := &node{maxLength: -1, maxItems: -1}
	for _, k := range obj.Keys {
		if _, ok := slices.BinarySearch(Keywords, k); !ok && !c.annotation(k, obj.Members[k]) && !c.extended(k) &&
			!(c.refsAllowed && k == "$ref") {
			return nil, c.invalid(k)
		}
	}
	steps := []func(*node, *strictjson.Object) error{
		c.compileType, c.compileAnnotations, c.compileProperties, c.compileRequired,
		c.compileFlags, c.compileItems, c.compileBranches, c.compileValues, c.compileRanges,
		c.compileExtension,
	}
	for _, step := range steps {
		if err := step(n, obj); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// annotation reports whether k is an admitted annotation with a value of
// the right kind. Annotation values are data, never inspected as schemas.
func (c *compiler) annotation(k string, v any) bool {
	if !c.opts.Annotations {
		return false
	}
	switch AnnotationKeywords[k] {
	case "any":
		return true
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

func (c *compiler) compileType(n *node, obj *strictjson.Object) error {
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
		return c.invalid("type")
	}
	for _, name := range names {
		s, ok := name.(string)
		bit, known := typeNames[s]
		if !ok || !known || n.types&bit != 0 {
			return c.invalid("type") // non-string, unknown or duplicate type name
		}
		n.types |= bit
	}
	return nil
}

func (c *compiler) compileAnnotations(_ *node, obj *strictjson.Object) error {
	for _, k := range []string{"title", "description"} {
		if v, ok := obj.Get(k); ok {
			if _, isString := v.(string); !isString {
				return c.invalid(k)
			}
		}
	}
	return nil
}

func (c *compiler) compileProperties(n *node, obj *strictjson.Object) error {
	v, ok := obj.Get("properties")
	if !ok {
		return nil
	}
	props, ok := v.(*strictjson.Object)
	if !ok {
		return c.invalid("properties")
	}
	n.properties = make(map[string]*node, props.Len())
	for _, name := range props.Keys {
		child, err := c.child(".properties."+name, props.Members[name])
		if err != nil {
			return err
		}
		n.properties[name] = child
	}
	return nil
}

func (c *compiler) compileRequired(n *node, obj *strictjson.Object) error {
	v, ok := obj.Get("required")
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return c.invalid("required")
	}
	seen := make(map[string]bool, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok || s == "" || seen[s] {
			return c.invalid("required")
		}
		seen[s] = true
		n.required = append(n.required, s)
	}
	return nil
}

func (c *compiler) compileFlags(n *node, obj *strictjson.Object) error {
	if v, ok := obj.Get("additionalProperties"); ok {
		b, isBool := v.(bool)
		if !isBool && !c.opts.ExtendedKeywords {
			return c.invalid("additionalProperties") // a schema value is outside the profile
		}
		n.closed = isBool && !b // a schema value: compileExtension
	}
	if v, ok := obj.Get("uniqueItems"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return c.invalid("uniqueItems")
		}
		n.unique = b
	}
	return nil
}

func (c *compiler) compileItems(n *node, obj *strictjson.Object) error {
	v, ok := obj.Get("items")
	if !ok {
		return nil
	}
	child, err := c.child(".items", v) // the tuple form (an array) fails here too
	if err != nil {
		return err
	}
	n.items = child
	return nil
}

func (c *compiler) compileBranches(n *node, obj *strictjson.Object) error {
	for _, k := range []string{"anyOf", "oneOf"} {
		v, ok := obj.Get(k)
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return c.invalid(k)
		}
		branches := make([]*node, len(list))
		for i, b := range list {
			child, err := c.child("."+k+"["+strconv.Itoa(i)+"]", b)
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

func (c *compiler) compileValues(n *node, obj *strictjson.Object) error {
	if v, ok := obj.Get("enum"); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return c.invalid("enum")
		}
		n.enum, n.hasEnum = list, true
	}
	if v, ok := obj.Get("const"); ok {
		n.constant, n.hasConst = v, true // "const": null means "must be null" (A4.5)
	}
	return nil
}

func (c *compiler) compileRanges(n *node, obj *strictjson.Object) error {
	var err error
	if n.minLength, n.maxLength, err = c.countRange(obj, "minLength", "maxLength"); err != nil {
		return err
	}
	if n.minItems, n.maxItems, err = c.countRange(obj, "minItems", "maxItems"); err != nil {
		return err
	}
	lo, hasLo := obj.Get("minimum")
	hi, hasHi := obj.Get("maximum")
	if hasLo {
		f, ok := lo.(float64)
		if !ok {
			return c.invalid("minimum")
		}
		n.minimum = &f
	}
	if hasHi {
		f, ok := hi.(float64)
		if !ok {
			return c.invalid("maximum")
		}
		n.maximum = &f
	}
	if n.minimum != nil && n.maximum != nil && *n.minimum > *n.maximum {
		return c.invalid("minimum")
	}
	return nil
}

// countRange reads a pair of non-negative safe-integer bounds (A4.6). An
// absent minimum is 0 and an absent maximum is -1.
func (c *compiler) countRange(obj *strictjson.Object, minName, maxName string) (int, int, error) {
	lo, hi := 0, -1
	if v, ok := obj.Get(minName); ok {
		n, ok := count(v)
		if !ok {
			return 0, 0, c.invalid(minName)
		}
		lo = n
	}
	if v, ok := obj.Get(maxName); ok {
		n, ok := count(v)
		if !ok {
			return 0, 0, c.invalid(maxName)
		}
		hi = n
	}
	if hi >= 0 && lo > hi {
		return 0, 0, c.invalid(minName)
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
