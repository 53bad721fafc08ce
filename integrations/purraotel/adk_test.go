package purraotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraadk"
	"purra.dev/purramcp/integrations/purraotel"
)

// scriptedLLM is a model.LLM that answers request n with turns[n].
type scriptedLLM struct {
	mu    sync.Mutex
	n     int
	turns []*model.LLMResponse
}

func (m *scriptedLLM) Name() string { return "scripted" }

func (m *scriptedLLM) GenerateContent(ctx context.Context, _ *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		n := m.n
		m.n++
		m.mu.Unlock()
		if ctx.Err() != nil || n >= len(m.turns) {
			yield(nil, errors.New("scripted model: no turn left"))
			return
		}
		yield(m.turns[n], nil)
	}
}

// TestObserver_ADKExecuteTool: a tool call driven through ADK-Go and
// purraadk runs inside ADK's own "execute_tool search" span; with Observe
// and StartCall wired, the MCP attributes land on it (error.type
// "tool_error" for the tool's error result) and no second tools/call span
// is made.
func TestObserver_ADKExecuteTool(t *testing.T) {
	tel := newTelemetry(t)
	otel.SetTracerProvider(tel.tp) // ADK traces through the global provider
	in := purraotel.New(tel.tp, tel.mp, purraotel.Options{})
	catalog := sessionWith(t, newServer(), purramcp.DiscoveryOptions{Observer: in.Observe, CallStart: in.StartCall})
	ts, err := purraadk.NewToolset("docs", catalog, purraadk.Options{})
	require.NoError(t, err)
	llm := &scriptedLLM{turns: []*model.LLMResponse{
		{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
			ID: "c1", Name: "search", Args: map[string]any{"q": "err"}}}}}},
		{Content: genai.NewContentFromText("done", "model")},
	}}
	a, err := llmagent.New(llmagent.Config{Name: "helper", Model: llm, Toolsets: []tool.Toolset{ts}})
	require.NoError(t, err)
	r, err := runner.NewInMemory("app", a)
	require.NoError(t, err)
	for _, err := range r.Run(context.Background(), "user", "session", genai.NewContentFromText("go", "user"), agent.RunConfig{}) {
		require.NoError(t, err)
	}
	spans := tel.spans.Ended()
	assert.Empty(t, byName(spans, "tools/call search"), "no second span")
	adk := byName(spans, "execute_tool search")
	require.Len(t, adk, 1)
	got := attrs(adk[0].Attributes())
	for k, v := range map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.id": "c1",
		"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25", "error.type": "tool_error",
		"purramcp.code":      "mcp_tool_error",
		"purramcp.server_id": "docs", "purramcp.remote_name": "remote.search", "purramcp.requests": int64(1),
	} {
		assert.Equal(t, v, got[k], k)
	}
	// ADK records its own payload attributes (the tool's description, the
	// call's arguments and response: gen_ai.tool.description,
	// gcp.vertex.agent.*); none of the attributes purraotel sets carries
	// remote text.
	ours := map[string]any{}
	for k, v := range got {
		if strings.HasPrefix(k, "purramcp.") || strings.HasPrefix(k, "mcp.") || k == "error.type" {
			ours[k] = v
		}
	}
	b, err := json.Marshal(ours)
	require.NoError(t, err)
	assert.NotContains(t, string(b), secret)
	assert.Len(t, ours, 12)
}
