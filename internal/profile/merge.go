package profile

import (
	"slices"

	"purra.dev/purramcp/internal/strictjson"
)

// A $ref with sibling keywords (2020-12: the referenced schema and the
// siblings both apply) is inlined as one node that asserts exactly their
// intersection. Each keyword present on one side only applies as it is; a
// keyword present on both sides with different values is combined only
// where one value of the same keyword asserts exactly both, and the whole
// reference fails closed otherwise (pattern, multipleOf-like bounds,
// anyOf/oneOf, const, differing annotations aside). properties and
// additionalProperties are combined together, since which members are
// "additional" depends on each side's own properties.

// mergeAnnotations are the members where the referring node's value wins
// over the definition's: they assert nothing.
var mergeAnnotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "format": true,
}

// merge combines a definition with the referring node's other members into
// one node that asserts exactly both, or reports false.
func merge(def any, siblings *strictjson.Object) (*strictjson.Object, bool) {
	d, ok := def.(*strictjson.Object)
	if !ok {
		return nil, false
	}
	return intersect(d, siblings)
}

// intersect is merge of two schema objects: a's members first, in order,
// then b's new ones. The inputs are only read.
func intersect(a, b *strictjson.Object) (*strictjson.Object, bool) {
	coupled := hasObjectKeywords(a) && hasObjectKeywords(b)
	keys := append(make([]string, 0, a.Len()+b.Len()), a.Keys...)
	values := append(make([]any, 0, a.Len()+b.Len()), a.Values...)
	for i, k := range b.Keys {
		v := b.Values[i]
		if coupled && (k == "properties" || k == "additionalProperties") {
			continue // combined below
		}
		at := a.IndexOf(k)
		switch {
		case at < 0:
			keys, values = append(keys, k), append(values, v)
		case mergeAnnotations[k]:
			values[at] = v
		case !equalJSON(a.Values[at], v):
			r, ok := intersectKeyword(k, a.Values[at], v)
			if !ok {
				return nil, false
			}
			values[at] = r
		}
	}
	if !coupled {
		return strictjson.NewObject(keys, values), true
	}
	props, additional, ok := intersectMembers(a, b)
	if !ok {
		return nil, false
	}
	members := [...]struct {
		key   string
		value any
	}{{"properties", nil}, {"additionalProperties", additional}}
	if props != nil {
		members[0].value = props // a nil *Object must stay a nil any
	}
	for _, m := range members {
		if m.value == nil {
			continue
		}
		if at := slices.Index(keys, m.key); at >= 0 {
			values[at] = m.value
		} else {
			keys, values = append(keys, m.key), append(values, m.value)
		}
	}
	return strictjson.NewObject(keys, values), true
}

// hasObjectKeywords reports whether o has properties or
// additionalProperties.
func hasObjectKeywords(o *strictjson.Object) bool {
	_, p := o.Get("properties")
	_, a := o.Get("additionalProperties")
	return p || a
}

// intersectKeyword combines two different values of keyword k into one that
// asserts both: the tighter bound, the union of required names, the common
// enum values and types, uniqueItems if either, and the intersection of two
// items or propertyNames schemas. Anything else reports false.
func intersectKeyword(k string, x, y any) (any, bool) {
	switch k {
	case "maxLength", "maxItems", "maximum", "exclusiveMaximum":
		return bound(x, y, func(p, q float64) float64 { return min(p, q) })
	case "minLength", "minItems", "minimum", "exclusiveMinimum":
		return bound(x, y, func(p, q float64) float64 { return max(p, q) })
	case "required":
		return unionNames(x, y)
	case "enum":
		return commonValues(x, y)
	case "type":
		return commonTypes(x, y)
	case "uniqueItems":
		bx, okx := x.(bool)
		by, oky := y.(bool)
		return bx || by, okx && oky
	case "items", "propertyNames":
		ox, okx := x.(*strictjson.Object)
		oy, oky := y.(*strictjson.Object)
		if !okx || !oky {
			return nil, false
		}
		return intersectSchemas(ox, oy)
	}
	return nil, false
}

func bound(x, y any, pick func(float64, float64) float64) (any, bool) {
	fx, okx := x.(float64)
	fy, oky := y.(float64)
	if !okx || !oky {
		return nil, false
	}
	return pick(fx, fy), true
}

// unionNames is required of both sides: x's names, then y's new ones.
func unionNames(x, y any) (any, bool) {
	lx, okx := x.([]any)
	ly, oky := y.([]any)
	if !okx || !oky {
		return nil, false
	}
	out := append([]any(nil), lx...)
	for _, n := range ly {
		if _, ok := n.(string); !ok {
			return nil, false
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, true
}

// commonValues is enum of both sides: x's values also in y, in x's order;
// an empty result fails (no instance could pass).
func commonValues(x, y any) (any, bool) {
	lx, okx := x.([]any)
	ly, oky := y.([]any)
	if !okx || !oky {
		return nil, false
	}
	var out []any
	for _, v := range lx {
		if slices.ContainsFunc(ly, func(w any) bool { return equalJSON(v, w) }) {
			out = append(out, v)
		}
	}
	return out, len(out) > 0
}

// commonTypes is type of both sides: the types in both, an integer
// counting as a number; a single type is written as a string. An empty
// result fails.
func commonTypes(x, y any) (any, bool) {
	tx, okx := typeList(x)
	ty, oky := typeList(y)
	if !okx || !oky {
		return nil, false
	}
	var out []any
	for _, t := range tx {
		switch {
		case slices.Contains(ty, t):
			out = append(out, t)
		case t == "integer" && slices.Contains(ty, "number"):
			out = append(out, t)
		case t == "number" && slices.Contains(ty, "integer"):
			out = append(out, "integer")
		}
	}
	switch len(out) {
	case 0:
		return nil, false
	case 1:
		return out[0], true
	}
	return out, true
}

// typeList reads a type value: a name or an array of names.
func typeList(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, t := range x {
			s, ok := t.(string)
			if !ok || slices.Contains(out, s) {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// intersectSchemas is intersect of two subschemas that are equal or not.
func intersectSchemas(a, b *strictjson.Object) (*strictjson.Object, bool) {
	if equalJSON(a, b) {
		return a, true
	}
	return intersect(a, b)
}

// Subschema values of the properties/additionalProperties combination:
// top is no constraint (absent, or true), bottom is false.
type subschema struct {
	top, bottom bool
	obj         *strictjson.Object
}

func asSubschema(v any, present bool) (subschema, bool) {
	switch x := v.(type) {
	case *strictjson.Object:
		return subschema{obj: x}, true
	case bool:
		return subschema{top: x, bottom: !x}, true
	}
	return subschema{top: true}, !present
}

// and is the intersection of two subschemas; ok is false when it cannot be
// written.
func (s subschema) and(t subschema) (subschema, bool) {
	switch {
	case s.bottom || t.bottom:
		return subschema{bottom: true}, true
	case s.top:
		return t, true
	case t.top:
		return s, true
	}
	o, ok := intersectSchemas(s.obj, t.obj)
	return subschema{obj: o}, ok
}

// intersectMembers combines both sides' properties and
// additionalProperties: a member named by either side must pass that side's
// schema for it, or else that side's additionalProperties; a member named by
// neither must pass both additionalProperties. A member whose combined
// schema is false is left out of properties when the combined
// additionalProperties is false too (it is then forbidden as an additional
// member); any other false member fails. props is nil when neither side has
// properties, additional nil when neither has additionalProperties.
func intersectMembers(a, b *strictjson.Object) (props *strictjson.Object, additional any, ok bool) {
	pa, hasPA := a.Get("properties")
	pb, hasPB := b.Get("properties")
	va, hasVA := a.Get("additionalProperties")
	vb, hasVB := b.Get("additionalProperties")
	oa, okA := pa.(*strictjson.Object)
	ob, okB := pb.(*strictjson.Object)
	if hasPA && !okA || hasPB && !okB {
		return nil, nil, false
	}
	if oa == nil {
		oa = strictjson.NewObject(nil, nil)
	}
	if ob == nil {
		ob = strictjson.NewObject(nil, nil)
	}
	xa, okXA := asSubschema(va, hasVA)
	xb, okXB := asSubschema(vb, hasVB)
	if !okXA || !okXB {
		return nil, nil, false
	}
	rest, ok := xa.and(xb)
	if !ok {
		return nil, nil, false
	}
	names := append([]string(nil), oa.Keys...)
	for _, n := range ob.Keys {
		if oa.IndexOf(n) < 0 {
			names = append(names, n)
		}
	}
	var keys []string
	var values []any
	for _, n := range names {
		sa, sb := xa, xb
		if v, in := oa.Get(n); in {
			if sa, ok = asSubschema(v, true); !ok {
				return nil, nil, false
			}
		}
		if v, in := ob.Get(n); in {
			if sb, ok = asSubschema(v, true); !ok {
				return nil, nil, false
			}
		}
		s, ok := sa.and(sb)
		switch {
		case !ok:
			return nil, nil, false
		case s.bottom && rest.bottom:
			continue // forbidden as an additional member
		case s.obj == nil:
			return nil, nil, false // true or false is not a profile schema
		}
		keys, values = append(keys, n), append(values, s.obj)
	}
	if hasPA || hasPB {
		props = strictjson.NewObject(keys, values)
	}
	switch {
	case rest.bottom:
		additional = false
	case rest.obj != nil:
		additional = rest.obj
	case hasVA || hasVB:
		additional = true // both true or absent: as written
	}
	return props, additional, true
}

// equalJSON is structural equality (numbers by value, objects by member
// set, arrays in order) without a budget (bind time,
// bounded by the schema limits).
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case *strictjson.Object:
		y, ok := b.(*strictjson.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.Keys {
			yv, ok := y.Get(k)
			if !ok || !equalJSON(x.Values[i], yv) {
				return false
			}
		}
		return true
	}
	return a == b
}
