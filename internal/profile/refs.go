package profile

import (
	"strconv"
	"strings"

	"purra.dev/purramcp/internal/strictjson"
)

// Defaults of Options.MaxNodes and Options.MaxDepth (the default schema
// limits).
const (
	defaultMaxNodes = 4096
	defaultMaxDepth = 32
	defaultMaxBytes = 65536
)

// refPrefix is the only $ref form Options.ExtendedKeywords resolves: a JSON
// pointer, as a URI fragment, to one member of the root's $defs.
const refPrefix = "#/$defs/"

// measure is the strictjson accounting of one value: nodes (keys
// included), height (levels below it) and detached bytes (its compact JSON size).
type measure struct{ nodes, height, bytes int }

func (m *measure) addMember(key string, child measure) {
	m.nodes += 1 + child.nodes
	m.height = max(m.height, 1+child.height)
	m.bytes += strictjson.StringCost(key) + child.bytes + 2
}

// inliner resolves every $ref of one schema into a tree without $ref or
// $defs. Expanded definitions are shared, never copied: the tree is only
// read (compiled, hashed never, converted by ToGo).
type inliner struct {
	c        *compiler
	root     *strictjson.Object // its $defs member is removed, so never measured
	defs     *strictjson.Object
	expanded map[string]*expansion
	maxNodes int
	maxDepth int
	maxBytes int
	measured map[*strictjson.Object]measure
}

// expansion is one definition after inlining; done is false while it is
// being expanded, so meeting it again is a cycle.
type expansion struct {
	value any
	size  measure
	done  bool
}

// inline returns root with every $ref inlined and the root $defs removed,
// and whether anything changed. Every definition is first inspected as
// written, at its own path ($.$defs.Name), with $ref members admitted; a
// reference that is not "#/$defs/Name", names no definition, forms a cycle,
// has siblings under draft-07, or whose expansion makes the tree exceed the
// node, depth or byte limits fails with keyword "$ref" at its node.
func (c *compiler) inline(root *strictjson.Object) (*strictjson.Object, bool, error) {
	if !mentionsRef(root) {
		return root, false, nil
	}
	in := &inliner{c: c, root: root, expanded: map[string]*expansion{}, measured: map[*strictjson.Object]measure{},
		maxNodes: c.opts.MaxNodes, maxDepth: c.opts.MaxDepth, maxBytes: c.opts.MaxBytes}
	if in.maxNodes <= 0 {
		in.maxNodes = defaultMaxNodes
	}
	if in.maxDepth <= 0 {
		in.maxDepth = defaultMaxDepth
	}
	if in.maxBytes <= 0 {
		in.maxBytes = defaultMaxBytes
	}
	if v, ok := root.Get("$defs"); ok {
		defs, isObject := v.(*strictjson.Object)
		if !isObject {
			return nil, false, c.invalid("$defs")
		}
		in.defs = defs
		c.refsAllowed = true
		for i, name := range defs.Keys {
			if _, err := c.child(".$defs."+name, defs.Values[i]); err != nil {
				return nil, false, err
			}
		}
		c.refsAllowed = false
	}
	out, _, err := in.schema(root, 0)
	if err != nil {
		return nil, false, err
	}
	obj := out.(*strictjson.Object)
	if in.defs == nil && obj == root {
		return root, false, nil
	}
	if in.defs != nil {
		keys := make([]string, 0, len(obj.Keys))
		values := make([]any, 0, len(obj.Keys))
		for i, k := range obj.Keys {
			if k != "$defs" {
				keys, values = append(keys, k), append(values, obj.Values[i])
			}
		}
		obj = strictjson.NewObject(keys, values)
	}
	return obj, true, nil
}

// mentionsRef reports whether any object in v has a "$ref" or "$defs"
// member, as a keyword or as data; without one there is nothing to inline.
func mentionsRef(v any) bool {
	switch x := v.(type) {
	case *strictjson.Object:
		for i, k := range x.Keys {
			if k == "$ref" || k == "$defs" || mentionsRef(x.Values[i]) {
				return true
			}
		}
	case []any:
		for _, item := range x {
			if mentionsRef(item) {
				return true
			}
		}
	}
	return false
}

// schema resolves the schema node v at the compiler's current path and at
// level (its level in the inlined tree, for the depth limit). Non-objects
// are returned as they are: compile rejects them.
func (in *inliner) schema(v any, level int) (any, measure, error) {
	obj, ok := v.(*strictjson.Object)
	if !ok {
		return v, in.data(v), nil
	}
	var out any
	var size measure
	var err error
	if _, hasRef := obj.Get("$ref"); hasRef {
		out, size, err = in.ref(obj, level)
	} else {
		out, size, err = in.members(obj, level)
	}
	if err != nil {
		return nil, measure{}, err
	}
	if size.nodes > in.maxNodes || size.bytes > in.maxBytes || level+size.height > in.maxDepth {
		return nil, measure{}, in.c.invalid("$ref")
	}
	return out, size, nil
}

// members resolves the schema positions of a node without $ref and returns
// obj itself when nothing below it changed.
func (in *inliner) members(obj *strictjson.Object, level int) (*strictjson.Object, measure, error) {
	size := measure{nodes: 1, bytes: 2}
	vals := resolved{vals: obj.Values}
	for i, k := range obj.Keys {
		if obj == in.root && k == "$defs" {
			continue // removed from the result; inspected apart
		}
		v := obj.Values[i]
		var out any
		var child measure
		var err error
		switch k {
		case "properties":
			out, child, err = in.properties(v, level+1)
		case "items", "propertyNames", "additionalProperties":
			in.c.path = append(in.c.path, "."+k)
			out, child, err = in.schema(v, level+1)
			in.c.path = in.c.path[:len(in.c.path)-1]
		case "anyOf", "oneOf":
			out, child, err = in.branches(k, v, level+1)
		default:
			out, child = v, in.data(v)
		}
		if err != nil {
			return nil, measure{}, err
		}
		vals.set(i, out)
		size.addMember(k, child)
	}
	return vals.object(obj), size, nil
}

// resolved holds the values of an object as its members are resolved: the
// object's own values until one resolves to another value, then a copy
// holding the resolved ones.
type resolved struct {
	vals   []any
	copied bool
}

// set records that the value at i resolved to out.
func (r *resolved) set(i int, out any) {
	if same(out, r.vals[i]) {
		return
	}
	if !r.copied {
		r.vals, r.copied = append([]any(nil), r.vals...), true
	}
	r.vals[i] = out
}

// object returns obj when no value changed, else an object with obj's keys
// and the resolved values.
func (r *resolved) object(obj *strictjson.Object) *strictjson.Object {
	if !r.copied {
		return obj
	}
	return strictjson.NewObject(obj.Keys, r.vals)
}

// same reports whether a resolved value is the input itself (only objects
// and arrays can change).
func same(a, b any) bool {
	switch x := a.(type) {
	case *strictjson.Object:
		y, ok := b.(*strictjson.Object)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	return true
}

func (in *inliner) properties(v any, level int) (any, measure, error) {
	props, ok := v.(*strictjson.Object)
	if !ok {
		return v, in.data(v), nil
	}
	size := measure{nodes: 1, bytes: 2}
	vals := resolved{vals: props.Values}
	for i, name := range props.Keys {
		in.c.path = append(in.c.path, ".properties."+name)
		out, child, err := in.schema(props.Values[i], level+1)
		in.c.path = in.c.path[:len(in.c.path)-1]
		if err != nil {
			return nil, measure{}, err
		}
		vals.set(i, out)
		size.addMember(name, child)
	}
	return vals.object(props), size, nil
}

func (in *inliner) branches(k string, v any, level int) (any, measure, error) {
	list, ok := v.([]any)
	if !ok {
		return v, in.data(v), nil
	}
	size := measure{nodes: 1, bytes: 2 + 2*len(list)}
	var out []any
	for i, b := range list {
		in.c.path = append(in.c.path, "."+k+"["+strconv.Itoa(i)+"]")
		r, child, err := in.schema(b, level+1)
		in.c.path = in.c.path[:len(in.c.path)-1]
		if err != nil {
			return nil, measure{}, err
		}
		if !same(r, b) && out == nil {
			out = append(make([]any, 0, len(list)), list[:i]...)
		}
		if out != nil {
			out = append(out, r)
		}
		size.nodes += child.nodes
		size.height = max(size.height, 1+child.height)
		size.bytes += child.bytes
	}
	if out == nil {
		return list, size, nil
	}
	return out, size, nil
}

// ref resolves a node with a $ref member: the definition alone, or merged
// with the node's other members (2020-12 applies both) when that merge is
// exact (mergeable).
func (in *inliner) ref(obj *strictjson.Object, level int) (any, measure, error) {
	target, _ := obj.Get("$ref")
	name, ok := in.target(target)
	if !ok || (in.c.opts.Draft07 && obj.Len() > 1) {
		return nil, measure{}, in.c.invalid("$ref")
	}
	def, err := in.expand(name)
	if err != nil {
		return nil, measure{}, err
	}
	if obj.Len() == 1 {
		return def.value, def.size, nil
	}
	keys, values := make([]string, 0, obj.Len()-1), make([]any, 0, obj.Len()-1)
	for i, k := range obj.Keys {
		if k != "$ref" {
			keys, values = append(keys, k), append(values, obj.Values[i])
		}
	}
	siblings := strictjson.NewObject(keys, values)
	resolved, _, err := in.members(siblings, level)
	if err != nil {
		return nil, measure{}, err
	}
	merged, ok := merge(def.value, resolved)
	if !ok {
		return nil, measure{}, in.c.invalid("$ref")
	}
	return merged, in.data(merged), nil
}

// target parses "#/$defs/Name" (RFC 6901 ~0 and ~1 escapes) and reports
// whether it names a definition. Percent-encoded fragments, deeper
// pointers and every other form are refused.
func (in *inliner) target(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || in.defs == nil || !strings.HasPrefix(s, refPrefix) {
		return "", false
	}
	token := s[len(refPrefix):]
	if strings.ContainsAny(token, "/%") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(token); i++ {
		if token[i] != '~' {
			b.WriteByte(token[i])
			continue
		}
		if i+1 == len(token) || (token[i+1] != '0' && token[i+1] != '1') {
			return "", false
		}
		b.WriteByte("~/"[token[i+1]-'0'])
		i++
	}
	name := b.String()
	_, ok = in.defs.Get(name)
	return name, ok
}

// expand inlines definition name once; meeting it while it is being
// expanded is a cycle.
func (in *inliner) expand(name string) (*expansion, error) {
	if e, ok := in.expanded[name]; ok {
		if !e.done {
			return nil, in.c.invalid("$ref")
		}
		return e, nil
	}
	e := &expansion{}
	in.expanded[name] = e
	saved := in.c.path
	in.c.path = []string{".$defs." + name}
	def, _ := in.defs.Get(name)
	value, size, err := in.schema(def, 0)
	in.c.path = saved
	if err != nil {
		return nil, err
	}
	e.value, e.size, e.done = value, size, true
	return e, nil
}

// data measures a value as strictjson would; objects are measured once.
func (in *inliner) data(v any) measure {
	switch x := v.(type) {
	case *strictjson.Object:
		if m, ok := in.measured[x]; ok {
			return m
		}
		m := measure{nodes: 1, bytes: 2}
		for i, k := range x.Keys {
			m.addMember(k, in.data(x.Values[i]))
		}
		in.measured[x] = m
		return m
	case []any:
		m := measure{nodes: 1, bytes: 2 + 2*len(x)}
		for _, item := range x {
			c := in.data(item)
			m.nodes += c.nodes
			m.height = max(m.height, 1+c.height)
			m.bytes += c.bytes
		}
		return m
	case string:
		return measure{nodes: 1, bytes: strictjson.StringCost(x)}
	case float64:
		return measure{nodes: 1, bytes: 24}
	}
	return measure{nodes: 1, bytes: 5} // null and booleans
}
