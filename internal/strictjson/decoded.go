package strictjson

import (
	"errors"
	"hash/maphash"
	"math"
	"slices"
)

// SnapshotDecoded returns what Snapshot(v, lim) returns, the same value or
// the same error, for every v. It is faster for the values a JSON decoder
// builds (nil, bool, float64, string, []any and map[string]any, such as a
// remote tool's schema): it copies them directly, without a Visitor, in
// the order and with the checks of Snapshot's walk. On meeting any other
// kind it starts over with Snapshot, after at most the work its limits
// allow, so its cost stays bounded by lim.
func SnapshotDecoded(v any, lim Limits) (any, error) {
	return SnapshotShared(v, lim, nil)
}

// SnapshotShared is SnapshotDecoded that takes, for each object of the
// copy, an equal object in already made and keeps each new one there, so
// that equal subtrees of the snapshots made with one Interner are one
// object (snapshots are immutable, so sharing them shares nothing mutable).
// The value is equal, member for member, to SnapshotDecoded's, and the
// error the same; a nil Interner shares nothing. An Interner is not safe
// for concurrent use.
func SnapshotShared(v any, lim Limits, shared *Interner) (any, error) {
	d := &decodedCopier{meter: meter{lim: lim}, shared: shared}
	if shared != nil { // its scratch and chunks, left over from earlier snapshots
		shared.found = 0
		d.members, d.values, d.hashes = shared.members[:0], shared.values[:0], shared.hashes[:0]
		d.objects, d.names, d.items = shared.objects, shared.names, shared.items
	}
	out, _, err := d.value(v, 0)
	// No reference to the input or the copy is kept in the stacks.
	clear(d.members[:d.membersHigh])
	clear(d.values[:d.valuesHigh])
	if shared != nil {
		shared.members, shared.values, shared.hashes = d.members[:0], d.values[:0], d.hashes[:0]
		shared.objects, shared.names, shared.items = d.objects, d.names, d.items
	}
	if err == errOtherKind {
		return Snapshot(v, lim)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// An Interner holds objects of earlier snapshots by a hash of their
// content, for SnapshotShared: at most its bound of them, after which it
// starts afresh. The zero value is not usable; see NewInterner.
type Interner struct {
	seed  maphash.Seed
	table map[uint64]*Object
	max   int
	// found counts the objects the last snapshot took from the table.
	found int
	// The scratch stacks and the unused tails of the chunks of the last
	// snapshot, for the next one (the chunks' objects are immutable once
	// made, so snapshots may share a chunk).
	members []member
	values  []any
	hashes  []uint64
	objects chunk[Object]
	names   chunk[string]
	items   chunk[any]
}

// NewInterner returns an empty Interner that holds at most max objects.
func NewInterner(max int) *Interner {
	return &Interner{seed: maphash.MakeSeed(), max: max}
}

// Found reports how many objects of the last SnapshotShared through in
// were held ones, taken instead of new copies: when none, every object of
// that snapshot is new.
func (in *Interner) Found() int { return in.found }

// find returns the held object with hash h whose members are ms with
// values vals (containers compared by identity: their own members were
// interned first), or nil.
func (in *Interner) find(h uint64, ms []member, vals []any) *Object {
	o := in.table[h]
	if o == nil || len(o.Keys) != len(ms) {
		return nil
	}
	for i := range ms {
		if o.Keys[i] != ms[i].key || !sameShallow(o.Values[i], vals[i]) {
			return nil
		}
	}
	return o
}

// keep holds o under h, unless another object already has h.
func (in *Interner) keep(h uint64, o *Object) {
	if in.table == nil || len(in.table) >= in.max {
		in.table = make(map[uint64]*Object, in.max/2) // grown at most once
	}
	if _, taken := in.table[h]; !taken {
		in.table[h] = o
	}
}

// sameShallow reports whether two snapshot values are equal, objects only
// when they are the same object.
func sameShallow(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y // −0 is folded in both
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameShallow(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// errOtherKind stops a decodedCopier at a kind only Snapshot's walk takes.
var errOtherKind = errors.New("strictjson: not a decoded JSON value")

// decodedCopier is one SnapshotShared copy. Its metering follows walker's
// step for step (enter, then the value's checks, then its charge; for an
// object each member's key before its value, in enumeration order), so the
// first limit or domain failure is the one Snapshot reports.
type decodedCopier struct {
	meter
	shared *Interner // nil: no hashes, no sharing
	// members and values hold the members of every map being copied and
	// their copied values, innermost last; membersHigh and valuesHigh are
	// the most either ever held, cleared once the copy is done.
	members                 []member
	values                  []any
	hashes                  []uint64 // the hash of each value, beside values
	membersHigh, valuesHigh int
	// made counts the objects made afresh so far (not taken from shared).
	made int
	// deepest is the deepest level entered within the object being copied
	// (object), for its measure.
	deepest int
	// The chunks objects, their key and value lists and arrays are carved
	// from.
	objects chunk[Object]
	names   chunk[string]
	items   chunk[any]
}

// Chunk sizes of a decodedCopier: small, since a schema holds tens of
// objects and a chunk lives as long as any object cut from it.
const (
	objectChunk = 8
	nameChunk   = 32
	itemChunk   = 32
)

// str hashes a string when sharing.
func (d *decodedCopier) str(s string) uint64 {
	if d.shared == nil {
		return 0
	}
	return maphash.String(d.shared.seed, s) ^ hashString
}

// value copies v at level and returns the copy with, when sharing, its hash.
func (d *decodedCopier) value(v any, level int) (any, uint64, error) {
	switch x := v.(type) {
	case nil:
		if !d.enterAt(level) {
			return nil, 0, errLimit
		}
		return nil, hashNull, d.charge(scalarCost)
	case bool:
		if !d.enterAt(level) {
			return nil, 0, errLimit
		}
		if x {
			return v, hashTrue, d.charge(scalarCost)
		}
		return v, hashFalse, d.charge(scalarCost)
	case string:
		if !d.enterAt(level) {
			return nil, 0, errLimit
		}
		cost, ok := checkedStringCost(x)
		if !ok {
			return nil, 0, errString
		}
		return v, d.str(x), d.charge(cost)
	case float64:
		if !d.enterAt(level) {
			return nil, 0, errLimit
		}
		f, ok := normalize(x)
		if !ok {
			return nil, 0, errNumber
		}
		if err := d.charge(numberCost); err != nil {
			return nil, 0, err
		}
		h := mix(math.Float64bits(f) ^ hashNumber)
		if f == 0 {
			return float64(0), h, nil // −0 is folded
		}
		return v, h, nil
	case []any:
		if !d.enterAt(level) {
			return nil, 0, errLimit
		}
		out := d.items.carve(len(x), itemChunk, itemChunk)[:len(x)]
		h := uint64(hashArray) + uint64(len(x))
		for i, item := range x {
			c, ch, err := d.value(item, level+1)
			if err != nil {
				return nil, 0, err
			}
			out[i] = c
			h = mix(h ^ ch)
		}
		return out, h, d.charge(containerCost(len(x)))
	case map[string]any:
		if !d.enterAt(level) {
			return nil, 0, errLimit
		}
		if len(x) > d.lim.Nodes {
			return nil, 0, errLimit // as Snapshot: before iterating a hostile map
		}
		return d.object(x, level)
	}
	return nil, 0, errOtherKind
}

// enterAt is meter.enter that also records the deepest level entered.
func (d *decodedCopier) enterAt(level int) bool {
	d.deepest = max(d.deepest, level)
	return d.enter(level)
}

// object copies a map: its members in enumeration order (byte order, array
// indexes first), each key metered before its value. The values are copied
// first, so that an equal object already interned is taken before a new
// one is made.
func (d *decodedCopier) object(x map[string]any, level int) (any, uint64, error) {
	start := subtree{nodes: d.nodes - 1, bytes: d.bytes} // the object itself is entered
	deepest := d.deepest
	d.deepest = level
	base := len(d.members)
	for k, v := range x {
		d.members = append(d.members, member{k, v})
	}
	ms := d.members[base:]
	d.membersHigh = max(d.membersHigh, len(d.members))
	sortMembers(ms)
	enumerationOrder(ms, memberKey)
	obj, h, err := d.copyMembers(ms, level, start)
	d.deepest = max(d.deepest, deepest)
	d.members = d.members[:base]
	if err != nil {
		return nil, 0, err
	}
	return obj, h, d.charge(containerCost(len(ms)))
}

// copyMembers copies the values of ms, in order, then returns the object
// they make: an interned equal one, or a new one, measured from start (the
// meter before the object was entered) and the container cost the caller
// charges next.
func (d *decodedCopier) copyMembers(ms []member, level int, start subtree) (*Object, uint64, error) {
	base, made := len(d.values), d.made
	defer func() { d.values, d.hashes = d.values[:base], d.hashes[:base] }()
	for i := range ms {
		m := &ms[i]
		if !d.enterAt(level + 1) {
			return nil, 0, errLimit
		}
		cost, ok := checkedStringCost(m.key)
		if !ok {
			return nil, 0, errString
		}
		if err := d.charge(cost); err != nil {
			return nil, 0, err
		}
		c, ch, err := d.value(m.value, level+1)
		if err != nil {
			return nil, 0, err
		}
		d.values, d.hashes = append(d.values, c), append(d.hashes, ch)
		d.valuesHigh = max(d.valuesHigh, len(d.values))
	}
	vals := d.values[base:]
	// An object below this one made afresh is held nowhere yet, so no held
	// object can equal this one: it is neither looked up nor kept (an
	// equal object met later, its members then held, is kept instead), and
	// its hash, which only a lookup or a parent's lookup would use, is
	// never computed.
	share := d.shared != nil && d.made == made
	var h uint64
	if share {
		h = uint64(hashObject) + uint64(len(ms))
		for i, ch := range d.hashes[base:] {
			h = mix(mix(h^d.str(ms[i].key)) ^ ch)
		}
		if o := d.shared.find(h, ms, vals); o != nil {
			d.shared.found++
			return o, h, nil
		}
	}
	obj := d.newObject(len(ms))
	d.made++
	for i := range ms {
		obj.Keys = append(obj.Keys, ms[i].key)
	}
	obj.Values = append(obj.Values, vals...)
	obj.measure = subtree{nodes: d.nodes - start.nodes, bytes: d.bytes - start.bytes + containerCost(len(ms)),
		depth: d.deepest - level}
	obj.seal()
	if share {
		d.shared.keep(h, obj)
	}
	return obj, h, nil
}

// sortMembers orders ms, whose names are distinct, by the bytes of their
// names: by insertion for the few members of most objects, else by
// slices.SortFunc.
func sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortFunc(ms, compareMembers)
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].key < ms[j-1].key; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// newObject returns an empty object with room for n members, the object
// and its key and value lists carved from chunks shared by the snapshot,
// as Snapshot's builder does (the lists' capacities are exact).
func (d *decodedCopier) newObject(n int) *Object {
	obj := d.objects.next(objectChunk, objectChunk)
	*obj = Object{Keys: d.names.carve(n, nameChunk, nameChunk), Values: d.items.carve(n, itemChunk, itemChunk)}
	return obj
}

func (d *decodedCopier) charge(n int) error {
	if !d.add(n) {
		return errLimit
	}
	return nil
}
