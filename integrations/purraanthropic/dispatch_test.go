package purraanthropic_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraanthropic"
	"purra.dev/purramcp/purramcptest"
)

// hostLoop runs a host's own Messages loop over defs: send, dispatch the
// reply's tool uses, send the results, until a reply has none.
func hostLoop(t *testing.T, ctx context.Context, client anthropic.Client, defs []purramcp.ToolDefinition,
	opts purraanthropic.Options) error {
	t.Helper()
	tools, err := purraanthropic.ToolParams(defs)
	if err != nil {
		return err
	}
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024, Tools: tools,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("go"))}}
	for range 5 {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return err
		}
		blocks, err := purraanthropic.Dispatch(ctx, defs, msg, opts)
		if err != nil {
			return err
		}
		if len(blocks) == 0 {
			return nil
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(blocks...))
	}
	t.Fatal("loop did not end")
	return nil
}

func TestDispatch_DeclarationsAndOutcomes(t *testing.T) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	var hostErrs []string
	api := newFakeAPI(t, toolUseReply(
		use{"tu_ok", "search", `{"q":"cats"}`},
		use{"tu_dup", "search", `{"q":"a","q":"b"}`},
		use{"tu_lookup", "lookup", `{"id":3}`},
		use{"tu_invalid", "lookup", `{"id":0}`},
		use{"tu_fail", "fail", `{"q":"x"}`},
		use{"tu_deny", "deny", `{"q":"x"}`},
		use{"tu_host", "host", `{"q":"x"}`},
		use{"tu_broken", "broken", `{"q":"x"}`},
		use{"tu_unknown", "nope", `{}`},
	), endReply)
	err := hostLoop(t, t.Context(), api.client(), defs, purraanthropic.Options{
		OnHostError: func(_ context.Context, tool string, err error) { hostErrs = append(hostErrs, tool+": "+err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	bodies := api.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	declared := declaredTools(t, bodies[0])
	if len(declared) != len(defs) {
		t.Fatalf("declared %d tools, want %d", len(declared), len(defs))
	}
	for _, d := range defs {
		got := declared[d.Name]
		if got["description"] != d.Description || !reflect.DeepEqual(got["input_schema"], d.InputSchema) {
			t.Errorf("%s: declared %v, want description %q schema %v", d.Name, got, d.Description, d.InputSchema)
		}
		wantStrict := d.Name != "lookup"
		if strict, present := got["strict"]; present != wantStrict || (present && strict != true) {
			t.Errorf("%s: strict %v (present %v), want it set exactly when eligible (%v)", d.Name, strict, present, wantStrict)
		}
	}
	want := map[string]toolResult{
		"tu_ok":      {`{"structured":null,"text":["hits for cats"]}`, false},
		"tu_dup":     {`{"error":"mcp_invalid_arguments"}`, true}, // the raw text reached the boundary
		"tu_lookup":  {`{"structured":{"id":1},"text":["one"]}`, false},
		"tu_invalid": {`{"error":"mcp_invalid_arguments"}`, true},
		"tu_fail":    {`{"error":"mcp_tool_error"}`, true},
		"tu_deny":    {`{"error":"mcp_scope_denied"}`, true},
		"tu_host":    {`{"error":"host_failure"}`, true},
		"tu_broken":  {`{"error":"mcp_protocol_error"}`, true},
		"tu_unknown": {`{"error":"unknown_tool"}`, true},
	}
	results := lastToolResults(t, bodies[1])
	if !reflect.DeepEqual(results, want) {
		t.Fatalf("tool results\n got %v\nwant %v", results, want)
	}
	// In order: the user message lists the results as the tool uses came.
	msgs := decode(t, bodies[1])["messages"].([]any)
	var order []string
	for _, b := range msgs[len(msgs)-1].(map[string]any)["content"].([]any) {
		order = append(order, b.(map[string]any)["tool_use_id"].(string))
	}
	if !slices.Equal(order, []string{"tu_ok", "tu_dup", "tu_lookup", "tu_invalid", "tu_fail", "tu_deny", "tu_host", "tu_broken", "tu_unknown"}) {
		t.Fatalf("result order %q", order)
	}
	noCanary(t, bodies)
	if f.Server.Calls() != 4 {
		t.Fatalf("tools/call %d, want 4 (search, lookup, fail, broken)", f.Server.Calls())
	}
	if !slices.Equal(hostErrs, []string{"host: " + canary}) {
		t.Fatalf("OnHostError calls %q", hostErrs)
	}
	// Call ids flow into ToolContext.CallID (the duplicate-key call never reached the scope).
	if ids := f.CallIDs(); !slices.Equal(ids, []string{"tu_ok"}) {
		t.Fatalf("call ids %q", ids)
	}
}

func TestDispatch_StaleCatalogUntilSwapped(t *testing.T) {
	f := purramcptest.NewFixture(t)
	f.MakeStale(t)
	api := newFakeAPI(t, toolUseReply(use{"tu_1", "search", `{"q":"a"}`}), endReply,
		toolUseReply(use{"tu_2", "search", `{"q":"b"}`}), endReply)
	client := api.client()
	if err := hostLoop(t, t.Context(), client, f.Catalog.Registrations(), purraanthropic.Options{}); err != nil {
		t.Fatal(err)
	}
	if r := lastToolResults(t, api.Bodies()[1])["tu_1"]; r != (toolResult{`{"error":"mcp_catalog_stale"}`, true}) {
		t.Fatalf("stale result %+v", r)
	}
	if f.Server.Calls() != 0 {
		t.Fatalf("tools/call %d on a stale catalog", f.Server.Calls())
	}
	fresh := f.Server.Discover(t, f.Bindings(), purramcp.DiscoveryOptions{})
	if err := hostLoop(t, t.Context(), client, fresh.Registrations(), purraanthropic.Options{}); err != nil {
		t.Fatal(err)
	}
	if r := lastToolResults(t, api.Bodies()[3])["tu_2"]; r != (toolResult{`{"structured":null,"text":["hits for b"]}`, false}) {
		t.Fatalf("result after rediscovery %+v", r)
	}
	if f.Server.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1", f.Server.Calls())
	}
}

func TestDispatch_CanceledIsReturned(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
		Tool: &mcp.Tool{Name: "remote.block", InputSchema: strictSchema},
		Handler: func(reqCtx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cancel()
			select {
			case <-reqCtx.Done():
			case <-time.After(10 * time.Second):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
		},
	})
	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{"remote.block": purramcptest.Binding("block")},
		purramcp.DiscoveryOptions{})
	api := newFakeAPI(t, toolUseReply(use{"tu_1", "block", `{"q":"a"}`}, use{"tu_2", "block", `{"q":"b"}`}), endReply)
	err := hostLoop(t, ctx, api.client(), catalog.Registrations(), purraanthropic.Options{})
	if !errors.Is(err, purramcp.ErrCanceled) {
		t.Fatalf("Dispatch ended with %v, want ErrCanceled", err)
	}
	if len(api.Bodies()) != 1 || srv.Calls() != 1 {
		t.Fatalf("requests %d, tools/call %d; want 1 and 1 (the second tool use never ran)", len(api.Bodies()), srv.Calls())
	}
}

func TestDispatch_NoToolUses(t *testing.T) {
	f := purramcptest.NewFixture(t)
	blocks, err := purraanthropic.Dispatch(t.Context(), f.Catalog.Registrations(), nil, purraanthropic.Options{})
	if err != nil || blocks != nil {
		t.Fatalf("nil message: %v %v", blocks, err)
	}
	if f.Server.Calls() != 0 {
		t.Fatal("a call was sent")
	}
}

func TestNewToolbox_NilSource(t *testing.T) {
	var none *purramcp.Catalog
	for name, src := range map[string]purraanthropic.Source{"nil": nil, "nil catalog": none} {
		if tb, err := purraanthropic.NewToolbox(src, purraanthropic.Options{}); err == nil || tb != nil {
			t.Errorf("%s: NewToolbox = %v, %v; want an error", name, tb, err)
		}
	}
}
