package strictjson

import "slices"

// AppendKeys appends the names of m to dst in JavaScript enumeration order
// (A3.6), the order Snapshot gives a Go map's members: array-index names in
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
// gives a Go map's members (A3.6): array-index names in ascending numeric
// order, then the others in byte order.
func SortKeys(names []string) {
	slices.Sort(names)
	enumerationOrder(names, func(k string) string { return k })
}
