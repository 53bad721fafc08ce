package purraadk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/genai"

	"purra.dev/purramcp/integrations/purraadk"
	"purra.dev/purramcp/purramcptest"
)

// functionTool is the method set ADK's flow dispatches a function call on.
type functionTool interface {
	Declaration() *genai.FunctionDeclaration
	Run(ctx agent.Context, args any) (map[string]any, error)
}

// toolContext is the agent.Context of one function call.
type toolContext struct {
	agent.StrictContextMock
	callID string
}

func (c *toolContext) FunctionCallID() string { return c.callID }
func (c *toolContext) InvocationID() string   { return "invocation-1" }
func (c *toolContext) AgentName() string      { return "helper" }

// kitAdapter drives a Toolset as ADK's flow does: Tools before each model
// request, then Run of the tool the model called with its decoded
// arguments.
type kitAdapter struct{ ts *purraadk.Toolset }

func (a kitAdapter) tools() (map[string]functionTool, error) {
	tools, err := a.ts.Tools(nil)
	if err != nil {
		return nil, err
	}
	out := map[string]functionTool{}
	for _, t := range tools {
		out[t.Name()] = t.(functionTool)
	}
	return out, nil
}

func (a kitAdapter) Declared(context.Context) (map[string]map[string]any, error) {
	tools, err := a.tools()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for name, t := range tools {
		b, err := json.Marshal(t.Declaration().ParametersJsonSchema)
		if err != nil {
			return nil, err
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			return nil, err
		}
		out[name] = schema
	}
	return out, nil
}

func (a kitAdapter) Invoke(ctx context.Context, callID, name string, args json.RawMessage) (string, error) {
	tools, err := a.tools()
	if err != nil {
		return "", err
	}
	t, ok := tools[name]
	if !ok {
		return "", fmt.Errorf("ADK has no tool %q", name)
	}
	var decoded any
	if err := json.Unmarshal(args, &decoded); err != nil {
		return "", err
	}
	res, err := t.Run(&toolContext{StrictContextMock: agent.NewStrictContextMock(ctx), callID: callID}, decoded)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	return string(b), err
}

// Refresh does nothing: Tools reads the source before every model request.
func (a kitAdapter) Refresh() error { return nil }

func TestConformance(t *testing.T) {
	purramcptest.Conformance(t, purramcptest.ConformanceOptions{},
		func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
			ts, err := purraadk.NewToolset("kit", src, purraadk.Options{Call: hooks.Call, OnHostError: hooks.OnHostError})
			if err != nil {
				t.Fatal(err)
			}
			return kitAdapter{ts}
		})
}
