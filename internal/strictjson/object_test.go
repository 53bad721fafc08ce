package strictjson

import (
	"fmt"
	"strings"
	"testing"
)

// TestObject_Lookup: Get and IndexOf find every member and nothing else,
// for objects scanned (up to scanMembers members) and indexed (more), made
// by NewObject, Parse (whose duplicate index becomes the object's unless
// array-index names reorder the members), Snapshot and SnapshotShared.
func TestObject_Lookup(t *testing.T) {
	for _, n := range []int{0, 1, scanMembers, scanMembers + 1, smallObject, smallObject + 1, 40} {
		for _, withIndexNames := range []bool{false, true} {
			keys := make([]string, n)
			values := make([]any, n)
			m := make(map[string]any, n)
			var text strings.Builder
			text.WriteByte('{')
			for i := range keys {
				keys[i] = fmt.Sprintf("k%03d", n-i) // document order is not byte order
				if withIndexNames && i%5 == 0 {
					keys[i] = fmt.Sprint(n - i) // an array index: enumerated first
				}
				values[i] = float64(i)
				m[keys[i]] = values[i]
				if i > 0 {
					text.WriteByte(',')
				}
				fmt.Fprintf(&text, "%q:%d", keys[i], i)
			}
			text.WriteByte('}')
			parsed, err := Parse(text.String(), roomy)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := Snapshot(m, roomy)
			if err != nil {
				t.Fatal(err)
			}
			shared, err := SnapshotShared(m, roomy, NewInterner(64))
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range map[string]any{"parsed": parsed, "snapshot": snap, "shared": shared} {
				o := v.(*Object)
				if o.Len() != n || len(o.Values) != n || (o.index != nil) != (n > scanMembers) {
					t.Fatalf("%s of %d members: Len %d, %d values, indexed %v", name, n, o.Len(), len(o.Values), o.index != nil)
				}
				for i, k := range o.Keys {
					if got, ok := o.Get(k); !ok || got != m[k] || o.IndexOf(k) != i || o.Values[i] != m[k] {
						t.Errorf("%s of %d members: %q = %v, %v at %d; want %v at %d", name, n, k, got, ok, o.IndexOf(k), m[k], i)
					}
				}
				for _, k := range []string{"", "k", "k000", "k999", "x"} {
					if _, ok := m[k]; ok {
						continue
					}
					if _, found := o.Get(k); found || o.IndexOf(k) != -1 {
						t.Errorf("%s of %d members has %q", name, n, k)
					}
				}
			}
			made := NewObject(keys, values)
			for i, k := range keys {
				if got, ok := made.Get(k); !ok || got != values[i] || made.IndexOf(k) != i {
					t.Errorf("NewObject of %d members: %q = %v, %v", n, k, got, ok)
				}
			}
		}
	}
}
