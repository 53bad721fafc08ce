package purraopenai_test

import (
	"context"
	"encoding/json"
	"testing"

	"purra.dev/purramcp/integrations/purraopenai"
	"purra.dev/purramcp/purramcptest"
)

// kitAdapter drives a Toolbox as a Chat Completions host loop does.
type kitAdapter struct{ tb *purraopenai.Toolbox }

func (a kitAdapter) Declared(context.Context) (map[string]map[string]any, error) {
	b, err := json.Marshal(a.tb.ChatTools())
	if err != nil {
		return nil, err
	}
	var tools []struct {
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, t := range tools {
		out[t.Function.Name] = t.Function.Parameters
	}
	return out, nil
}

func (a kitAdapter) Invoke(ctx context.Context, callID, name string, args json.RawMessage) (string, error) {
	return a.tb.RunCall(ctx, callID, name, string(args))
}

func (a kitAdapter) Refresh() error { return a.tb.Refresh() }

func TestConformance(t *testing.T) {
	purramcptest.Conformance(t, purramcptest.ConformanceOptions{UnknownTool: true},
		func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
			tb, err := purraopenai.NewToolbox(src, purraopenai.Options{Call: hooks.Call, OnHostError: hooks.OnHostError})
			if err != nil {
				t.Fatal(err)
			}
			return kitAdapter{tb}
		})
}
