package strictjson

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// Order is the order in which a walk visits an object's members.
type Order uint8

const (
	// EnumerationOrder is JavaScript's (A3.6), the order of a Snapshot: an
	// *Object's own Keys order, and for a Go map its array-index names in
	// ascending numeric order, then the others in byte order.
	EnumerationOrder Order = iota
	// SortedOrder is the byte order of the names, which for valid UTF-8 is
	// code-point order: the order of the identity encoding (B3).
	SortedOrder
)

// A Visitor receives a value item by item: array elements in order, object
// members in the walk's Order. A container announces its length first;
// nothing marks its end.
type Visitor interface {
	Null()
	Bool(bool)
	Number(float64)
	String(string)
	BeginArray(n int)
	BeginObject(n int)
	Key(string)
}

// parsedVisitor is a Visitor that takes a value Parse built (a
// json.RawMessage parsed in place) whole rather than item by item. The
// value is fresh and already in EnumerationOrder.
type parsedVisitor interface {
	Visitor
	Parsed(v any)
}

// Walk applies the domain rules and limits of A3 to the decoded Go value v
// (Snapshot's domain) while feeding vis in order, without building a copy.
// Every limit is a per-node depth check or an order-independent total, so
// both orders accept and reject the same values. On error vis has seen a
// prefix of the walk and must be discarded.
func Walk(v any, lim Limits, order Order, vis Visitor) error {
	w := walker{meter: meter{lim: lim}, vis: vis, order: order}
	w.parsed, _ = vis.(parsedVisitor)
	return w.walk(v, 0)
}

// member is one object member, collected once so that sorting names never
// needs a map lookup afterwards.
type member struct {
	key   string
	value any
}

type walker struct {
	meter
	vis    Visitor
	parsed parsedVisitor // vis, when it takes parsed values whole
	order  Order
	// members holds one reusable member buffer per level: an object's
	// children sit one level deeper, so the buffer of its level is free
	// until it is done.
	members [][]member
}

func (w *walker) walk(v any, level int) error {
	if raw, ok := v.(json.RawMessage); ok {
		return w.raw(raw, level)
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
		cost, ok := checkedStringCost(x)
		if !ok {
			return errString
		}
		w.vis.String(x)
		return w.charge(cost)
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
			return errLimit // cheaper than sorting a hostile map first
		}
		return w.object(w.mapMembers(x, level), level)
	case *Object:
		if x == nil {
			return errDomain
		}
		return w.object(w.objectMembers(x, level), level)
	}
	f, err := goNumber(v)
	if err != nil {
		return err
	}
	w.vis.Number(f)
	return w.charge(numberCost)
}

// raw parses a json.RawMessage in place under the walk's budget. Raw text is
// held to A6.2 like Parse's: its own length, whitespace included, is checked
// against the byte limit before any work.
func (w *walker) raw(raw json.RawMessage, level int) error {
	if len(raw) > w.lim.Bytes {
		return errLimit
	}
	if !utf8.Valid(raw) {
		return errString
	}
	parsed, err := parseWith(string(raw), &w.meter, level)
	if err != nil {
		return err
	}
	if w.parsed != nil {
		w.parsed.Parsed(parsed)
	} else {
		Emit(parsed, w.order, w.vis)
	}
	return nil
}

// object visits members, already in the walk's order.
func (w *walker) object(members []member, level int) error {
	w.vis.BeginObject(len(members))
	for _, m := range members {
		if !w.enter(level + 1) {
			return errLimit
		}
		cost, ok := checkedStringCost(m.key)
		if !ok {
			return errString
		}
		w.vis.Key(m.key)
		if err := w.charge(cost); err != nil {
			return err
		}
		if err := w.walk(m.value, level+1); err != nil {
			return err
		}
	}
	return w.charge(containerCost(len(members)))
}

// scratch returns the empty member buffer of level.
func (w *walker) scratch(level int) []member {
	for len(w.members) <= level {
		w.members = append(w.members, nil)
	}
	return w.members[level][:0]
}

// mapMembers collects a Go map's members in the walk's order. A map has no
// member order, so names are sorted by bytes first (then array indexes are
// moved to the front for EnumerationOrder), which keeps outcomes
// independent of Go's randomized map iteration.
func (w *walker) mapMembers(x map[string]any, level int) []member {
	ms := w.scratch(level)
	for k, v := range x {
		ms = append(ms, member{k, v})
	}
	sortMembers(ms)
	if w.order == EnumerationOrder {
		enumerationOrder(ms, memberKey)
	}
	w.members[level] = ms
	return ms
}

// objectMembers collects an *Object's members in the walk's order.
func (w *walker) objectMembers(x *Object, level int) []member {
	ms := w.scratch(level)
	for _, k := range x.Keys {
		ms = append(ms, member{k, x.Members[k]})
	}
	if w.order == SortedOrder && !slices.IsSorted(x.Keys) {
		sortMembers(ms)
	}
	w.members[level] = ms
	return ms
}

func memberKey(m member) string { return m.key }

// sortMembers sorts members by the bytes of their names, which are
// distinct: insertion sort for the small objects that dominate JSON, where
// it beats a general sort, and slices.SortFunc beyond.
func sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(ms); i++ {
		m := ms[i]
		j := i
		for ; j > 0 && ms[j-1].key > m.key; j-- {
			ms[j] = ms[j-1]
		}
		ms[j] = m
	}
}

func (w *walker) charge(n int) error {
	if !w.add(n) {
		return errLimit
	}
	return nil
}

// Emit feeds vis a value of this package's domain (from Parse, Snapshot or
// a Walk's parsed raw text), already checked and metered, in order. It is
// the one canonical traversal behind Walk's raw text and the identity
// encoding. A value outside the domain is a broken internal invariant.
func Emit(v any, order Order, vis Visitor) {
	switch x := v.(type) {
	case nil:
		vis.Null()
	case bool:
		vis.Bool(x)
	case float64:
		vis.Number(x)
	case string:
		vis.String(x)
	case []any:
		vis.BeginArray(len(x))
		for _, item := range x {
			Emit(item, order, vis)
		}
	case *Object:
		keys := x.Keys
		if order == SortedOrder && !slices.IsSorted(keys) {
			keys = slices.Sorted(slices.Values(keys))
		}
		vis.BeginObject(len(keys))
		for _, k := range keys {
			vis.Key(k)
			Emit(x.Members[k], order, vis)
		}
	default:
		panic("purramcp: internal error: strictjson.Emit of a value outside the domain")
	}
}
