package strictjson

import (
	"encoding/json"
	"math"
)

// Snapshot validates, normalizes, bounds and copies a decoded Go value
// under lim. Accepted kinds: nil, bool, string, float64,
// float32, the integer kinds, json.Number, json.RawMessage (parsed strictly
// in place, sharing the budget), []any, map[string]any and *Object. Any
// other type is rejected, as are invalid UTF-8, non-finite numbers,
// integral numbers beyond ±(2^53−1) and anything over lim. A cyclic value
// fails the depth limit. The result shares no container with v (strings,
// being immutable, may share their bytes).
func Snapshot(v any, lim Limits) (any, error) {
	s := &struct { // one allocation for the walk and the builder
		w walker
		b builder
	}{}
	s.b.stack = s.b.inline[:0]
	if err := s.w.run(v, lim, EnumerationOrder, &s.b); err != nil {
		return nil, err
	}
	return s.b.root, nil
}

var (
	errDomain = &Error{Offset: -1, reason: "value outside the JSON domain"}
	errLimit  = &Error{Offset: -1, reason: "resource limit exceeded"}
	errNumber = &Error{Offset: -1, reason: "number outside the interoperable range"}
	errString = &Error{Offset: -1, reason: "string is not valid Unicode"}
)

// builder is the Visitor behind Snapshot: it assembles the copy from the
// walk's items. A container is complete once it has received the number of
// children it announced. Objects, their name slices and array elements are
// carved from chunks shared by one snapshot, which all live as long as the
// snapshot does, so most containers cost no allocation of their own (an
// object of more than scanMembers members one, its index).
type builder struct {
	root   any
	stack  []frame // open containers, innermost last
	inline [4]frame
	// The chunks containers are carved from.
	objects chunk[Object]
	names   chunk[string]
	items   chunk[any]
}

// frame is one open container: an array (obj nil) or an object and the name
// of the member whose value comes next.
type frame struct {
	arr  []any
	obj  *Object
	key  string
	left int // children still to come
}

// put adds a complete value to the innermost open container, closing every
// container it completes, or makes it the root.
func (b *builder) put(v any) {
	for len(b.stack) > 0 {
		f := &b.stack[len(b.stack)-1]
		if f.obj != nil {
			f.obj.Keys = append(f.obj.Keys, f.key)
			f.obj.Values = append(f.obj.Values, v)
		} else {
			f.arr = append(f.arr, v)
		}
		if f.left--; f.left > 0 {
			return
		}
		if f.obj != nil {
			f.obj.seal()
			v = f.obj
		} else {
			v = f.arr
		}
		*f = frame{}
		b.stack = b.stack[:len(b.stack)-1]
	}
	b.root = v
}

func (b *builder) Null()            { b.put(nil) }
func (b *builder) Bool(x bool)      { b.put(x) }
func (b *builder) Number(f float64) { b.put(f) }
func (b *builder) String(s string)  { b.put(s) }
func (b *builder) Value(v any)      { b.put(v) }
func (b *builder) Key(k string)     { b.stack[len(b.stack)-1].key = k }

func (b *builder) BeginArray(n int) {
	if n == 0 {
		b.put(make([]any, 0))
		return
	}
	b.stack = append(b.stack, frame{arr: b.items.carve(n, 16, 1024), left: n})
}

func (b *builder) BeginObject(n int) {
	obj := b.objects.next(4, 256)
	*obj = Object{Keys: b.names.carve(n, 8, 1024), Values: b.items.carve(n, 16, 1024)}
	if n == 0 {
		b.put(obj)
		return
	}
	b.stack = append(b.stack, frame{obj: obj, left: n})
}

// goNumber converts any Go number kind under the domain's number rules, as NumberValue
// applies them to a literal.
func goNumber(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		return intNumber(int64(x))
	case int8:
		return intNumber(int64(x))
	case int16:
		return intNumber(int64(x))
	case int32:
		return intNumber(int64(x))
	case int64:
		return intNumber(x)
	case uint:
		return uintNumber(uint64(x))
	case uint8:
		return uintNumber(uint64(x))
	case uint16:
		return uintNumber(uint64(x))
	case uint32:
		return uintNumber(uint64(x))
	case uint64:
		return uintNumber(x)
	case json.Number:
		if !ValidNumberLiteral(string(x)) {
			return 0, errNumber
		}
		n, ok := NumberValue(string(x))
		if !ok {
			return 0, errNumber
		}
		return n, nil
	default:
		return 0, errDomain
	}
	n, ok := normalize(f)
	if !ok {
		return 0, errNumber
	}
	return n, nil
}

func intNumber(i int64) (float64, error) {
	if i > MaxSafeInteger || i < -MaxSafeInteger {
		return 0, errNumber
	}
	return float64(i), nil
}

func uintNumber(u uint64) (float64, error) {
	if u > MaxSafeInteger {
		return 0, errNumber
	}
	return float64(u), nil
}

// ToGo returns a fresh decoded-Go copy of a value of this package's domain:
// *Object becomes map[string]any and arrays are copied. Numbers stay float64.
func ToGo(v any) any {
	switch x := v.(type) {
	case *Object:
		out := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			out[k] = ToGo(x.Values[i])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = ToGo(item)
		}
		return out
	default:
		return v
	}
}

// Own is ToGo for a value the caller owns and never uses again (a Parse or
// Snapshot result once validated): it converts in place, each array keeping
// its storage, so that only the member maps are allocated, one per object.
// v must not be read as a value of this package's domain afterwards.
func Own(v any) any {
	switch x := v.(type) {
	case *Object:
		return ownObject(x)
	case []any:
		ownItems(x)
	}
	return v // an array keeps its boxed header: its items changed in place
}

func ownObject(o *Object) map[string]any {
	members := make(map[string]any, len(o.Keys))
	for i, k := range o.Keys {
		v := o.Values[i]
		switch x := v.(type) {
		case *Object:
			v = ownObject(x)
		case []any:
			ownItems(x) // v keeps its boxed header: no new one
		}
		members[k] = v
	}
	return members
}

func ownItems(items []any) {
	for i, item := range items {
		switch x := item.(type) {
		case *Object:
			items[i] = ownObject(x)
		case []any:
			ownItems(x)
		}
	}
}

// IsIntegral reports whether f has an integral value, the test of the
// "integer" type.
func IsIntegral(f float64) bool { return f == math.Trunc(f) }
