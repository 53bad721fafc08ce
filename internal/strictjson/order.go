package strictjson

import (
	"slices"
	"strings"
)

// AppendKeys appends the names of m to dst in JavaScript enumeration order
// (as Object.keys gives it), the order Snapshot gives a Go map's members: array-index names in
// ascending numeric order, then the others in byte order. It allocates only
// when dst must grow or m has array-index names.
func AppendKeys(dst []string, m map[string]any) []string {
	base := len(dst)
	for k := range m {
		dst = append(dst, k)
	}
	SortKeys(dst[base:])
	return dst
}

// SortKeys sorts distinct member names in place into the order Snapshot
// gives a Go map's members: array-index names in ascending numeric
// order, then the others in byte order.
func SortKeys(names []string) {
	slices.Sort(names)
	enumerationOrder(names, func(k string) string { return k })
}

// SortKeysFunc is SortKeys for items named by name, distinct names.
func SortKeysFunc[T any](items []T, name func(T) string) {
	if len(items) <= 16 { // a schema's usual properties: insertion sort
		for i := 1; i < len(items); i++ {
			for j := i; j > 0 && name(items[j]) < name(items[j-1]); j-- {
				items[j], items[j-1] = items[j-1], items[j]
			}
		}
	} else {
		slices.SortFunc(items, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	}
	enumerationOrder(items, name)
}
