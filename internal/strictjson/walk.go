package strictjson

import (
	"encoding/json"
	"slices"
)

// A Visitor receives a value item by item, in canonical order: array
// elements in order, object members sorted by the bytes of their keys. A
// container announces its length first; nothing marks its end.
type Visitor interface {
	Null()
	Bool(bool)
	Number(float64)
	String(string)
	BeginArray(n int)
	BeginObject(n int)
	Key(string)
}

// WalkSorted applies the rules and limits of Snapshot to v while feeding
// vis, without building a copy: the same values are accepted and rejected,
// because every limit is a per-node depth check or an order-independent
// total. On error vis has seen a prefix of the walk and must be discarded.
// It serves digests, which sort keys anyway.
func WalkSorted(v any, lim Limits, vis Visitor) error {
	w := &walker{meter: meter{lim: lim}, vis: vis}
	return w.walk(v, 0)
}

type walker struct {
	meter
	vis Visitor
	// keys holds one reusable key buffer per level: an object's children sit
	// one level deeper, so the buffer of its level is free until it is done.
	keys [][]string
}

func (w *walker) scratch(level int) []string {
	for len(w.keys) <= level {
		w.keys = append(w.keys, nil)
	}
	return w.keys[level][:0]
}

func (w *walker) walk(v any, level int) error {
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) > w.lim.Bytes {
			return errLimit
		}
		if !validString(string(raw)) {
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
		if !validString(x) {
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
		keys := w.scratch(level)
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.keys[level] = keys
		return w.members(keys, x, level)
	case *Object:
		if x == nil {
			return errDomain
		}
		keys := append(w.scratch(level), x.Keys...)
		slices.Sort(keys)
		w.keys[level] = keys
		return w.members(keys, x.Members, level)
	}
	f, err := goNumber(v)
	if err != nil {
		return err
	}
	w.vis.Number(f)
	return w.charge(numberCost)
}

func (w *walker) members(keys []string, m map[string]any, level int) error {
	w.vis.BeginObject(len(keys))
	for _, k := range keys {
		if !w.enter(level + 1) {
			return errLimit
		}
		if !validString(k) {
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

func (w *walker) charge(n int) error {
	if !w.add(n) {
		return errLimit
	}
	return nil
}

// emit feeds an already metered value of this package's domain.
func (w *walker) emit(v any) {
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
			w.emit(x.Members[k])
		}
	}
}
