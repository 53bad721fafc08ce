package purramcp

import (
	"slices"
	"strings"
)

// Merge returns the registrations of every catalog, for a host that binds
// tools from several servers: fresh values as Registrations gives them,
// sorted by name. Two registrations with the same name, from one catalog
// given twice or from two servers, fail [ErrNameConflict] (a server cannot
// shadow another's tool); a nil catalog fails [ErrBindingInvalid], which is
// checked first. No catalog gives an empty slice. Merge checks no monitor:
// a registration of a stale catalog fails [ErrCatalogStale] when run.
func Merge(catalogs ...*Catalog) ([]ToolDefinition, error) {
	n := 0
	for _, c := range catalogs {
		if c == nil {
			return nil, fail(CodeBindingInvalid)
		}
		n += len(c.tools)
	}
	defs := make([]ToolDefinition, 0, n)
	for _, c := range catalogs {
		defs = append(defs, c.Registrations()...)
	}
	slices.SortStableFunc(defs, func(a, b ToolDefinition) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(defs); i++ {
		if defs[i].Name == defs[i-1].Name {
			return nil, fail(CodeNameConflict)
		}
	}
	return defs, nil
}
