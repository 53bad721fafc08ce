package purraopenai_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"purra.dev/purramcp/integrations/purraopenai"
	"purra.dev/purramcp/purramcptest"
)

// responsesTurn sends one Responses request with tb's tools, runs the
// reply's function calls through RunCall and sends their outputs, the way a
// host does. The output items go in as JSON, the same on every v3 minor.
func responsesTurn(t *testing.T, ctx context.Context, client openai.Client, tb *purraopenai.Toolbox) {
	t.Helper()
	params := responses.ResponseNewParams{Model: "gpt-test", Tools: tb.ResponsesTools(),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go")}}
	resp, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	for _, item := range resp.Output {
		if item.Type != "function_call" {
			continue
		}
		out, err := tb.RunCall(ctx, item.CallID, item.Name, item.Arguments.OfString)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, map[string]any{"type": "function_call_output", "call_id": item.CallID, "output": out})
	}
	params.Input = responses.ResponseNewParamsInputUnion{}
	params.PreviousResponseID = openai.String(resp.ID)
	if _, err := client.Responses.New(ctx, params, option.WithJSONSet("input", items)); err != nil {
		t.Fatal(err)
	}
}

func TestResponses_DeclarationsAndOutputs(t *testing.T) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	tb, err := purraopenai.New(defs, purraopenai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, responsesCalls(
		call{"call_ok", "search", `{"q":"cats"}`},
		call{"call_fail", "fail", `{"q":"x"}`},
		call{"call_host", "host", `{"q":"x"}`},
		call{"call_unknown", "nope", `{}`},
	), responsesEnd)
	responsesTurn(t, t.Context(), api.client(), tb)
	bodies := api.Bodies()
	if !slices.Equal(api.Paths(), []string{"/v1/responses", "/v1/responses"}) {
		t.Fatalf("requests %q", api.Paths())
	}
	tools, _ := decode(t, bodies[0])["tools"].([]any)
	if len(tools) != len(defs) {
		t.Fatalf("declared %d tools, want %d", len(tools), len(defs))
	}
	for i, d := range defs {
		tool := tools[i].(map[string]any)
		if tool["type"] != "function" || tool["name"] != d.Name || tool["description"] != d.Description ||
			!reflect.DeepEqual(tool["parameters"], d.InputSchema) {
			t.Errorf("%s: declared %v", d.Name, tool)
		}
		// Responses treats a missing strict as true: it is always sent.
		if strict, present := tool["strict"]; !present || strict != (d.Name != "lookup") {
			t.Errorf("%s: strict %v (present %v)", d.Name, strict, present)
		}
	}
	var got []string
	for _, raw := range decode(t, bodies[1])["input"].([]any) {
		item := raw.(map[string]any)
		got = append(got, item["call_id"].(string)+": "+item["output"].(string))
	}
	want := []string{
		`call_ok: {"structured":null,"text":["hits for cats"]}`,
		`call_fail: {"error":"mcp_tool_error"}`,
		`call_host: {"error":"host_failure"}`,
		`call_unknown: {"error":"unknown_tool"}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("outputs\n got %q\nwant %q", got, want)
	}
	noCanary(t, bodies)
	if f.Server.Calls() != 2 {
		t.Fatalf("tools/call %d, want 2", f.Server.Calls())
	}
	if ids := f.CallIDs(); !slices.Equal(ids, []string{"call_ok"}) {
		t.Fatalf("call ids %q", ids)
	}
}
