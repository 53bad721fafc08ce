package strictjson

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Order is the order in which a walk visits an object's members.
type Order uint8

const (
	// EnumerationOrder is JavaScript's, the order of a Snapshot: an
	// *Object's own Keys order, and for a Go map its array-index names in
	// ascending numeric order, then the others in byte order.
	EnumerationOrder Order = iota
	// SortedOrder is the byte order of the names, which for valid UTF-8 is
	// code-point order: the order of the identity encoding.
	SortedOrder
	// AnyOrder is an *Object's own Keys order and a Go map's iteration
	// order, for a visitor that only measures: a walk in any order accepts
	// and rejects the same values, though which failure it reports first may
	// differ.
	AnyOrder
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

// A memoVisitor is a Visitor that can write a name again from what it wrote
// the first time: the walk calls MemoKey instead of Key for the names of a
// Go map whose names repeat those of the last map ordered at its level (see
// reuse), as sibling records do, with one memo per such name. Only MemoKey
// writes a memo; it is empty the first time and whenever the level's names
// change, and holds no reference to the value walked.
type memoVisitor interface {
	Visitor
	MemoKey(k string, memo *[]byte)
}

// valueVisitor is a Visitor that takes, whole, values it may keep as they
// are: a value Parse built from a json.RawMessage (fresh, and already in
// EnumerationOrder), and an input string or non-zero float64, which the
// rules leave unchanged, still in the interface it came in.
type valueVisitor interface {
	Visitor
	Value(v any)
}

// Walk applies Snapshot's domain rules and limits to the decoded Go value v
// (Snapshot's domain) while feeding vis in order, without building a copy.
// Every limit is a per-node depth check or an order-independent total, so
// both orders accept and reject the same values. On error vis has seen a
// prefix of the walk and must be discarded.
func Walk(v any, lim Limits, order Order, vis Visitor) error {
	b := new(bufferedWalker)
	b.stack, b.keys, b.idx = b.inlineStack[:0], b.inlineKeys[:0], b.inlineIdx[:0]
	return b.run(v, lim, order, vis)
}

// A bufferedWalker is a walker with first buffers for its stacks, which
// serve small values without allocating.
type bufferedWalker struct {
	walker
	inlineStack [16]member
	inlineKeys  [16]uint64
	inlineIdx   [64]uint8
}

// run walks v with w, whose meter, visitor and order must be zero.
func (w *walker) run(v any, lim Limits, order Order, vis Visitor) error {
	w.meter, w.vis, w.order = meter{lim: lim}, vis, order
	w.value, _ = vis.(valueVisitor)
	w.memo, _ = vis.(memoVisitor)
	return w.walk(v, 0)
}

// knownName is a name of the last Go map ordered at a level (see reuse):
// valid UTF-8, with its cost and the visitor's memo of it.
type knownName struct {
	key  string
	cost int
	memo []byte
}

// member is one object member, collected once so that sorting names never
// needs a map lookup afterwards.
type member struct {
	key   string
	value any
}

type walker struct {
	meter
	vis   Visitor
	value valueVisitor // vis, when it takes whole values
	memo  memoVisitor  // vis, when it keeps memos of names
	order Order
	// stack holds the members of every object being walked, innermost
	// last: an object's members stay in place while its children push and
	// pop theirs above them.
	stack []member
	// idx holds the member order of every object being walked whose
	// members were sorted (see sort), innermost last, like stack.
	idx []uint8
	// keys is the sort buffer; sorting never overlaps a child's walk.
	keys []uint64
	// names holds, per level, the names of the last Go map ordered at that
	// level, in that order (see reuse).
	names [][]knownName
	// foreign records that the walk met a value not in decoded-Go form:
	// an *Object, a json.RawMessage, a number of another kind than float64,
	// or −0 (Shared).
	foreign bool
}

func (w *walker) walk(v any, level int) error {
	if raw, ok := v.(json.RawMessage); ok {
		w.foreign = true
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
	case float64: // the number of a decoded value: goNumber's rules, inline
		f, ok := normalize(x)
		if !ok {
			return errNumber
		}
		if f == 0 && math.Signbit(x) {
			w.foreign = true // −0, which is folded
		}
		if w.value != nil && f != 0 {
			w.value.Value(v) // −0 would be folded, so zeros take Number
		} else {
			w.vis.Number(f)
		}
		return w.charge(numberCost)
	case string:
		cost, ok := checkedStringCost(x)
		if !ok {
			return errString
		}
		if w.value != nil {
			w.value.Value(v)
		} else {
			w.vis.String(x)
		}
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
		if len(x) <= smallMap {
			return w.smallMapObject(x, level)
		}
		base, idx := len(w.stack), len(w.idx)
		ms, order, known := w.mapMembers(x, level)
		err := w.object(ms, order, known, level)
		w.stack, w.idx = w.stack[:base], w.idx[:idx]
		return err
	case *Object:
		if x == nil {
			return errDomain
		}
		w.foreign = true
		if x.measure.nodes > 0 && w.value == nil {
			return w.checked(x, level)
		}
		base, idx := len(w.stack), len(w.idx)
		ms, order := w.objectMembers(x)
		err := w.object(ms, order, nil, level)
		w.stack, w.idx = w.stack[:base], w.idx[:idx]
		return err
	}
	f, err := goNumber(v) // a number of another kind than float64, or none
	if err != nil {
		return err
	}
	w.foreign = true
	w.vis.Number(f)
	return w.charge(numberCost)
}

// checked walks an object SnapshotDecoded made, whose subtree holds only
// values it checked: the walk charges the subtree's measure at once and
// emits it unchecked (a visitor that only measures sees nothing). Every
// limit is a running total or a per-node depth, so the walk fails here
// exactly when a walk node by node would fail somewhere in the subtree,
// and with the same error. A valueVisitor, which may keep the values it is
// given, is fed node by node instead.
func (w *walker) checked(x *Object, level int) error {
	m := x.measure
	w.nodes += m.nodes - 1 // the object itself is entered
	if w.nodes > w.lim.Nodes || level+m.depth > w.lim.Depth || !w.add(m.bytes) {
		return errLimit
	}
	if _, measuring := w.vis.(discard); !measuring {
		Emit(x, w.order, w.vis)
	}
	return nil
}

// raw parses a json.RawMessage in place under the walk's budget. Raw text is
// held to the same bound as Parse's text: its own length, whitespace included, is checked
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
	if w.value != nil {
		w.value.Value(parsed)
	} else {
		Emit(parsed, w.order, w.vis)
	}
	return nil
}

// object visits an object's members in the walk's order: ms[order[i]]
// for each i, or ms as it is when order is nil. known, when not nil, holds
// the names of a reused map (see reuse) in the members' order, checked when
// they were remembered: their costs are charged without checking them
// again, and a memoVisitor gets their memos. Either way each member is
// entered, its name charged, then its value walked.
func (w *walker) object(ms []member, order []uint8, known []knownName, level int) error {
	w.vis.BeginObject(len(ms))
	for i := range ms {
		m := &ms[i]
		if order != nil {
			m = &ms[order[i]]
		}
		if !w.enter(level + 1) {
			return errLimit
		}
		var cost int
		if known != nil {
			n := &known[i]
			cost = n.cost
			if w.memo != nil {
				w.memo.MemoKey(n.key, &n.memo)
			} else {
				w.vis.Key(n.key)
			}
		} else {
			c, ok := checkedStringCost(m.key)
			if !ok {
				return errString
			}
			cost = c
			w.vis.Key(m.key)
		}
		if err := w.charge(cost); err != nil {
			return err
		}
		if err := w.walk(m.value, level+1); err != nil {
			return err
		}
	}
	return w.charge(containerCost(len(ms)))
}

// smallMap is the number of members up to which a Go map's members are
// collected in an array on the goroutine's stack (smallMapObject) instead
// of on w.stack.
const smallMap = 16

// smallMapObject walks a Go map of at most smallMap members as the general
// path (mapMembers, then object) does, but collects the
// members in an array in its own frame: a pointer stored to the goroutine's
// stack needs no GC write barrier, and during a GC cycle the barriers of a
// heap stack cost more than the rest of the walk. The stores stay in this
// function so that the compiler sees where they go.
func (w *walker) smallMapObject(x map[string]any, level int) error {
	var buf [smallMap]member
	ms := buf[:len(x)]
	if known := w.known(x, level); known != nil {
		hit := true
		for i := range known {
			v, ok := x[known[i].key]
			if !ok {
				hit = false
				break
			}
			ms[i] = member{known[i].key, v}
		}
		if hit {
			return w.object(ms, nil, known, level)
		}
	}
	i := 0
	for k, v := range x {
		ms[i] = member{k, v}
		i++
	}
	base := len(w.idx)
	err := w.object(ms, w.orderMembers(ms, level), nil, level)
	w.idx = w.idx[:base]
	return err
}

// mapMembers pushes a Go map's members on the stack and returns them with
// their order (orderMembers). When x has the names of the last map ordered
// at this level, it returns them in that order with those names (see
// reuse) instead.
func (w *walker) mapMembers(x map[string]any, level int) ([]member, []uint8, []knownName) {
	if ms, known, ok := w.reuse(x, level); ok {
		return ms, nil, known
	}
	base := len(w.stack)
	for k, v := range x {
		w.stack = append(w.stack, member{k, v})
	}
	ms := w.stack[base:]
	return ms, w.orderMembers(ms, level), nil
}

// orderMembers returns the walk's order of a Go map's members ms, as
// indexes into ms, or nil for ms as it is. AnyOrder takes the iteration
// order. A map has no member order, so otherwise names are sorted by bytes
// first (then array indexes are moved to the front for EnumerationOrder),
// which keeps outcomes independent of Go's randomized map iteration; the
// names are then remembered for the map's siblings (see reuse).
func (w *walker) orderMembers(ms []member, level int) []uint8 {
	if w.order == AnyOrder {
		return nil
	}
	order := w.sort(ms)
	if w.order == EnumerationOrder {
		if order == nil {
			enumerationOrder(ms, memberKey)
		} else {
			enumerationOrder(order, func(i uint8) string { return ms[i].key })
		}
	}
	if len(ms) >= 3 && level > 0 { // a root map has no siblings
		w.remember(ms, order, level)
	}
	return order
}

// known returns the names of the last map ordered at level when x, a map
// walked in order, has as many members: the names reuse tries.
func (w *walker) known(x map[string]any, level int) []knownName {
	if w.order == AnyOrder || len(x) < 3 || level >= len(w.names) || len(x) != len(w.names[level]) {
		return nil
	}
	return w.names[level]
}

// remember keeps the names of a map's members, in their order and with
// their costs, for reuse at level; it keeps none when a name is not valid
// UTF-8 (the walk then fails on it). Memos are reset, their room kept.
func (w *walker) remember(ms []member, order []uint8, level int) {
	if len(w.names) <= level {
		if cap(w.names) <= level {
			w.names = slices.Grow(w.names, max(level+1, 8)-len(w.names))
		}
		w.names = w.names[:level+1]
	}
	names := w.names[level]
	w.names[level] = names[:0]
	names = slices.Grow(names[:0], len(ms))[:len(ms)]
	for i := range ms {
		j := i
		if order != nil {
			j = int(order[i])
		}
		cost, ok := checkedStringCost(ms[j].key)
		if !ok {
			return
		}
		n := &names[i]
		n.key, n.cost, n.memo = ms[j].key, cost, n.memo[:0]
	}
	w.names[level] = names
}

// reuse pushes and returns x's members in order without iterating or
// sorting when x has exactly the names of the last map ordered at this
// level, as sibling records of an array usually do: x has as many members,
// and every one of those names, so its names are the same set and their
// order is the same. It returns those names too, whose keys the members
// share. A miss costs at most one lookup per member and leaves the stack as
// it was.
func (w *walker) reuse(x map[string]any, level int) ([]member, []knownName, bool) {
	known := w.known(x, level)
	if known == nil {
		return nil, nil, false
	}
	base := len(w.stack)
	for i := range known {
		k := known[i].key
		v, ok := x[k]
		if !ok {
			w.stack = w.stack[:base]
			return nil, nil, false
		}
		w.stack = append(w.stack, member{k, v})
	}
	return w.stack[base:], known, true
}

// objectMembers pushes an *Object's members on the stack and returns them
// with their order for the walk.
func (w *walker) objectMembers(x *Object) ([]member, []uint8) {
	base := len(w.stack)
	for i, k := range x.Keys {
		w.stack = append(w.stack, member{k, x.Values[i]})
	}
	ms := w.stack[base:]
	if w.order == SortedOrder && !slices.IsSorted(x.Keys) {
		return ms, w.sort(ms)
	}
	return ms, nil
}

func memberKey(m member) string { return m.key }

func compareMembers(a, b member) int { return strings.Compare(a.key, b.key) }

// sort orders ms, whose names are distinct, by the bytes of their names.
// Up to 255 members (nearly every object) it sorts integers instead of
// strings: the first seven bytes of each name, zero-padded, above its index;
// only runs of names with equal seven-byte prefixes are then compared
// whole. It returns the order as indexes into ms, pushed on w.idx, and
// leaves ms in place; beyond 255 members it sorts ms itself and returns nil.
func (w *walker) sort(ms []member) []uint8 {
	n := len(ms)
	if n < 2 {
		return nil
	}
	if n > 255 {
		slices.SortFunc(ms, compareMembers)
		return nil
	}
	keys := w.keys[:0]
	for i, m := range ms {
		keys = append(keys, namePrefix(m.key)<<8|uint64(i))
	}
	w.keys = keys
	slices.Sort(keys)
	base := len(w.idx)
	for _, k := range keys {
		w.idx = append(w.idx, uint8(k))
	}
	order := w.idx[base:]
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[j]>>8 == keys[i]>>8 {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(order[i:j], func(a, b uint8) int { return strings.Compare(ms[a].key, ms[b].key) })
		}
		i = j
	}
	return order
}

// namePrefix returns the first seven bytes of k as a big-endian integer,
// zero-padded: prefixes order like the names they start, and equal
// prefixes leave the order to the rest of the names.
func namePrefix(k string) uint64 {
	if len(k) >= 8 { // one load
		return (uint64(k[0])<<56 | uint64(k[1])<<48 | uint64(k[2])<<40 | uint64(k[3])<<32 |
			uint64(k[4])<<24 | uint64(k[5])<<16 | uint64(k[6])<<8 | uint64(k[7])) >> 8
	}
	var p uint64
	for i := 0; i < len(k); i++ {
		p |= uint64(k[i]) << (48 - 8*i)
	}
	return p
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
		vis.BeginObject(len(x.Keys))
		if order != SortedOrder || slices.IsSorted(x.Keys) {
			for i, k := range x.Keys {
				vis.Key(k)
				Emit(x.Values[i], order, vis)
			}
			return
		}
		for _, k := range slices.Sorted(slices.Values(x.Keys)) {
			v, _ := x.Get(k)
			vis.Key(k)
			Emit(v, order, vis)
		}
	default:
		panic("purramcp: internal error: strictjson.Emit of a value outside the domain")
	}
}
