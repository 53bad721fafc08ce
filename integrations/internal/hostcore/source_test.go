package hostcore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// def returns a runnable definition with an object input schema.
func def(name string) purramcp.ToolDefinition {
	return purramcp.ToolDefinition{Name: name, InputSchema: map[string]any{"type": "object"},
		Run: func(context.Context, json.RawMessage, purramcp.ToolContext) (purramcp.ToolResult, error) {
			return purramcp.ToolResult{}, nil
		}}
}

func TestRules_Check(t *testing.T) {
	noRun := def("x")
	noRun.Run = nil
	stringRoot := def("s")
	stringRoot.InputSchema = map[string]any{"type": "string"}
	short := func(s string) bool { return len(s) <= 3 }
	cases := []struct {
		name  string
		rules hostcore.Rules
		defs  []purramcp.ToolDefinition
		want  string
	}{
		{"ok", hostcore.Rules{Package: "p", ObjectRoot: true}, []purramcp.ToolDefinition{def("a"), def("b")}, ""},
		{"empty", hostcore.Rules{Package: "p"}, []purramcp.ToolDefinition{def("a"), def("")}, "p: definition 1 has an empty name"},
		{"invalid", hostcore.Rules{Package: "p", ValidName: short}, []purramcp.ToolDefinition{def("long")},
			`p: definition 0: name "long" is not a valid tool name`},
		{"twice", hostcore.Rules{Package: "p"}, []purramcp.ToolDefinition{def("a"), def("a")}, `p: tool "a" is defined twice`},
		{"no run", hostcore.Rules{Package: "p"}, []purramcp.ToolDefinition{noRun}, `p: tool "x" has no Run`},
		{"root", hostcore.Rules{Package: "p", ObjectRoot: true}, []purramcp.ToolDefinition{stringRoot},
			`p: tool "s": input schema root is not type "object"`},
		{"root allowed", hostcore.Rules{Package: "p"}, []purramcp.ToolDefinition{stringRoot}, ""},
	}
	for _, tc := range cases {
		err := tc.rules.Check(tc.defs)
		if tc.want == "" {
			assert.NoError(t, err, "case %s", tc.name)
		} else {
			assert.EqualError(t, err, tc.want, "case %s", tc.name)
		}
	}
}

func TestNewSet_NilSource(t *testing.T) {
	var catalog *purramcp.Catalog
	for name, src := range map[string]hostcore.Source{"nil": nil, "nil catalog": catalog} {
		set, err := hostcore.NewSet(src, hostcore.Rules{Package: "p"})
		assert.Nil(t, set, "case %s", name)
		assert.EqualError(t, err, "p: nil source", "case %s", name)
	}
}

// A read that breaks the rules changes nothing; Replace swaps the source.
func TestSet_ReadAndReplace(t *testing.T) {
	src := &mutable{}
	src.set(def("a"))
	set, err := hostcore.NewSet(src, hostcore.Rules{Package: "p"})
	require.NoError(t, err)
	first := set.Current()
	assert.Equal(t, []string{"a"}, names(first.Defs()))
	src.set(def("b"), def("b"))
	_, err = set.Read()
	assert.EqualError(t, err, `p: tool "b" is defined twice`)
	assert.Same(t, first, set.Current())
	src.set(def("b"), def("c"))
	l, err := set.Read()
	require.NoError(t, err)
	assert.Same(t, l, set.Current())
	_, ok := l.Lookup("a")
	assert.False(t, ok)
	c, ok := l.Lookup("c")
	assert.True(t, ok)
	assert.Equal(t, "c", c.Name)

	assert.Error(t, set.Replace(nil))
	assert.Same(t, hostcore.Source(src), set.Source())
	require.NoError(t, set.Replace(hostcore.Static([]purramcp.ToolDefinition{def("z")})))
	assert.Equal(t, []string{"z"}, names(set.Current().Defs()))
	src.set(def("y"))
	_, err = set.Read()
	require.NoError(t, err)
	assert.Equal(t, []string{"z"}, names(set.Current().Defs()), "the replaced source is no longer read")
}

func TestStatic_Copies(t *testing.T) {
	defs := []purramcp.ToolDefinition{def("a")}
	src := hostcore.Static(defs)
	defs[0].Name = "changed"
	got := src.Registrations()
	assert.Equal(t, []string{"a"}, names(got))
	got[0].Name = "changed"
	assert.Equal(t, []string{"a"}, names(src.Registrations()))
}

func names(defs []purramcp.ToolDefinition) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}
