package purraanthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"purra.dev/purramcp/integrations/purraanthropic"
	"purra.dev/purramcp/purramcptest"
)

// dispatchAdapter drives a Toolbox as a host's own Messages loop does.
type dispatchAdapter struct{ tb *purraanthropic.Toolbox }

func (a dispatchAdapter) Declared(context.Context) (map[string]map[string]any, error) {
	return declaredSchemas(a.tb.ToolParams())
}

func (a dispatchAdapter) Invoke(ctx context.Context, callID, name string, args json.RawMessage) (string, error) {
	var msg anthropic.Message
	raw := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[`+
		`{"type":"tool_use","id":%q,"name":%q,"input":%s}],"stop_reason":"tool_use","stop_sequence":null,`+
		`"usage":{"input_tokens":1,"output_tokens":1}}`, callID, name, args)
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		return "", err
	}
	blocks, err := a.tb.Dispatch(ctx, &msg)
	if err != nil {
		return "", err
	}
	if len(blocks) != 1 || blocks[0].OfToolResult == nil || blocks[0].OfToolResult.ToolUseID != callID {
		return "", errors.New("not one tool_result for the tool_use")
	}
	res := blocks[0].OfToolResult
	text := res.Content[0].OfText.Text
	if isError := res.IsError.Valid() && res.IsError.Value; isError != strings.HasPrefix(text, `{"error":`) {
		return "", fmt.Errorf("is_error %v for %s", isError, text)
	}
	return text, nil
}

func (a dispatchAdapter) Refresh() error { return a.tb.Refresh() }

// runnerAdapter drives a Toolbox's tools as the SDK's tool runner does,
// with a fresh runner's tools for every model request.
type runnerAdapter struct{ tb *purraanthropic.Toolbox }

func (a runnerAdapter) Declared(context.Context) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, tool := range a.tb.BetaTools() {
		b, err := json.Marshal(tool.InputSchema())
		if err != nil {
			return nil, err
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			return nil, err
		}
		out[tool.Name()] = schema
	}
	return out, nil
}

func (a runnerAdapter) Invoke(ctx context.Context, _, name string, args json.RawMessage) (string, error) {
	for _, tool := range a.tb.BetaTools() {
		if tool.Name() != name {
			continue
		}
		blocks, err := tool.Execute(ctx, args)
		var te *purraanthropic.ToolError
		switch {
		case errors.As(err, &te):
			return `{"error":"` + te.Error() + `"}`, nil
		case err != nil:
			return "", err
		}
		return blocks[0].OfText.Text, nil
	}
	return "", fmt.Errorf("the runner has no tool %q", name)
}

func (a runnerAdapter) Refresh() error { return a.tb.Refresh() }

// declaredSchemas returns the input schema of each declaration, as sent.
func declaredSchemas(params []anthropic.ToolUnionParam) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, p := range params {
		b, err := json.Marshal(p.OfTool.InputSchema)
		if err != nil {
			return nil, err
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			return nil, err
		}
		out[p.OfTool.Name] = schema
	}
	return out, nil
}

func TestConformance(t *testing.T) {
	newToolbox := func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) *purraanthropic.Toolbox {
		tb, err := purraanthropic.NewToolbox(src, purraanthropic.Options{Call: hooks.Call, OnHostError: hooks.OnHostError})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	t.Run("Dispatch", func(t *testing.T) {
		purramcptest.Conformance(t, purramcptest.ConformanceOptions{UnknownTool: true},
			func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
				return dispatchAdapter{newToolbox(t, src, hooks)}
			})
	})
	t.Run("Runner", func(t *testing.T) {
		purramcptest.Conformance(t, purramcptest.ConformanceOptions{NoCallID: true},
			func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
				return runnerAdapter{newToolbox(t, src, hooks)}
			})
	})
}
