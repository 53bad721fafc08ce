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

// A box declares and dispatches on the list read last; a refresh that
// breaks the rules keeps it; an unknown name runs nothing.
func TestBox_DispatchAndRefresh(t *testing.T) {
	_, err := hostcore.NewBox(nil, hostcore.Rules{Package: "p"}, hostcore.Hooks{})
	assert.EqualError(t, err, "p: nil source")

	src := &mutable{}
	src.set(def("a"))
	var callIDs []string
	hooks := hostcore.Hooks{Call: func(_ context.Context, callID string, _ purramcp.ToolDefinition) purramcp.ToolContext {
		callIDs = append(callIDs, callID)
		return purramcp.ToolContext{}
	}}
	box, err := hostcore.NewBox(src, hostcore.Rules{Package: "p"}, hooks)
	require.NoError(t, err)
	first := box.Current()
	assert.Equal(t, []string{"a"}, hostcore.Declare(first, func(d purramcp.ToolDefinition) string { return d.Name }))

	out, err := box.Dispatch(t.Context(), first, "a", "call_1", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Empty(t, out.Code())
	assert.Equal(t, []string{"call_1"}, callIDs)

	out, err = box.Dispatch(t.Context(), first, "nope", "call_2", nil)
	require.NoError(t, err)
	assert.Equal(t, hostcore.Outcome{UnknownTool: true}, out)
	assert.Equal(t, "unknown_tool", out.Code())
	assert.Equal(t, `{"error":"unknown_tool"}`, out.JSON())
	assert.Equal(t, map[string]any{"error": "unknown_tool"}, out.Model())
	assert.Equal(t, []string{"call_1"}, callIDs, "an unknown name runs nothing")

	src.set(def("b"), def("b"))
	assert.EqualError(t, box.Refresh(), `p: tool "b" is defined twice`)
	assert.Same(t, first, box.Current())
	src.set(def("b"))
	require.NoError(t, box.Refresh())
	assert.Equal(t, []string{"b"}, hostcore.Declare(box.Current(), func(d purramcp.ToolDefinition) string { return d.Name }))
}
