package purramcp

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
)

// The values of [Change.Kind]. Kind stays a plain string (a stored or
// logged change compares equal to its JSON text); compare it with these.
const (
	ChangeAdded   = "added"   // the local name is only in the new snapshot
	ChangeRemoved = "removed" // the local name is only in the old snapshot
	ChangeChanged = "changed" // in both, with the Fields that differ
)

// A Change is one difference [DiffSnapshots] found between two snapshots.
type Change struct {
	// LocalName is the entry's local name, or "" for the snapshot's own
	// serverId and protocolVersion.
	LocalName string
	// Kind is ChangeAdded, ChangeRemoved or ChangeChanged.
	Kind string
	// Fields names, for "changed", the snapshot JSON fields that differ,
	// sorted: of an entry remoteName, description, inputSchema,
	// outputSchema, policy and concurrencySafe; of the snapshot serverId and
	// protocolVersion. It is nil for "added" and "removed".
	Fields []string
}

// DiffSnapshots reports what changed from old to new, for a host reviewing a
// new catalog before approving it: one Change per local name whose entry
// was added, removed or changed, sorted by local name, preceded by a
// Change{LocalName: "", Kind: "changed"} when serverId or protocolVersion
// differ. It returns nil when nothing differs. revisionDigest and
// schemaVersion are not compared: the digest follows from what is.
//
// Schemas compare as JSON values: member order is ignored and numbers
// compare by value, whatever their Go type (float64, json.Number, integer
// types), so a snapshot stored as JSON and decoded again, with or without
// UseNumber, equals the original. A nil output schema (none) differs from
// an empty one. When a snapshot lists a local name twice (only a snapshot
// edited by hand can), its first entry counts. Neither snapshot is modified.
func DiffSnapshots(old, new Snapshot) []Change {
	var changes []Change
	var header []string
	if old.ProtocolVersion != new.ProtocolVersion {
		header = append(header, "protocolVersion")
	}
	if old.ServerID != new.ServerID {
		header = append(header, "serverId")
	}
	if header != nil {
		changes = append(changes, Change{Kind: ChangeChanged, Fields: header})
	}
	before, after := entriesByName(old.Entries), entriesByName(new.Entries)
	names := make([]string, 0, len(before)+len(after))
	for name := range before {
		names = append(names, name)
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		was, hadIt := before[name]
		is, hasIt := after[name]
		switch {
		case !hadIt:
			changes = append(changes, Change{LocalName: name, Kind: ChangeAdded})
		case !hasIt:
			changes = append(changes, Change{LocalName: name, Kind: ChangeRemoved})
		default:
			if fields := entryFields(was, is); fields != nil {
				changes = append(changes, Change{LocalName: name, Kind: ChangeChanged, Fields: fields})
			}
		}
	}
	return changes
}

// entriesByName indexes entries by local name, the first one winning.
func entriesByName(entries []ToolEntry) map[string]*ToolEntry {
	m := make(map[string]*ToolEntry, len(entries))
	for i := range entries {
		if _, ok := m[entries[i].LocalName]; !ok {
			m[entries[i].LocalName] = &entries[i]
		}
	}
	return m
}

// entryFields names the JSON fields that differ between two entries, sorted,
// or nil.
func entryFields(a, b *ToolEntry) []string {
	var fields []string
	for _, f := range []struct {
		name string
		same bool
	}{ // sorted by name
		{"concurrencySafe", a.ConcurrencySafe == b.ConcurrencySafe},
		{"description", a.Description == b.Description},
		{"inputSchema", objectsEqual(a.InputSchema, b.InputSchema)},
		{"outputSchema", objectsEqual(a.OutputSchema, b.OutputSchema)},
		{"policy", a.Policy == b.Policy},
		{"remoteName", a.RemoteName == b.RemoteName},
	} {
		if !f.same {
			fields = append(fields, f.name)
		}
	}
	return fields
}

// objectsEqual compares two JSON objects as values; nil (null) equals only nil.
func objectsEqual(a, b map[string]any) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return jsonEqual(a, b)
}

// jsonEqual compares two decoded JSON values: objects regardless of member
// order, arrays element by element, numbers by value. Values outside the
// JSON domain compare with reflect.DeepEqual.
func jsonEqual(a, b any) bool {
	if x, ok := jsonNumber(a); ok {
		y, ok := jsonNumber(b)
		return ok && x.Cmp(y) == 0
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && (a == nil) == (b == nil) && slices.EqualFunc(a, b, jsonEqual)
	case nil, bool, string:
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// jsonNumber is v's value when v is a number: the float64 a JSON decoder
// would give for it (snapshot numbers are IEEE doubles, as in JavaScript),
// exactly for integer types. NaN, infinities and a json.Number that does not
// parse as a finite number are not numbers here.
func jsonNumber(v any) (*big.Float, bool) {
	var d float64
	switch n := v.(type) {
	case float64:
		d = n
	case float32:
		d = float64(n)
	case json.Number:
		var err error
		if d, err = strconv.ParseFloat(string(n), 64); err != nil {
			return nil, false
		}
	case int:
		return new(big.Float).SetInt64(int64(n)), true
	case int8:
		return new(big.Float).SetInt64(int64(n)), true
	case int16:
		return new(big.Float).SetInt64(int64(n)), true
	case int32:
		return new(big.Float).SetInt64(int64(n)), true
	case int64:
		return new(big.Float).SetInt64(n), true
	case uint:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint8:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint16:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint32:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint64:
		return new(big.Float).SetUint64(n), true
	default:
		return nil, false
	}
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return nil, false
	}
	return new(big.Float).SetFloat64(d), true
}
