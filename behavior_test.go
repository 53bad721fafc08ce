package purramcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every id of reference-behaviors.md §3 (A1…L2) has exactly one top-level
// test named TestBehavior<ID>_<What> in this package, or one line below
// (style.md T1). TestReferenceBehaviorsCovered (coverage_test.go) enforces it.
//
// not applicable: H19 (Py only) Core strict admission runs a batch through CoreToolExecutor, a PurrA core executor that does not exist in Go; the registration side it relies on (ArgumentContract rejecting a wrong type or a duplicate key before any call) is TestRun_Arguments and TestBehaviorH3_NoCoercion.
// not applicable: H20 (TS only) Agent parallel dispatch needs the PurrA Agent and a scripted model, which do not exist in Go; ConcurrencySafe only records the host's declaration (adapter.md §8), and TestRun_Concurrent proves 100 concurrent Runs are safe.
// not applicable: H21 (Py only) Core parallel execution with ToolExecutionLimits needs CoreToolExecutor, which does not exist in Go; scheduling is the core's, not the adapter's (adapter.md §8).

// behaviorIDs is every id of reference-behaviors.md §3.
var behaviorIDs = strings.Fields(`
	A1 A2 A3 A4
	B1 B2 B3 B4
	C1 C2 C3 C4
	D1 D2 D3
	E1 E2 E3 E4
	F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13
	G1 G2 G3 G4 G5 G6 G7
	H1 H2 H3 H4 H5 H6 H7 H8 H9 H10 H11 H12 H13 H14 H15 H16 H17 H18 H19 H20 H21
	I1 I2 I3 I4 I5
	J1 J2 J3
	K1 K2 K3
	L1 L2`)

// testFunc is one top-level function of this package's test files.
type testFunc struct{ file, name string }

// topLevelTests returns every top-level function (not method) of this
// package's test files whose name starts with prefix.
func topLevelTests(t *testing.T, prefix string) []testFunc {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var tests []testFunc
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err, name)
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, prefix) {
				tests = append(tests, testFunc{file: name, name: fn.Name.Name})
			}
		}
	}
	return tests
}
