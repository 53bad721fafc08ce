package strictjson

import (
	"errors"
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
	d := &decodedCopier{meter: meter{lim: lim}}
	d.members = d.inline[:0]
	out, err := d.value(v, 0)
	if err == errOtherKind {
		return Snapshot(v, lim)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errOtherKind stops a decodedCopier at a kind only Snapshot's walk takes.
var errOtherKind = errors.New("strictjson: not a decoded JSON value")

// decodedCopier is one SnapshotDecoded copy. Its metering follows walker's
// step for step (enter, then the value's checks, then its charge; for an
// object each member's key before its value, in enumeration order), so the
// first limit or domain failure is the one Snapshot reports.
type decodedCopier struct {
	meter
	// members holds the members of every map being copied, innermost last.
	members []member
	// objects and names are the unused tails of the current chunks objects
	// and key lists are carved from.
	objects []Object
	names   []string
	// inline serves the member stack of most schemas without allocating.
	inline [32]member
}

// Chunk sizes of a decodedCopier: small, since a schema holds tens of
// objects and a chunk lives as long as any object cut from it.
const (
	objectChunk = 8
	nameChunk   = 32
)

func (d *decodedCopier) value(v any, level int) (any, error) {
	switch x := v.(type) {
	case nil:
		if !d.enter(level) {
			return nil, errLimit
		}
		return nil, d.charge(scalarCost)
	case bool:
		if !d.enter(level) {
			return nil, errLimit
		}
		return v, d.charge(scalarCost)
	case string:
		if !d.enter(level) {
			return nil, errLimit
		}
		cost, ok := checkedStringCost(x)
		if !ok {
			return nil, errString
		}
		return v, d.charge(cost)
	case float64:
		if !d.enter(level) {
			return nil, errLimit
		}
		f, ok := normalize(x)
		if !ok {
			return nil, errNumber
		}
		if err := d.charge(numberCost); err != nil {
			return nil, err
		}
		if f == 0 {
			return float64(0), nil // −0 is folded
		}
		return v, nil
	case []any:
		if !d.enter(level) {
			return nil, errLimit
		}
		out := make([]any, len(x))
		for i, item := range x {
			c, err := d.value(item, level+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, d.charge(containerCost(len(x)))
	case map[string]any:
		if !d.enter(level) {
			return nil, errLimit
		}
		if len(x) > d.lim.Nodes {
			return nil, errLimit // as Snapshot: before iterating a hostile map
		}
		return d.object(x, level)
	}
	return nil, errOtherKind
}

// object copies a map: its members in enumeration order (byte order, array
// indexes first), each key metered before its value.
func (d *decodedCopier) object(x map[string]any, level int) (any, error) {
	base := len(d.members)
	for k, v := range x {
		d.members = append(d.members, member{k, v})
	}
	ms := d.members[base:]
	slices.SortFunc(ms, compareMembers)
	enumerationOrder(ms, memberKey)
	obj, err := d.fill(d.newObject(len(ms)), ms, level)
	d.members = d.members[:base]
	if err != nil {
		return nil, err
	}
	return obj, d.charge(containerCost(len(ms)))
}

// fill copies the members ms, in order, into obj.
func (d *decodedCopier) fill(obj *Object, ms []member, level int) (*Object, error) {
	for i := range ms {
		m := &ms[i]
		if !d.enter(level + 1) {
			return nil, errLimit
		}
		cost, ok := checkedStringCost(m.key)
		if !ok {
			return nil, errString
		}
		if err := d.charge(cost); err != nil {
			return nil, err
		}
		c, err := d.value(m.value, level+1)
		if err != nil {
			return nil, err
		}
		obj.Keys = append(obj.Keys, m.key)
		obj.Members[m.key] = c
	}
	return obj, nil
}

// newObject returns an empty object with room for n members, the object
// and its key list carved from chunks shared by the snapshot, as
// Snapshot's builder does (the key list's capacity is exact).
func (d *decodedCopier) newObject(n int) *Object {
	if len(d.objects) == 0 {
		d.objects = make([]Object, objectChunk)
	}
	obj := &d.objects[0]
	d.objects = d.objects[1:]
	if n == 0 {
		*obj = Object{Keys: make([]string, 0), Members: make(map[string]any)}
		return obj
	}
	if len(d.names) < n {
		d.names = make([]string, max(n, nameChunk))
	}
	*obj = Object{Keys: d.names[:0:n], Members: make(map[string]any, n)}
	d.names = d.names[n:]
	return obj
}

func (d *decodedCopier) charge(n int) error {
	if !d.add(n) {
		return errLimit
	}
	return nil
}
