package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"purra.dev/purramcp/internal/strictjson"
)

// The compiler reads each node's keywords from slots filled in one pass
// over its names, carves nodes from chunks and pushes path segments
// unjoined; refCompiler (compile_reference_test.go) is the compiler as it
// was. These tests hold the two to the same outcome on random schemas:
// the same SchemaError (path and keyword) or equal compiled trees.

// keywordIndex must agree with the sorted whitelist.
func TestKeywordIndex(t *testing.T) {
	for i, k := range Keywords {
		if got := keywordIndex(k); got != i {
			t.Errorf("keywordIndex(%q) = %d, want %d", k, got, i)
		}
	}
	for _, k := range []string{"", "Type", "types", "$ref", "pattern", "format", "propertie"} {
		if got := keywordIndex(k); got != -1 {
			t.Errorf("keywordIndex(%q) = %d, want -1", k, got)
		}
	}
	if kwCount != len(Keywords) || kwCount > 32 {
		t.Fatalf("kwCount = %d for %d keywords", kwCount, len(Keywords))
	}
}

// schemaGen builds random schema-shaped values: mostly the profile's
// keywords with values of the right kind, sometimes a wrong kind, an
// unknown or extended keyword, an annotation, a $ref or $defs.
type schemaGen struct{ r *rand.Rand }

var genKeys = append(append([]string{}, Keywords...),
	"format", "default", "examples", "$comment", "deprecated", "readOnly",
	"pattern", "exclusiveMinimum", "exclusiveMaximum", "propertyNames", "$ref", "$defs", "unknown", "0", "12")

func (g schemaGen) scalar() any {
	switch g.r.IntN(9) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return float64(g.r.IntN(20))
	case 3:
		return -float64(g.r.IntN(5)) - 0.5
	case 4:
		return []any{"a", float64(g.r.IntN(3))}
	case 5:
		return map[string]any{"k": "v"}
	case 6:
		return []any{}
	case 7:
		return "string"
	}
	return "object"
}

func (g schemaGen) value(key string, depth int) any {
	if g.r.IntN(6) == 0 {
		return g.scalar() // often the wrong kind
	}
	switch key {
	case "type":
		names := []string{"array", "boolean", "integer", "null", "number", "object", "string", "bogus"}
		if g.r.IntN(3) == 0 {
			list := []any{}
			for range g.r.IntN(4) {
				list = append(list, names[g.r.IntN(len(names))])
			}
			return list
		}
		return names[g.r.IntN(len(names)-1)]
	case "properties", "$defs":
		props := map[string]any{}
		for range g.r.IntN(5) {
			props[fmt.Sprintf("p%d", g.r.IntN(8))] = g.schema(depth + 1)
		}
		return props
	case "items", "propertyNames", "additionalProperties":
		if key == "additionalProperties" && g.r.IntN(2) == 0 {
			return g.r.IntN(2) == 0
		}
		return g.schema(depth + 1)
	case "anyOf", "oneOf":
		list := []any{}
		for range g.r.IntN(4) {
			list = append(list, g.schema(depth+1))
		}
		return list
	case "required":
		list := []any{}
		for range g.r.IntN(5) {
			list = append(list, fmt.Sprintf("p%d", g.r.IntN(6)))
		}
		if g.r.IntN(10) == 0 {
			list = append(list, "")
		}
		if g.r.IntN(12) == 0 { // past smallRequired
			for i := range 20 {
				list = append(list, fmt.Sprintf("q%d", i%(18+g.r.IntN(4))))
			}
		}
		return list
	case "enum":
		list := []any{}
		for range g.r.IntN(4) {
			list = append(list, g.scalar())
		}
		return list
	case "minLength", "maxLength", "minItems", "maxItems":
		return float64(g.r.IntN(6))
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return float64(g.r.IntN(10)) - 3
	case "uniqueItems", "deprecated", "readOnly":
		return g.r.IntN(2) == 0
	case "title", "description", "format", "$comment":
		return "text"
	case "pattern":
		return []string{"^a", "b+", "(", "[0-9]{2}"}[g.r.IntN(4)]
	case "$ref":
		return []string{"#/$defs/p1", "#/$defs/p2", "#/$defs/nope", "other"}[g.r.IntN(4)]
	}
	return g.scalar()
}

func (g schemaGen) schema(depth int) any {
	if depth > 4 || g.r.IntN(20) == 0 {
		return g.scalar()
	}
	obj := map[string]any{}
	for range g.r.IntN(6) {
		k := genKeys[g.r.IntN(len(genKeys))]
		obj[k] = g.value(k, depth)
	}
	return obj
}

func (g schemaGen) root() map[string]any {
	root, _ := g.schema(0).(map[string]any)
	if root == nil {
		root = map[string]any{}
	}
	if g.r.IntN(10) > 0 {
		root["type"] = "object"
	}
	return root
}

// sameCompile compiles root with both compilers under opts and reports
// the first difference.
func sameCompile(root any, opts Options) error {
	got, gotErr := CompileWith(root, opts)
	want, wantErr := referenceCompileWith(root, opts)
	if (gotErr == nil) != (wantErr == nil) {
		return fmt.Errorf("error %v, reference %v", gotErr, wantErr)
	}
	if gotErr != nil {
		var g, w *SchemaError
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) {
			if gotErr.Error() != wantErr.Error() {
				return fmt.Errorf("error %v, reference %v", gotErr, wantErr)
			}
			return nil
		}
		if *g != *w {
			return fmt.Errorf("error %+v, reference %+v", *g, *w)
		}
		return nil
	}
	indexMapOrder(want.root, map[*node]bool{})
	if !reflect.DeepEqual(got.root, want.root) {
		return fmt.Errorf("compiled trees differ")
	}
	if !reflect.DeepEqual(got.inlined, want.inlined) {
		return fmt.Errorf("inlined schemas differ")
	}
	return nil
}

// indexMapOrder sets mapProps and the required index, which the reference
// compiler predates, on every node below n: its properties in a Go map's
// member order, and the index derived from them and required.
func indexMapOrder(n *node, seen map[*node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	if n.properties != nil {
		names := slices.Collect(maps.Keys(n.properties))
		strictjson.SortKeys(names)
		for _, name := range names {
			n.mapProps = append(n.mapProps, mapProp{name, n.properties[name]})
		}
	}
	n.indexRequired()
	for _, child := range n.properties {
		indexMapOrder(child, seen)
	}
	indexMapOrder(n.items, seen)
	for _, b := range append(slices.Clip(n.anyOf), n.oneOf...) {
		indexMapOrder(b, seen)
	}
	if n.ext != nil {
		indexMapOrder(n.ext.propertyNames, seen)
		indexMapOrder(n.ext.additional, seen)
	}
}

func TestCompileDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	g := schemaGen{r}
	lim := strictjson.Limits{Depth: 32, Nodes: 4096, Bytes: 65536}
	accepted, rejected := 0, 0
	for i := range 20000 {
		root := g.root()
		opts := Options{Annotations: i%2 == 1, ExtendedKeywords: i%3 == 2, Draft07: i%7 == 3}
		if opts.ExtendedKeywords {
			opts.MaxNodes, opts.MaxDepth, opts.MaxBytes = lim.Nodes, lim.Depth, lim.Bytes
		}
		// Both member orders: a Go map's (sorted) and a document's.
		snap, err := strictjson.Snapshot(root, lim)
		if err != nil {
			t.Fatal(err)
		}
		text, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := strictjson.Parse(string(text), lim)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []any{snap, parsed} {
			if err := sameCompile(v, opts); err != nil {
				t.Fatalf("schema %s, options %+v: %v", text, opts, err)
			}
		}
		if _, err := CompileWith(snap, opts); err == nil {
			accepted++
		} else {
			rejected++
		}
	}
	if accepted < 2000 || rejected < 2000 {
		t.Fatalf("generator unbalanced: %d accepted, %d rejected", accepted, rejected)
	}
}

// FuzzCompileDifferential holds the compilers to the same outcome on any
// schema text.
func FuzzCompileDifferential(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"]}`, uint8(0))
	f.Add(`{"type":"object","anyOf":[{"type":"object"},{"minimum":2,"maximum":1}]}`, uint8(1))
	f.Add(`{"type":"object","$defs":{"a":{"pattern":"^x"}},"properties":{"b":{"$ref":"#/$defs/a"}}}`, uint8(2))
	lim := strictjson.Limits{Depth: 32, Nodes: 4096, Bytes: 65536}
	f.Fuzz(func(t *testing.T, text string, flags uint8) {
		root, err := strictjson.Parse(text, lim)
		if err != nil {
			return
		}
		opts := Options{Annotations: flags&1 != 0, ExtendedKeywords: flags&2 != 0, Draft07: flags&4 != 0}
		if err := sameCompile(root, opts); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCompileSharedDifferential: schemas snapshotted and compiled one after
// another through one Sharing (small enough to start afresh often, and
// large) compile as the reference compiles each alone.
func TestCompileSharedDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	g := schemaGen{r}
	lim := strictjson.Limits{Depth: 32, Nodes: 4096, Bytes: 65536}
	for _, max := range []int{3, 1 << 16} {
		sharing := NewSharing(max)
		shared := 0
		for i := range 10000 {
			root := g.root()
			opts := Options{Annotations: i%2 == 1, ExtendedKeywords: i%5 == 4, Sharing: sharing}
			if opts.ExtendedKeywords {
				opts.MaxNodes, opts.MaxDepth, opts.MaxBytes = lim.Nodes, lim.Depth, lim.Bytes
			}
			snap, err := strictjson.SnapshotShared(root, lim, sharing.Interner())
			if err != nil {
				t.Fatal(err)
			}
			alone, err := strictjson.SnapshotDecoded(root, lim) // unshared, its objects measured as snap's are
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := CompileWith(snap, opts)
			opts.Sharing = nil
			want, wantErr := referenceCompileWith(alone, opts)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("schema %v: error %v, reference %v", root, gotErr, wantErr)
			}
			if gotErr != nil {
				var g, w *SchemaError
				if errors.As(gotErr, &g) != errors.As(wantErr, &w) || g != nil && *g != *w {
					t.Fatalf("schema %v: error %v, reference %v", root, gotErr, wantErr)
				}
				continue
			}
			indexMapOrder(want.root, map[*node]bool{})
			if !reflect.DeepEqual(got.root, want.root) {
				t.Fatalf("schema %v: compiled trees differ", root)
			}
			if (got.inlined == nil) != (want.inlined == nil) ||
				got.inlined != nil && !reflect.DeepEqual(strictjson.ToGo(got.inlined), strictjson.ToGo(want.inlined)) {
				t.Fatalf("schema %v: inlined schemas differ", root)
			}
			if sharing.kept > 0 {
				shared++
			}
		}
		if shared == 0 {
			t.Fatal("nothing was ever shared")
		}
	}
}
