package strictjson

import (
	"encoding/json"
	"math"
	"slices"
)

// Snapshot validates, normalizes, bounds and copies a decoded Go value
// (schema-profile.md A3). Accepted kinds: nil, bool, string, float64,
// float32, the integer kinds, json.Number, json.RawMessage (parsed strictly
// in place, sharing the budget), []any, map[string]any and *Object. Any
// other type is rejected, as are invalid UTF-8, non-finite numbers,
// integral numbers beyond ±(2^53−1) and anything over lim. A cyclic value
// fails the depth limit. The result shares nothing with v.
func Snapshot(v any, lim Limits) (any, error) {
	m := &meter{lim: lim}
	return m.snap(v, 0)
}

var (
	errDomain = &Error{Offset: -1, reason: "value outside the JSON domain"}
	errLimit  = &Error{Offset: -1, reason: "resource limit exceeded"}
	errNumber = &Error{Offset: -1, reason: "number outside the interoperable range"}
	errString = &Error{Offset: -1, reason: "string is not valid Unicode"}
)

func (m *meter) snap(v any, level int) (any, error) {
	if raw, ok := v.(json.RawMessage); ok {
		// Raw text is held to A6.2 like Parse's: its own length, whitespace
		// included, is checked against the byte limit before any work.
		if len(raw) > m.lim.Bytes {
			return nil, errLimit
		}
		if !validString(string(raw)) {
			return nil, errString
		}
		return parseWith(string(raw), m, level)
	}
	if !m.enter(level) {
		return nil, errLimit
	}
	var out any
	cost := numberCost
	switch x := v.(type) {
	case nil:
		cost = scalarCost
	case bool:
		out, cost = x, scalarCost
	case string:
		if !validString(x) {
			return nil, errString
		}
		out, cost = x, StringCost(x)
	case []any:
		return m.snapArray(x, level)
	case map[string]any:
		return m.snapMap(x, level)
	case *Object:
		if x == nil {
			return nil, errDomain
		}
		return m.snapObject(x, level)
	default:
		f, err := goNumber(v)
		if err != nil {
			return nil, err
		}
		out = f
	}
	if !m.add(cost) {
		return nil, errLimit
	}
	return out, nil
}

// goNumber converts any Go number kind under A3.2.
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

func (m *meter) snapArray(x []any, level int) (any, error) {
	out := make([]any, len(x))
	for i, item := range x {
		v, err := m.snap(item, level+1)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	if !m.add(containerCost(len(x))) {
		return nil, errLimit
	}
	return out, nil
}

// snapMap copies a Go map. A map has no member order, so names other than
// array indexes are visited in byte order, which keeps outcomes independent
// of Go's randomized map iteration.
func (m *meter) snapMap(x map[string]any, level int) (any, error) {
	if len(x) > m.lim.Nodes {
		return nil, errLimit // cheaper than sorting a hostile map first
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	enumerationOrder(keys)
	return m.snapMembers(keys, func(k string) any { return x[k] }, level)
}

func (m *meter) snapObject(x *Object, level int) (any, error) {
	return m.snapMembers(x.Keys, func(k string) any { return x.Members[k] }, level)
}

func (m *meter) snapMembers(keys []string, get func(string) any, level int) (any, error) {
	obj := &Object{Keys: make([]string, 0, len(keys)), Members: make(map[string]any, len(keys))}
	for _, k := range keys {
		if !m.enter(level + 1) {
			return nil, errLimit
		}
		if !validString(k) {
			return nil, errString
		}
		if !m.add(StringCost(k)) {
			return nil, errLimit
		}
		v, err := m.snap(get(k), level+1)
		if err != nil {
			return nil, err
		}
		obj.Keys = append(obj.Keys, k)
		obj.Members[k] = v
	}
	if !m.add(containerCost(len(keys))) {
		return nil, errLimit
	}
	return obj, nil
}

// ToGo returns a fresh decoded-Go copy of a value of this package's domain:
// *Object becomes map[string]any and arrays are copied. Numbers stay float64.
func ToGo(v any) any {
	switch x := v.(type) {
	case *Object:
		out := make(map[string]any, len(x.Keys))
		for _, k := range x.Keys {
			out[k] = ToGo(x.Members[k])
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

// IsIntegral reports whether f has an integral value (A7.3).
func IsIntegral(f float64) bool { return f == math.Trunc(f) }
