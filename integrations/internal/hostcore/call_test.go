package hostcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// answering returns a definition whose Run records its arguments and
// ToolContext and answers with res and err.
func answering(name string, res purramcp.ToolResult, err error, args *json.RawMessage, tc *purramcp.ToolContext) purramcp.ToolDefinition {
	return purramcp.ToolDefinition{Name: name, ConcurrencySafe: true,
		Run: func(_ context.Context, a json.RawMessage, c purramcp.ToolContext) (purramcp.ToolResult, error) {
			*args, *tc = a, c
			return res, err
		}}
}

func TestCall_Outcomes(t *testing.T) {
	success := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"hit"}, Structured: map[string]any{"n": 1.0}},
		EffectState: "not_started"}
	failure := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}}, EffectState: "not_started",
		ErrorCode: purramcp.CodeToolError}
	hostErr := errors.New("host secret")
	cases := []struct {
		name     string
		res      purramcp.ToolResult
		err      error
		code     string
		json     string
		model    map[string]any
		reported error
		canceled bool
	}{
		{name: "success", res: success, json: `{"structured":{"n":1},"text":["hit"]}`,
			model: map[string]any{"structured": map[string]any{"n": 1.0}, "text": []any{"hit"}}},
		{name: "failure", res: failure, code: purramcp.CodeToolError, json: `{"error":"mcp_tool_error"}`,
			model: map[string]any{"error": purramcp.CodeToolError}},
		{name: "host", err: hostErr, code: purramcp.CodeHostFailure, json: `{"error":"host_failure"}`,
			model: map[string]any{"error": purramcp.CodeHostFailure}, reported: hostErr},
		{name: "canceled", err: purramcp.ErrCanceled, canceled: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var args json.RawMessage
			var call purramcp.ToolContext
			var reported []error
			hooks := hostcore.Hooks{OnHostError: func(_ context.Context, tool string, err error) {
				assert.Equal(t, "t", tool, "case %s", tc.name)
				reported = append(reported, err)
			}}
			def := answering("t", tc.res, tc.err, &args, &call)
			out, err := hostcore.Call(t.Context(), &hostcore.Gates{}, hooks, def, "call_1", json.RawMessage(`{"q":"x"}`))
			assert.Equal(t, `{"q":"x"}`, string(args), "case %s: arguments passed as they are", tc.name)
			assert.Equal(t, purramcp.ToolContext{CallID: "call_1", ToolName: "t"}, call, "case %s", tc.name)
			if tc.canceled {
				assert.Equal(t, purramcp.ErrCanceled, err, "case %s", tc.name)
				assert.Equal(t, hostcore.Outcome{}, out, "case %s", tc.name)
				assert.Empty(t, reported, "case %s", tc.name)
				return
			}
			require.NoError(t, err, "case %s", tc.name)
			assert.Equal(t, tc.code, out.Code(), "case %s", tc.name)
			assert.Equal(t, tc.json, out.JSON(), "case %s", tc.name)
			assert.Equal(t, tc.model, out.Model(), "case %s", tc.name)
			assert.Equal(t, tc.reported, out.HostErr, "case %s", tc.name)
			if tc.reported != nil {
				assert.Equal(t, []error{tc.reported}, reported, "case %s", tc.name)
			} else {
				assert.Empty(t, reported, "case %s", tc.name)
			}
		})
	}
}

func TestHooks_ToolContext(t *testing.T) {
	def := purramcp.ToolDefinition{Name: "search"}
	fromHost := purramcp.ToolContext{CallID: "host", ToolName: "other", RunID: "run", AgentID: "agent", LeaseEpoch: 3}
	hooks := hostcore.Hooks{Call: func(_ context.Context, callID string, d purramcp.ToolDefinition) purramcp.ToolContext {
		assert.Equal(t, "search", d.Name)
		return fromHost
	}}
	got := hooks.ToolContext(t.Context(), "call_9", def)
	assert.Equal(t, purramcp.ToolContext{CallID: "call_9", ToolName: "search", RunID: "run", AgentID: "agent", LeaseEpoch: 3}, got)
	got = hooks.ToolContext(t.Context(), "", def)
	assert.Equal(t, purramcp.ToolContext{CallID: "host", ToolName: "search", RunID: "run", AgentID: "agent", LeaseEpoch: 3}, got,
		"no framework call id keeps the host's")
	got = hostcore.Hooks{}.ToolContext(t.Context(), "", def)
	assert.Equal(t, purramcp.ToolContext{ToolName: "search"}, got)
}

func TestErrorJSON(t *testing.T) {
	assert.Equal(t, `{"error":"unknown_tool"}`, hostcore.ErrorJSON(hostcore.CodeUnknownTool))
	assert.Equal(t, `{"error":"mcp_catalog_stale"}`, hostcore.ErrorJSON(purramcp.CodeCatalogStale))
}

func TestOptions(t *testing.T) {
	def := purramcp.ToolDefinition{Name: "search", Description: "remote\u200btext"}
	assert.Equal(t, "remote\u200btext", hostcore.Options{}.Description(def))
	describe := func(d purramcp.ToolDefinition) string { return d.Name + ": filtered" }
	assert.Equal(t, "search: filtered", hostcore.Options{Describe: describe}.Description(def))

	var reported []string
	opts := hostcore.Options{
		Call: func(context.Context, string, purramcp.ToolDefinition) purramcp.ToolContext {
			return purramcp.ToolContext{RunID: "run_1"}
		},
		OnHostError: func(_ context.Context, tool string, _ error) { reported = append(reported, tool) },
	}
	h := opts.Hooks()
	assert.Equal(t, purramcp.ToolContext{RunID: "run_1", ToolName: "search", CallID: "c1"}, h.ToolContext(t.Context(), "c1", def))
	h.OnHostError(t.Context(), "search", errors.New("x"))
	assert.Equal(t, []string{"search"}, reported)
}
