package purraeino_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"purra.dev/purramcp/integrations/purraeino"
	"purra.dev/purramcp/purramcptest"
)

// kitAdapter drives a Toolset as an Eino host serving a fleet does: the
// Toolset's current tools with each run, through a ToolsNode that answers
// unknown names with purraeino.UnknownTool.
type kitAdapter struct{ ts *purraeino.Toolset }

func (a kitAdapter) Declared(ctx context.Context) (map[string]map[string]any, error) {
	tools, err := a.ts.Tools(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, t := range tools {
		info, err := t.Info(ctx)
		if err != nil {
			return nil, err
		}
		s, err := info.ParamsOneOf.ToJSONSchema()
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		var decoded map[string]any
		if err := json.Unmarshal(b, &decoded); err != nil {
			return nil, err
		}
		out[info.Name] = decoded
	}
	return out, nil
}

func (a kitAdapter) Invoke(ctx context.Context, callID, name string, args json.RawMessage) (string, error) {
	tools, err := a.ts.Tools(ctx)
	if err != nil {
		return "", err
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: purraeino.UnknownTool})
	if err != nil {
		return "", err
	}
	msgs, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: callID, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: string(args)}}}))
	if err != nil {
		return "", err
	}
	if len(msgs) != 1 || msgs[0].ToolCallID != callID {
		return "", fmt.Errorf("not one tool message for call %s: %v", callID, msgs)
	}
	return msgs[0].Content, nil
}

// Refresh does nothing: the host passes Tools' fresh list with each run.
func (a kitAdapter) Refresh() error { return nil }

func TestConformance(t *testing.T) {
	purramcptest.Conformance(t, purramcptest.ConformanceOptions{HostFailureIsError: true, UnknownTool: true},
		func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
			ts, err := purraeino.NewToolset(src, purraeino.Options{Call: hooks.Call, OnHostError: hooks.OnHostError})
			if err != nil {
				t.Fatal(err)
			}
			return kitAdapter{ts}
		})
}
