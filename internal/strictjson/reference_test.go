package strictjson

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// The walks this package had before Snapshot and the digest walk became one
// walker (walk.go), kept verbatim as the reference the differential tests
// compare the unified walker against: refSnapshot is the old Snapshot,
// refWalkSorted the old WalkSorted.

func refSnapshot(v any, lim Limits) (any, error) {
	m := &meter{lim: lim}
	return m.refSnap(v, 0)
}

func (m *meter) refSnap(v any, level int) (any, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) > m.lim.Bytes {
			return nil, errLimit
		}
		if !refValidString(string(raw)) {
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
		if !refValidString(x) {
			return nil, errString
		}
		out, cost = x, StringCost(x)
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			v, err := m.refSnap(item, level+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		if !m.add(containerCost(len(x))) {
			return nil, errLimit
		}
		return out, nil
	case map[string]any:
		if len(x) > m.lim.Nodes {
			return nil, errLimit
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		refEnumerationOrder(keys)
		return m.refSnapMembers(keys, func(k string) any { return x[k] }, level)
	case *Object:
		if x == nil {
			return nil, errDomain
		}
		return m.refSnapMembers(x.Keys, func(k string) any { return memberOf(x, k) }, level)
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

func (m *meter) refSnapMembers(keys []string, get func(string) any, level int) (any, error) {
	names, values := make([]string, 0, len(keys)), make([]any, 0, len(keys))
	for _, k := range keys {
		if !m.enter(level + 1) {
			return nil, errLimit
		}
		if !refValidString(k) {
			return nil, errString
		}
		if !m.add(StringCost(k)) {
			return nil, errLimit
		}
		v, err := m.refSnap(get(k), level+1)
		if err != nil {
			return nil, err
		}
		names, values = append(names, k), append(values, v)
	}
	if !m.add(containerCost(len(keys))) {
		return nil, errLimit
	}
	return NewObject(names, values), nil
}

func refWalkSorted(v any, lim Limits, vis Visitor) error {
	w := &refWalker{meter: meter{lim: lim}, vis: vis}
	return w.walk(v, 0)
}

type refWalker struct {
	meter
	vis Visitor
}

func (w *refWalker) walk(v any, level int) error {
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) > w.lim.Bytes {
			return errLimit
		}
		if !refValidString(string(raw)) {
			return errString
		}
		parsed, err := parseWith(string(raw), &w.meter, level)
		if err != nil {
			return err
		}
		w.emit(parsed)
		return nil
	}
	if !w.enter(level) {
		return errLimit
	}
	switch x := v.(type) {
	case nil:
		w.vis.Null()
		return w.charge(scalarCost)
	case bool:
		w.vis.Bool(x)
		return w.charge(scalarCost)
	case string:
		if !refValidString(x) {
			return errString
		}
		w.vis.String(x)
		return w.charge(StringCost(x))
	case []any:
		w.vis.BeginArray(len(x))
		for _, item := range x {
			if err := w.walk(item, level+1); err != nil {
				return err
			}
		}
		return w.charge(containerCost(len(x)))
	case map[string]any:
		if len(x) > w.lim.Nodes {
			return errLimit
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return w.members(keys, x, level)
	case *Object:
		if x == nil {
			return errDomain
		}
		keys := slices.Sorted(slices.Values(x.Keys))
		return w.members(keys, membersOf(x), level)
	}
	f, err := goNumber(v)
	if err != nil {
		return err
	}
	w.vis.Number(f)
	return w.charge(numberCost)
}

func (w *refWalker) members(keys []string, m map[string]any, level int) error {
	w.vis.BeginObject(len(keys))
	for _, k := range keys {
		if !w.enter(level + 1) {
			return errLimit
		}
		if !refValidString(k) {
			return errString
		}
		w.vis.Key(k)
		if err := w.charge(StringCost(k)); err != nil {
			return err
		}
		if err := w.walk(m[k], level+1); err != nil {
			return err
		}
	}
	return w.charge(containerCost(len(keys)))
}

func (w *refWalker) charge(n int) error {
	if !w.add(n) {
		return errLimit
	}
	return nil
}

func (w *refWalker) emit(v any) {
	switch x := v.(type) {
	case nil:
		w.vis.Null()
	case bool:
		w.vis.Bool(x)
	case float64:
		w.vis.Number(x)
	case string:
		w.vis.String(x)
	case []any:
		w.vis.BeginArray(len(x))
		for _, item := range x {
			w.emit(item)
		}
	case *Object:
		keys := x.Keys
		if !slices.IsSorted(keys) {
			keys = slices.Sorted(slices.Values(keys))
		}
		w.vis.BeginObject(len(keys))
		for _, k := range keys {
			w.vis.Key(k)
			w.emit(memberOf(x, k))
		}
	}
}

// refValidString is the old separate UTF-8 pass.
func refValidString(s string) bool { return utf8.ValidString(s) }

// refEnumerationOrder is the old enumerationOrder on names.
func refEnumerationOrder(keys []string) {
	first := 0
	for _, k := range keys {
		if _, ok := arrayIndex(k); ok {
			first++
		}
	}
	if first == 0 {
		return
	}
	idx := make([]string, 0, first)
	rest := make([]string, 0, len(keys)-first)
	for _, k := range keys {
		if _, ok := arrayIndex(k); ok {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortFunc(idx, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	copy(keys, idx)
	copy(keys[len(idx):], rest)
}

// membersOf returns the members of o as a map.
func membersOf(o *Object) map[string]any {
	out := make(map[string]any, len(o.Keys))
	for i, k := range o.Keys {
		out[k] = o.Values[i]
	}
	return out
}
