package profile

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"purra.dev/purramcp/internal/strictjson"
)

// ErrBudget reports that the work budget ran out.
var ErrBudget = errors.New("profile: validation work budget exhausted")

// Violation is the first failed constraint in walk order.
type Violation struct {
	Keyword string
	// Path holds the segments after "$": ".name" for members and "[i]" for
	// elements. Render applies the exposure rules.
	Path []string
}

// MaxPathBytes is the longest path rendered as is; longer ones become "$".
const MaxPathBytes = 512

// Render returns the path exposed for v: "$" for
// additionalProperties, so that undeclared candidate keys are never echoed,
// and "$" for a path over MaxPathBytes.
func (v *Violation) Render() string {
	if v.Keyword == "additionalProperties" {
		return "$"
	}
	if pathLen(v.Path) > MaxPathBytes {
		return "$"
	}
	return joinPath(v.Path)
}

// pathLen is the byte length of joinPath(segs).
func pathLen(segs []string) int {
	n := 1
	for _, s := range segs {
		n += len(s)
	}
	return n
}

// joinPath renders path segments after the root, "$": the one path
// spelling of schema errors (SchemaError.Path) and violations (Render).
func joinPath(segs []string) string {
	var b strings.Builder
	b.Grow(pathLen(segs))
	b.WriteByte('$')
	for _, s := range segs {
		b.WriteString(s)
	}
	return b.String()
}

// budget is the validation work counter. charge and chargeN are its only
// mutators; charge is called at exactly the charge points (each
// schema-node visit and each structural-equality call), chargeN only for a
// pattern match under Options.ExtendedKeywords.
type budget struct{ remaining int }

func (b *budget) charge() error {
	b.remaining--
	if b.remaining < 0 {
		return ErrBudget
	}
	return nil
}

// chargeN charges n steps at once (a pattern match, whose cost grows with
// the input); like n calls of charge, it fails when the counter goes negative.
func (b *budget) chargeN(n int) error {
	if n > b.remaining {
		b.remaining = -1
		return ErrBudget
	}
	b.remaining -= n
	return nil
}

// Validate checks value against s with a budget of steps. value is a
// strictjson value, in which objects may also be map[string]any (a value
// strictjson.Shared returned): their members are visited in the order a
// snapshot would give them. It returns ErrBudget when the budget runs out
// first, else the first violation (nil when the value conforms).
func (s *Schema) Validate(value any, steps int) (*Violation, error) {
	if s.anyObject && steps >= 1 && typeOf(value) == typeObject {
		return nil, nil // the one step the root's visit costs, and nothing can fail
	}
	// One allocation holds the walker and the first buffer of its path,
	// which serves most values without growing. Its keys stack, used only
	// for extended keywords and structural equality of Go maps, starts
	// empty.
	x := &struct {
		w    walker
		path [8]segment
	}{}
	x.w = walker{budget: budget{remaining: steps}, path: x.path[:0]}
	return x.w.visit(value, s.root)
}

type walker struct {
	budget
	// path locates the value being visited; its segments are rendered only
	// when a violation is reported.
	path []segment
	// keys holds the member names of every Go map being visited, in
	// enumeration order, innermost last.
	keys []string
	// quiet counts the enclosing visits whose violation is only tested for
	// nil (combinator branches, propertyNames keys, additionalProperties
	// members): inside them a failure is reported as discarded, unrendered.
	quiet int
}

// A segment is one step of a value path: the member name, or, when index is
// not negative, the array element at index.
type segment struct {
	name  string
	index int
}

// discarded is the violation a quiet visit reports: only its being non-nil
// is ever read, never its keyword or path.
var discarded = &Violation{Keyword: "discarded"}

// violation reports keyword at the current path.
func (w *walker) violation(keyword string) *Violation {
	if w.quiet > 0 {
		return discarded
	}
	segs := make([]string, 0, len(w.path))
	for _, s := range w.path {
		if s.index < 0 {
			segs = append(segs, "."+s.name)
		} else {
			segs = append(segs, "["+strconv.Itoa(s.index)+"]")
		}
	}
	return &Violation{Keyword: keyword, Path: segs}
}

// visitQuiet is visit for a caller that only tests the violation for nil.
func (w *walker) visitQuiet(v any, n *node) (*Violation, error) {
	w.quiet++
	vi, err := w.visit(v, n)
	w.quiet--
	return vi, err
}

// visit runs the checks in their fixed order at one (value, schema node)
// pair: combinators, then type, enum and const, then the kind's own
// keywords.
func (w *walker) visit(v any, n *node) (*Violation, error) {
	if err := w.charge(); err != nil {
		return nil, err
	}
	if vi, err := w.combinators(v, n); vi != nil || err != nil {
		return vi, err
	}
	if vi, err := w.values(v, n); vi != nil || err != nil {
		return vi, err
	}
	switch x := v.(type) {
	case string:
		if vi := w.forString(x, n); vi != nil || n.ext == nil {
			return vi, nil
		}
		return w.extString(x, n.ext)
	case []any:
		return w.forArray(x, n)
	case *strictjson.Object:
		return w.forObject(object{keys: x.Keys, obj: x}, n)
	case map[string]any:
		if n.ext == nil && len(n.mapProps) <= mapPathProperties {
			return w.forMap(x, n)
		}
		if n.ext == nil {
			return w.forObject(object{members: x}, n) // no member order needed: see object
		}
		obj, base := w.mapObject(x)
		vi, err := w.forObject(obj, n)
		w.keys = w.keys[:base]
		return vi, err
	case float64:
		if vi := w.forNumber(x, n); vi != nil || n.ext == nil {
			return vi, nil
		}
		return extNumber(w, x, n.ext), nil
	}
	return nil, nil
}

// combinators validates every branch, with no short-circuit, so the work
// charged never depends on which branch matches.
func (w *walker) combinators(v any, n *node) (*Violation, error) {
	if n.anyOf != nil {
		passed, err := w.passing(v, n.anyOf)
		if err != nil {
			return nil, err
		}
		if passed == 0 {
			return w.violation("anyOf"), nil
		}
	}
	if n.oneOf != nil {
		passed, err := w.passing(v, n.oneOf)
		if err != nil {
			return nil, err
		}
		if passed != 1 {
			return w.violation("oneOf"), nil
		}
	}
	return nil, nil
}

func (w *walker) passing(v any, branches []*node) (int, error) {
	passed := 0
	for _, b := range branches {
		vi, err := w.visitQuiet(v, b)
		if err != nil {
			return 0, err
		}
		if vi == nil {
			passed++
		}
	}
	return passed, nil
}

// values checks type, enum and const, in that order.
func (w *walker) values(v any, n *node) (*Violation, error) {
	if n.types != 0 && n.types&typeOf(v) == 0 {
		return w.violation("type"), nil
	}
	if n.hasEnum {
		found := false
		for _, candidate := range n.enum {
			eq, err := w.equal(v, candidate)
			if err != nil {
				return nil, err
			}
			if eq {
				found = true
				break
			}
		}
		if !found {
			return w.violation("enum"), nil
		}
	}
	if n.hasConst {
		eq, err := w.equal(v, n.constant)
		if err != nil {
			return nil, err
		}
		if !eq {
			return w.violation("const"), nil
		}
	}
	return nil, nil
}

// typeOf returns every type bit v satisfies: an integral number is both an
// integer and a number; booleans are never numbers.
func typeOf(v any) uint8 {
	switch x := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case float64:
		if strictjson.IsIntegral(x) {
			return typeNumber | typeInteger
		}
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case *strictjson.Object, map[string]any:
		return typeObject
	}
	return 0
}

// forString counts code points, not bytes or UTF-16 units.
func (w *walker) forString(s string, n *node) *Violation {
	if n.minLength == 0 && n.maxLength < 0 {
		return nil
	}
	length := utf8.RuneCountInString(s)
	if length < n.minLength {
		return w.violation("minLength")
	}
	if n.maxLength >= 0 && length > n.maxLength {
		return w.violation("maxLength")
	}
	return nil
}

func (w *walker) forArray(list []any, n *node) (*Violation, error) {
	if len(list) < n.minItems {
		return w.violation("minItems"), nil
	}
	if n.maxItems >= 0 && len(list) > n.maxItems {
		return w.violation("maxItems"), nil
	}
	if n.unique {
		for j := 1; j < len(list); j++ {
			for i := 0; i < j; i++ {
				eq, err := w.equal(list[i], list[j])
				if err != nil {
					return nil, err
				}
				if eq {
					return w.violation("uniqueItems"), nil
				}
			}
		}
	}
	if n.items == nil {
		return nil, nil
	}
	for i, item := range list {
		w.path = append(w.path, segment{index: i})
		vi, err := w.visit(item, n.items)
		w.path = w.path[:len(w.path)-1]
		if vi != nil || err != nil {
			return vi, err
		}
	}
	return nil, nil
}

// An object is a value's object as the walker reads it: member names in
// enumeration order and the members, of an *Object (obj) or a Go map
// (members). A Go map checked against a node without extended keywords
// has no keys: its declared members are visited in the node's mapProps order,
// which is the order its sorted names would give them, and which
// undeclared name fails a closed node changes neither the keyword nor the
// path ("$"), so it is found in map order.
type object struct {
	keys    []string
	obj     *strictjson.Object
	members map[string]any
}

// get returns the member named k and whether it exists.
func (o object) get(k string) (any, bool) {
	if o.obj != nil {
		return o.obj.Get(k)
	}
	v, ok := o.members[k]
	return v, ok
}

// at returns the member named keys[i].
func (o object) at(i int) any {
	if o.obj != nil {
		return o.obj.Values[i]
	}
	return o.members[o.keys[i]]
}

// len returns the number of members.
func (o object) len() int {
	if o.obj != nil {
		return o.obj.Len()
	}
	return len(o.members)
}

// mapObject pushes the names of m on w.keys and returns m as an object and
// the stack's length before, which the caller restores once done with it.
func (w *walker) mapObject(m map[string]any) (object, int) {
	base := len(w.keys)
	w.keys = strictjson.AppendKeys(w.keys, m)
	return object{keys: w.keys[base:], members: m}, base
}

func (w *walker) forObject(obj object, n *node) (*Violation, error) {
	for _, name := range n.required {
		if _, ok := obj.get(name); !ok {
			w.path = append(w.path, segment{name: name, index: -1}) // the missing member's path
			vi := w.violation("required")
			w.path = w.path[:len(w.path)-1]
			return vi, nil
		}
	}
	if n.closed && !w.declaresAll(obj, n) {
		return w.violation("additionalProperties"), nil
	}
	if n.ext != nil {
		if vi, err := w.propertyNames(obj, n.ext); vi != nil || err != nil {
			return vi, err
		}
	}
	if len(n.properties) != 0 && obj.keys == nil {
		for _, p := range n.mapProps {
			v, present := obj.get(p.name)
			if !present {
				continue
			}
			w.path = append(w.path, segment{name: p.name, index: -1})
			vi, err := w.visit(v, p.node)
			w.path = w.path[:len(w.path)-1]
			if vi != nil || err != nil {
				return vi, err
			}
		}
	} else if len(n.properties) != 0 {
		for i, k := range obj.keys {
			child, declared := n.properties[k]
			if !declared {
				continue
			}
			w.path = append(w.path, segment{name: k, index: -1})
			vi, err := w.visit(obj.at(i), child)
			w.path = w.path[:len(w.path)-1]
			if vi != nil || err != nil {
				return vi, err
			}
		}
	}
	if n.ext != nil && n.ext.additional != nil {
		return w.additional(obj, n)
	}
	return nil, nil
}

// forMap is forObject for a Go map checked against a node without extended
// keywords and with at most mapPathProperties properties: each property is
// looked up once; when every required name is a property, the found ones
// tell which are present (requiredMask); and the map declares nothing else
// exactly when the properties found are all its members (its names are
// distinct). The checks, their order and the steps charged are forObject's.
func (w *walker) forMap(m map[string]any, n *node) (*Violation, error) {
	var values [mapPathProperties]any
	var present uint16
	found := 0
	for i, p := range n.mapProps {
		if v, ok := m[p.name]; ok {
			values[i] = v
			present |= 1 << i
			found++
		}
	}
	if !n.requiredDeclared || present&n.requiredMask != n.requiredMask {
		for _, name := range n.required {
			if _, ok := m[name]; !ok {
				w.path = append(w.path, segment{name: name, index: -1}) // the missing member's path
				vi := w.violation("required")
				w.path = w.path[:len(w.path)-1]
				return vi, nil
			}
		}
	}
	if n.closed && found != len(m) {
		return w.violation("additionalProperties"), nil
	}
	for i, p := range n.mapProps {
		if present&(1<<i) == 0 {
			continue
		}
		w.path = append(w.path, segment{name: p.name, index: -1})
		vi, err := w.visit(values[i], p.node)
		w.path = w.path[:len(w.path)-1]
		if vi != nil || err != nil {
			return vi, err
		}
	}
	return nil, nil
}

// declaresAll reports whether n declares every member of obj.
func (w *walker) declaresAll(obj object, n *node) bool {
	if obj.keys == nil {
		for k := range obj.members {
			if _, declared := n.properties[k]; !declared {
				return false
			}
		}
		return true
	}
	for _, k := range obj.keys {
		if _, declared := n.properties[k]; !declared {
			return false
		}
	}
	return true
}

// forNumber applies the inclusive bounds.
func (w *walker) forNumber(f float64, n *node) *Violation {
	if n.minimum != nil && f < *n.minimum {
		return w.violation("minimum")
	}
	if n.maximum != nil && f > *n.maximum {
		return w.violation("maximum")
	}
	return nil
}

// equal is structural equality (numbers by value, objects by member set,
// arrays in order). Every call, recursive ones included,
// costs one step; it stops at the first kind, length, key-count or member
// mismatch, so that its charge is exact.
func (w *walker) equal(a, b any) (bool, error) {
	if err := w.charge(); err != nil {
		return false, err
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		for i := range x {
			if eq, err := w.equal(x[i], y[i]); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	case *strictjson.Object:
		return w.equalObjects(object{keys: x.Keys, obj: x}, b)
	case map[string]any:
		obj, base := w.mapObject(x)
		eq, err := w.equalObjects(obj, b)
		w.keys = w.keys[:base]
		return eq, err
	default:
		return a == b, nil // nil, bool, float64 and string compare by value
	}
}

// equalObjects is equal for an object x, whose members it compares in x's
// enumeration order.
func (w *walker) equalObjects(x object, b any) (bool, error) {
	var y object
	switch b := b.(type) {
	case *strictjson.Object:
		y = object{obj: b}
	case map[string]any:
		y = object{members: b}
	default:
		return false, nil
	}
	if len(x.keys) != y.len() {
		return false, nil
	}
	for i, k := range x.keys {
		yv, ok := y.get(k)
		if !ok {
			return false, nil
		}
		if eq, err := w.equal(x.at(i), yv); !eq || err != nil {
			return false, err
		}
	}
	return true, nil
}
