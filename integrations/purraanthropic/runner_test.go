package purraanthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraanthropic"
	"purra.dev/purramcp/purramcptest"
)

// runnerParams starts a conversation for the tool runner, without a thread
// so every request carries the whole history.
func runnerParams() anthropic.BetaToolRunnerParams {
	return anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     "claude-test",
			MaxTokens: 1024,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("go"))},
		},
		DisableThread: true,
	}
}

func TestRunner_DeclarationsAndOutcomes(t *testing.T) {
	// With and without the message thread the runner uses by default.
	for _, thread := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-thread", true: "thread"}[thread], func(t *testing.T) {
			runnerOutcomes(t, thread)
		})
	}
}

// runnerOutcomes drives one turn with every kind of call through the runner.
func runnerOutcomes(t *testing.T, thread bool) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	var hostErrs []string
	var mu sync.Mutex
	tools, err := purraanthropic.BetaTools(defs, purraanthropic.Options{
		OnHostError: func(_ context.Context, tool string, err error) {
			mu.Lock()
			hostErrs = append(hostErrs, tool+": "+err.Error())
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, toolUseReply(
		use{"tu_ok", "search", `{"q":"cats"}`},
		use{"tu_lookup", "lookup", `{"id":3}`},
		use{"tu_invalid", "search", `{"q":7}`},
		use{"tu_fail", "fail", `{"q":"x"}`},
		use{"tu_deny", "deny", `{"q":"x"}`},
		use{"tu_host", "host", `{"q":"x"}`},
		use{"tu_broken", "broken", `{"q":"x"}`},
		use{"tu_unknown", "nope", `{}`},
	), endReply)
	client := api.client()
	params := runnerParams()
	params.DisableThread = !thread
	runner := client.Beta.Messages.NewToolRunner(tools, params)
	final, err := runner.RunToCompletion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if final == nil || final.StopReason != anthropic.BetaStopReasonEndTurn {
		t.Fatalf("final message %+v", final)
	}
	bodies := api.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	if _, threaded := decode(t, bodies[1])["thread"]; threaded != thread {
		t.Fatalf("second request threaded=%v, want %v", threaded, thread)
	}

	// What the model is sent: every tool, name, description and schema unchanged, no strict.
	declared := declaredTools(t, bodies[0])
	if len(declared) != len(defs) {
		t.Fatalf("declared %d tools, want %d", len(declared), len(defs))
	}
	for _, d := range defs {
		got := declared[d.Name]
		if got == nil {
			t.Fatalf("tool %q not declared", d.Name)
		}
		if got["description"] != d.Description {
			t.Errorf("%s: description %q, want %q", d.Name, got["description"], d.Description)
		}
		if !reflect.DeepEqual(got["input_schema"], d.InputSchema) {
			t.Errorf("%s: schema sent %v, want %v", d.Name, got["input_schema"], d.InputSchema)
		}
		if _, ok := got["strict"]; ok {
			t.Errorf("%s: runner declaration carries strict", d.Name)
		}
	}

	// What it gets back, one tool_result per tool_use.
	want := map[string]struct {
		text    string
		isError bool
	}{
		"tu_ok":      {`{"structured":null,"text":["hits for cats"]}`, false},
		"tu_lookup":  {`{"structured":{"id":1},"text":["one"]}`, false},
		"tu_invalid": {"Error: " + purramcp.CodeInvalidArguments, true},
		"tu_fail":    {"Error: " + purramcp.CodeToolError, true},
		"tu_deny":    {"Error: " + purramcp.CodeScopeDenied, true},
		"tu_host":    {"Error: " + purramcp.CodeHostFailure, true},
		"tu_broken":  {"Error: " + purramcp.CodeProtocolError, true},
		"tu_unknown": {"Error: Tool 'nope' not found", true}, // the runner's own answer
	}
	results := lastToolResults(t, bodies[1])
	if len(results) != len(want) {
		t.Fatalf("%d tool results, want %d: %v", len(results), len(want), results)
	}
	for id, w := range want {
		if got := results[id]; got.text != w.text || got.isError != w.isError {
			t.Errorf("%s: got %q is_error=%v, want %q is_error=%v", id, got.text, got.isError, w.text, w.isError)
		}
	}
	noCanary(t, bodies)

	// Exactly one tools/call per call that passed the boundary's checks.
	if f.Server.Calls() != 4 {
		t.Fatalf("tools/call %d, want 4 (search, lookup, fail, broken)", f.Server.Calls())
	}
	var args []string
	for _, a := range f.Server.Arguments() {
		args = append(args, string(a))
	}
	sort.Strings(args)
	if !slices.Equal(args, []string{`{"id":3}`, `{"q":"cats"}`, `{"q":"x"}`, `{"q":"x"}`}) {
		t.Fatalf("arguments sent %q", args)
	}
	if len(hostErrs) != 1 || hostErrs[0] != "host: "+canary {
		t.Fatalf("OnHostError calls %q", hostErrs)
	}
	// The runner passes no tool_use id: CallID is empty by default.
	if ids := f.CallIDs(); !slices.Equal(ids, []string{""}) {
		t.Fatalf("call ids %q", ids)
	}
}

func TestRunner_StrictDeclarationsThroughParamsTools(t *testing.T) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	tools, err := purraanthropic.BetaTools(defs, purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	declarations, err := purraanthropic.BetaToolParams(defs)
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, toolUseReply(use{"tu_1", "search", `{"q":"a"}`}), endReply)
	client := api.client()
	params := runnerParams()
	params.Tools = declarations
	if _, err := client.Beta.Messages.NewToolRunner(tools, params).RunToCompletion(t.Context()); err != nil {
		t.Fatal(err)
	}
	bodies := api.Bodies()
	declared := declaredTools(t, bodies[0])
	if len(declared) != len(defs) {
		t.Fatalf("declared %d tools, want %d", len(declared), len(defs))
	}
	for _, d := range defs {
		got := declared[d.Name]
		wantStrict := d.Name != "lookup" // lookup has an optional property and a bound
		if strict, _ := got["strict"].(bool); strict != wantStrict {
			t.Errorf("%s: strict %v, want %v", d.Name, got["strict"], wantStrict)
		}
		if _, present := got["strict"]; present != wantStrict {
			t.Errorf("%s: strict present=%v, want it only when eligible", d.Name, present)
		}
		if !reflect.DeepEqual(got["input_schema"], d.InputSchema) {
			t.Errorf("%s: schema sent %v, want %v", d.Name, got["input_schema"], d.InputSchema)
		}
	}
	if r := lastToolResults(t, bodies[1])["tu_1"]; r.text != `{"structured":null,"text":["hits for a"]}` || r.isError {
		t.Fatalf("result %+v", r)
	}
	if f.Server.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1", f.Server.Calls())
	}
}

func TestRunner_CallIDFromOptions(t *testing.T) {
	f := purramcptest.NewFixture(t)
	tools, err := purraanthropic.BetaTools(f.Catalog.Registrations(), purraanthropic.Options{
		Call: func(_ context.Context, callID string, d purramcp.ToolDefinition) purramcp.ToolContext {
			return purramcp.ToolContext{CallID: "host-" + d.Name + callID, RunID: "run-1", ToolName: "ignored"}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, toolUseReply(use{"tu_1", "search", `{"q":"a"}`}), endReply)
	client := api.client()
	if _, err := client.Beta.Messages.NewToolRunner(tools, runnerParams()).RunToCompletion(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ids := f.CallIDs(); !slices.Equal(ids, []string{"host-search"}) {
		t.Fatalf("call ids %q", ids)
	}
}

func TestRunner_StaleCatalogUntilSwapped(t *testing.T) {
	f := purramcptest.NewFixture(t)
	tools, err := purraanthropic.BetaTools(f.Catalog.Registrations(), purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.MakeStale(t)
	api := newFakeAPI(t, toolUseReply(use{"tu_1", "search", `{"q":"a"}`}), endReply,
		toolUseReply(use{"tu_2", "search", `{"q":"b"}`}), endReply)
	client := api.client()
	if _, err := client.Beta.Messages.NewToolRunner(tools, runnerParams()).RunToCompletion(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := lastToolResults(t, api.Bodies()[1])["tu_1"]; r.text != "Error: "+purramcp.CodeCatalogStale || !r.isError {
		t.Fatalf("stale result %+v", r)
	}
	if f.Server.Calls() != 0 {
		t.Fatalf("tools/call %d on a stale catalog", f.Server.Calls())
	}
	// The host rediscovers and builds a new runner over the new catalog.
	fresh := f.Server.Discover(t, f.Bindings(), purramcp.DiscoveryOptions{})
	tools, err = purraanthropic.BetaTools(fresh.Registrations(), purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Beta.Messages.NewToolRunner(tools, runnerParams()).RunToCompletion(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := lastToolResults(t, api.Bodies()[3])["tu_2"]; r.text != `{"structured":null,"text":["hits for b"]}` || r.isError {
		t.Fatalf("result after rediscovery %+v", r)
	}
	if f.Server.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1", f.Server.Calls())
	}
}

func TestRunner_CanceledEndsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	started := make(chan struct{})
	srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
		Tool: &mcp.Tool{Name: "remote.block", InputSchema: strictSchema},
		Handler: func(reqCtx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
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
	tools, err := purraanthropic.BetaTools(catalog.Registrations(), purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, toolUseReply(use{"tu_1", "block", `{"q":"a"}`}), endReply)
	client := api.client()
	_, err = client.Beta.Messages.NewToolRunner(tools, runnerParams()).RunToCompletion(ctx)
	<-started
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run ended with %v, want context.Canceled", err)
	}
	if n := len(api.Bodies()); n != 1 {
		t.Fatalf("%d requests to the vendor, want 1 (nothing sent after the cancellation)", n)
	}
	if srv.Calls() != 1 {
		t.Fatalf("tools/call %d, want 1", srv.Calls())
	}
}

func TestRunner_NotConcurrencySafeRunsOneAtATime(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "serial", true: "parallel"}[safe], func(t *testing.T) {
			var p peakTracker
			p.both = make(chan struct{})
			wait := 100 * time.Millisecond // serialized calls never meet: wait briefly
			if safe {
				wait = 10 * time.Second // parallel calls meet as soon as both run
			}
			srv := purramcptest.Start(t, purramcptest.Options{}, purramcptest.Tool{
				Tool: &mcp.Tool{Name: "remote.slow", InputSchema: strictSchema},
				Handler: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					n := p.inflight.Add(1)
					for {
						old := p.peak.Load()
						if n <= old || p.peak.CompareAndSwap(old, n) {
							break
						}
					}
					if n >= 2 {
						p.once.Do(func() { close(p.both) })
					}
					select {
					case <-p.both:
					case <-time.After(wait):
					}
					p.inflight.Add(-1)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				},
			})
			b := purramcptest.Binding("slow")
			b.ConcurrencySafe = safe
			catalog := srv.Discover(t, map[string]purramcp.ToolBinding{"remote.slow": b}, purramcp.DiscoveryOptions{})
			tools, err := purraanthropic.BetaTools(catalog.Registrations(), purraanthropic.Options{})
			if err != nil {
				t.Fatal(err)
			}
			api := newFakeAPI(t, toolUseReply(use{"tu_1", "slow", `{"q":"a"}`}, use{"tu_2", "slow", `{"q":"b"}`}), endReply)
			client := api.client()
			if _, err := client.Beta.Messages.NewToolRunner(tools, runnerParams()).RunToCompletion(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := int32(1)
			if safe {
				want = 2
			}
			if got := p.peak.Load(); got != want {
				t.Fatalf("peak concurrent calls %d, want %d", got, want)
			}
			if srv.Calls() != 2 {
				t.Fatalf("tools/call %d, want 2", srv.Calls())
			}
		})
	}
}

func TestBetaTools_RejectsDefinitions(t *testing.T) {
	run := func(context.Context, json.RawMessage, purramcp.ToolContext) (purramcp.ToolResult, error) {
		return purramcp.ToolResult{}, nil
	}
	object := map[string]any{"type": "object"}
	cases := map[string][]purramcp.ToolDefinition{
		"no name":     {{InputSchema: object, Run: run}},
		"twice":       {{Name: "a", InputSchema: object, Run: run}, {Name: "a", InputSchema: object, Run: run}},
		"no run":      {{Name: "a", InputSchema: object}},
		"not object":  {{Name: "a", InputSchema: map[string]any{"type": "string"}, Run: run}},
		"no schema":   {{Name: "a", Run: run}},
		"type absent": {{Name: "a", InputSchema: map[string]any{"properties": map[string]any{}}, Run: run}},
	}
	for name, defs := range cases {
		if _, err := purraanthropic.BetaTools(defs, purraanthropic.Options{}); err == nil || !strings.HasPrefix(err.Error(), "purraanthropic: ") {
			t.Errorf("%s: BetaTools error %v", name, err)
		}
		if _, err := purraanthropic.ToolParams(defs); err == nil {
			t.Errorf("%s: ToolParams accepted", name)
		}
		if _, err := purraanthropic.Dispatch(t.Context(), defs, &anthropic.Message{}, purraanthropic.Options{}); err == nil {
			t.Errorf("%s: Dispatch accepted", name)
		}
	}
}
