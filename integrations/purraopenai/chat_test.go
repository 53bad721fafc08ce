package purraopenai_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraopenai"
	"purra.dev/purramcp/purramcptest"
)

// chatLoop runs a host's Chat Completions loop over tb until a reply has
// no tool calls.
func chatLoop(t *testing.T, ctx context.Context, client openai.Client, tb *purraopenai.Toolbox) error {
	t.Helper()
	params := openai.ChatCompletionNewParams{Model: "gpt-test", Tools: tb.ChatTools(),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go")}}
	for range 5 {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		msg := completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			return nil
		}
		results, err := tb.ChatToolMessages(ctx, msg)
		if err != nil {
			return err
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, results...)
	}
	t.Fatal("loop did not end")
	return nil
}

func TestChat_DeclarationsAndOutcomes(t *testing.T) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	var hostErrs []string
	tb, err := purraopenai.New(defs, purraopenai.Options{
		OnHostError: func(_ context.Context, tool string, err error) { hostErrs = append(hostErrs, tool+": "+err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, chatToolCalls(
		call{"call_ok", "search", `{"q":"cats"}`},
		call{"call_dup", "search", `{"q":"a","q":"b"}`},
		call{"call_lookup", "lookup", `{"id":3}`},
		call{"call_invalid", "lookup", `{"id":0}`},
		call{"call_empty", "lookup", ``},
		call{"call_fail", "fail", `{"q":"x"}`},
		call{"call_deny", "deny", `{"q":"x"}`},
		call{"call_host", "host", `{"q":"x"}`},
		call{"call_broken", "broken", `{"q":"x"}`},
		call{"call_unknown", "nope", `{}`},
	), chatEnd)
	if err := chatLoop(t, t.Context(), api.client(), tb); err != nil {
		t.Fatal(err)
	}
	bodies := api.Bodies()
	if len(bodies) != 2 || !slices.Equal(api.Paths(), []string{"/v1/chat/completions", "/v1/chat/completions"}) {
		t.Fatalf("requests %q", api.Paths())
	}
	declared := chatDeclared(t, bodies[0])
	if len(declared) != len(defs) {
		t.Fatalf("declared %d tools, want %d", len(declared), len(defs))
	}
	for _, d := range defs {
		fn := declared[d.Name]
		if fn["description"] != d.Description || !reflect.DeepEqual(fn["parameters"], d.InputSchema) {
			t.Errorf("%s: declared %v, want description %q parameters %v", d.Name, fn, d.Description, d.InputSchema)
		}
		wantStrict := d.Name != "lookup" // lookup has an optional property and a bound
		if strict, present := fn["strict"]; present != wantStrict || (present && strict != true) {
			t.Errorf("%s: strict %v (present %v), want it set exactly when eligible (%v)", d.Name, strict, present, wantStrict)
		}
	}
	want := []string{
		`call_ok: {"structured":null,"text":["hits for cats"]}`,
		`call_dup: {"error":"mcp_invalid_arguments"}`, // the raw text reached the boundary
		`call_lookup: {"structured":{"id":1},"text":["one"]}`,
		`call_invalid: {"error":"mcp_invalid_arguments"}`,
		`call_empty: {"error":"mcp_invalid_arguments"}`, // "" is {}, which lacks id
		`call_fail: {"error":"mcp_tool_error"}`,
		`call_deny: {"error":"mcp_scope_denied"}`,
		`call_host: {"error":"host_failure"}`,
		`call_broken: {"error":"mcp_protocol_error"}`,
		`call_unknown: {"error":"unknown_tool"}`,
	}
	if got := chatToolMessages(t, bodies[1]); !slices.Equal(got, want) {
		t.Fatalf("tool messages\n got %q\nwant %q", got, want)
	}
	noCanary(t, bodies)
	if f.Server.Calls() != 4 {
		t.Fatalf("tools/call %d, want 4 (search, lookup, fail, broken)", f.Server.Calls())
	}
	var args []string
	for _, a := range f.Server.Arguments() {
		args = append(args, string(a))
	}
	if !slices.Equal(args, []string{`{"q":"cats"}`, `{"id":3}`, `{"q":"x"}`, `{"q":"x"}`}) {
		t.Fatalf("arguments sent %q", args)
	}
	if !slices.Equal(hostErrs, []string{"host: " + canary}) {
		t.Fatalf("OnHostError calls %q", hostErrs)
	}
	if ids := f.CallIDs(); !slices.Equal(ids, []string{"call_ok"}) {
		t.Fatalf("call ids %q", ids)
	}
}

func TestChat_StaleCatalogUntilSwapped(t *testing.T) {
	f := purramcptest.NewFixture(t)
	tb, err := purraopenai.New(f.Catalog.Registrations(), purraopenai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.MakeStale(t)
	api := newFakeAPI(t, chatToolCalls(call{"call_1", "search", `{"q":"a"}`}), chatEnd,
		chatToolCalls(call{"call_2", "search", `{"q":"b"}`}), chatEnd)
	client := api.client()
	if err := chatLoop(t, t.Context(), client, tb); err != nil {
		t.Fatal(err)
	}
	if got := chatToolMessages(t, api.Bodies()[1]); !slices.Equal(got, []string{`call_1: {"error":"mcp_catalog_stale"}`}) {
		t.Fatalf("stale result %q", got)
	}
	if f.Server.Calls() != 0 {
		t.Fatalf("tools/call %d on a stale catalog", f.Server.Calls())
	}
	fresh := f.Server.Discover(t, f.Bindings(), purramcp.DiscoveryOptions{})
	if tb, err = purraopenai.New(fresh.Registrations(), purraopenai.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := chatLoop(t, t.Context(), client, tb); err != nil {
		t.Fatal(err)
	}
	if got := chatToolMessages(t, api.Bodies()[3]); !slices.Equal(got, []string{`call_2: {"structured":null,"text":["hits for b"]}`}) {
		t.Fatalf("result after rediscovery %q", got)
	}
	if f.Server.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1", f.Server.Calls())
	}
}

func TestChat_CanceledIsReturned(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
		Tool: &mcp.Tool{Name: "remote.block", InputSchema: strictSchema},
		Handler: func(reqCtx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cancel() // the host gives up while the call is in flight
			select {
			case <-reqCtx.Done():
			case <-time.After(10 * time.Second):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late " + canary}}}, nil
		},
	})
	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{"remote.block": purramcptest.Binding("block")},
		purramcp.DiscoveryOptions{})
	tb, err := purraopenai.New(catalog.Registrations(), purraopenai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, chatToolCalls(call{"call_1", "block", `{"q":"a"}`}, call{"call_2", "block", `{"q":"b"}`}), chatEnd)
	err = chatLoop(t, ctx, api.client(), tb)
	if !errors.Is(err, purramcp.ErrCanceled) {
		t.Fatalf("loop ended with %v, want ErrCanceled", err)
	}
	if len(api.Bodies()) != 1 || srv.Calls() != 1 {
		t.Fatalf("requests %d, tools/call %d; want 1 and 1 (the second call never ran)", len(api.Bodies()), srv.Calls())
	}
	// A canceled context is also refused before any call.
	if out, err := tb.RunCall(ctx, "call_3", "block", `{"q":"c"}`); !errors.Is(err, purramcp.ErrCanceled) || out != "" {
		t.Fatalf("RunCall on an ended context: %q %v", out, err)
	}
	if srv.Calls() != 1 {
		t.Fatalf("tools/call %d after the context ended", srv.Calls())
	}
}

func TestChat_CustomToolCallIsUnknown(t *testing.T) {
	f := purramcptest.NewFixture(t)
	tb, err := purraopenai.New(f.Catalog.Registrations(), purraopenai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"refusal":null,"tool_calls":[`+
		`{"id":"call_c","type":"custom","custom":{"name":"search","input":"q"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	out, err := tb.ChatToolMessages(t.Context(), msg)
	if err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
	b, _ := json.Marshal(out[0])
	want := map[string]any{"role": "tool", "tool_call_id": "call_c", "content": `{"error":"unknown_tool"}`}
	if got := decode(t, string(b)); !reflect.DeepEqual(got, want) {
		t.Fatalf("tool message %s", b)
	}
	if f.Server.Calls() != 0 {
		t.Fatal("a custom tool call reached the server")
	}
	if out, err := tb.ChatToolMessages(t.Context(), openai.ChatCompletionMessage{}); out != nil || err != nil {
		t.Fatalf("no tool calls: %v %v", out, err)
	}
}

func TestRunCall_NotConcurrencySafeRunsOneAtATime(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "serial", true: "parallel"}[safe], func(t *testing.T) {
			var inflight, peak atomic.Int32
			both := make(chan struct{})
			var once sync.Once
			wait := 100 * time.Millisecond // serialized calls never meet: wait briefly
			if safe {
				wait = 10 * time.Second // parallel calls meet as soon as both run
			}
			srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
				Tool: &mcp.Tool{Name: "remote.slow", InputSchema: strictSchema},
				Handler: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					n := inflight.Add(1)
					for {
						old := peak.Load()
						if n <= old || peak.CompareAndSwap(old, n) {
							break
						}
					}
					if n >= 2 {
						once.Do(func() { close(both) })
					}
					select {
					case <-both:
					case <-time.After(wait):
					}
					inflight.Add(-1)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				},
			})
			b := purramcptest.Binding("slow")
			b.ConcurrencySafe = safe
			catalog := srv.Discover(t, map[string]purramcp.ToolBinding{"remote.slow": b}, purramcp.DiscoveryOptions{})
			tb, err := purraopenai.New(catalog.Registrations(), purraopenai.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			outs := make([]string, 2)
			for i := range 2 {
				wg.Go(func() {
					out, err := tb.RunCall(t.Context(), "call", "slow", `{"q":"a"}`)
					if err != nil {
						t.Error(err)
					}
					outs[i] = out
				})
			}
			wg.Wait()
			want := int32(1)
			if safe {
				want = 2
			}
			if got := peak.Load(); got != want {
				t.Fatalf("peak concurrent calls %d, want %d", got, want)
			}
			for _, out := range outs {
				if out != `{"structured":null,"text":["ok"]}` {
					t.Fatalf("output %q", out)
				}
			}
			if srv.Calls() != 2 {
				t.Fatalf("tools/call %d, want 2", srv.Calls())
			}
		})
	}
}

func TestRunCall_CallIDAndOptionsCall(t *testing.T) {
	f := purramcptest.NewFixture(t)
	tb, err := purraopenai.New(f.Catalog.Registrations(), purraopenai.Options{
		Call: func(_ context.Context, callID string, d purramcp.ToolDefinition) purramcp.ToolContext {
			return purramcp.ToolContext{CallID: "host-" + d.Name, RunID: "run-" + callID}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"call_9", ""} {
		if out, err := tb.RunCall(t.Context(), id, "search", `{"q":"a"}`); err != nil || out != `{"structured":null,"text":["hits for a"]}` {
			t.Fatalf("RunCall: %q %v", out, err)
		}
	}
	// The model's id wins; without one, Options.Call's stays.
	if ids := f.CallIDs(); !slices.Equal(ids, []string{"call_9", "host-search"}) {
		t.Fatalf("call ids %q", ids)
	}
}

func TestNew_RejectsDefinitions(t *testing.T) {
	run := func(context.Context, json.RawMessage, purramcp.ToolContext) (purramcp.ToolResult, error) {
		return purramcp.ToolResult{}, nil
	}
	object := map[string]any{"type": "object"}
	cases := map[string][]purramcp.ToolDefinition{
		"no name":     {{InputSchema: object, Run: run}},
		"bad name":    {{Name: "a.b", InputSchema: object, Run: run}},
		"long name":   {{Name: strings.Repeat("a", 65), InputSchema: object, Run: run}},
		"twice":       {{Name: "a", InputSchema: object, Run: run}, {Name: "a", InputSchema: object, Run: run}},
		"no run":      {{Name: "a", InputSchema: object}},
		"not object":  {{Name: "a", InputSchema: map[string]any{"type": "string"}, Run: run}},
		"no schema":   {{Name: "a", Run: run}},
		"type absent": {{Name: "a", InputSchema: map[string]any{"properties": map[string]any{}}, Run: run}},
	}
	for name, defs := range cases {
		if tb, err := purraopenai.New(defs, purraopenai.Options{}); err == nil || tb != nil || !strings.HasPrefix(err.Error(), "purraopenai: ") {
			t.Errorf("%s: New %v %v", name, tb, err)
		}
	}
	tb, err := purraopenai.New(nil, purraopenai.Options{})
	if err != nil || len(tb.ChatTools()) != 0 || len(tb.ResponsesTools()) != 0 {
		t.Fatalf("empty toolbox: %v", err)
	}
}

func TestNewToolbox_NilSource(t *testing.T) {
	var none *purramcp.Catalog
	for name, src := range map[string]purraopenai.Source{"nil": nil, "nil catalog": none} {
		if tb, err := purraopenai.NewToolbox(src, purraopenai.Options{}); err == nil || tb != nil {
			t.Errorf("%s: NewToolbox = %v, %v; want an error", name, tb, err)
		}
	}
}
