package profile

import (
	"slices"
	"strconv"

	"purra.dev/purramcp/internal/strictjson"
)

// refCompiler is the compiler as it was before the keyword-slot rewrite
// (every keyword looked up with Object.Get, one closure per step, each
// path segment concatenated eagerly), kept verbatim as the reference the
// differential tests compare the current compiler with.
type refCompiler struct{ *compiler }

// referenceCompileWith is CompileWith through refCompiler.
func referenceCompileWith(root any, opts Options) (*Schema, error) {
	c := &refCompiler{&compiler{opts: opts}}
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

// child compiles the schema node at the path segment seg.
func (c *refCompiler) child(seg string, v any) (*node, error) {
	c.path = append(c.path, seg)
	n, err := c.node(v)
	c.path = c.path[:len(c.path)-1]
	return n, err
}

func (c *refCompiler) node(v any) (*node, error) {
	obj, ok := v.(*strictjson.Object)
	if !ok {
		return nil, c.invalid("schema") // boolean schemas and non-objects are outside the profile
	}
	n := &node{maxLength: -1, maxItems: -1}
	for _, k := range obj.Keys {
		if _, ok := slices.BinarySearch(Keywords, k); !ok && !c.annotation(k, mustGet(obj, k)) && !c.extended(k) &&
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

func (c *refCompiler) compileType(n *node, obj *strictjson.Object) error {
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

func (c *refCompiler) compileAnnotations(_ *node, obj *strictjson.Object) error {
	for _, k := range []string{"title", "description"} {
		if v, ok := obj.Get(k); ok {
			if _, isString := v.(string); !isString {
				return c.invalid(k)
			}
		}
	}
	return nil
}

func (c *refCompiler) compileProperties(n *node, obj *strictjson.Object) error {
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
		child, err := c.child(".properties."+name, mustGet(props, name))
		if err != nil {
			return err
		}
		n.properties[name] = child
	}
	return nil
}

func (c *refCompiler) compileRequired(n *node, obj *strictjson.Object) error {
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

func (c *refCompiler) compileFlags(n *node, obj *strictjson.Object) error {
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

func (c *refCompiler) compileItems(n *node, obj *strictjson.Object) error {
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

func (c *refCompiler) compileBranches(n *node, obj *strictjson.Object) error {
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

func (c *refCompiler) compileValues(n *node, obj *strictjson.Object) error {
	if v, ok := obj.Get("enum"); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return c.invalid("enum")
		}
		n.enum, n.hasEnum = list, true
	}
	if v, ok := obj.Get("const"); ok {
		n.constant, n.hasConst = v, true // "const": null means "must be null"
	}
	return nil
}

func (c *refCompiler) compileRanges(n *node, obj *strictjson.Object) error {
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

// countRange reads a pair of non-negative safe-integer bounds. An
// absent minimum is 0 and an absent maximum is -1.
func (c *refCompiler) countRange(obj *strictjson.Object, minName, maxName string) (int, int, error) {
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

// compileExtension compiles the extended keywords of obj, if any.
func (c *refCompiler) compileExtension(n *node, obj *strictjson.Object) error {
	if !c.opts.ExtendedKeywords {
		return nil
	}
	var ext extension
	used := false
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
		v, ok := obj.Get(k)
		if !ok {
			continue
		}
		f, ok := v.(float64) // the boolean draft-04 form is rejected; snapshots are safe numbers
		if !ok {
			return c.invalid(k)
		}
		if k == "exclusiveMinimum" {
			ext.exclusiveMinimum = &f
		} else {
			ext.exclusiveMaximum = &f
		}
		used = true
	}
	if v, ok := obj.Get("propertyNames"); ok {
		child, err := c.child(".propertyNames", v)
		if err != nil {
			return err
		}
		ext.propertyNames, used = child, true
	}
	if v, ok := obj.Get("additionalProperties"); ok {
		if _, isBool := v.(bool); !isBool {
			child, err := c.child(".additionalProperties", v)
			if err != nil {
				return err
			}
			ext.additional, used = child, true
		}
	}
	if v, ok := obj.Get("pattern"); ok {
		s, isString := v.(string)
		if !isString {
			return c.invalid("pattern")
		}
		re, err := c.pattern(s)
		if err != nil {
			return c.invalid("pattern")
		}
		ext.pattern, used = re, true
	}
	if used {
		n.ext = &ext
	}
	return nil
}

// mustGet returns the member named k of o, which has one.
func mustGet(o *strictjson.Object, k string) any {
	v, ok := o.Get(k)
	if !ok {
		panic("profile: reference compiler: missing member " + k)
	}
	return v
}
