package purraadk_test

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
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraadk"
	"purra.dev/purramcp/purramcptest"
)

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunner_Outcomes drives one model turn that calls every kind of tool
// through ADK's runner, then checks what the model was sent and shown.
func TestRunner_Outcomes(t *testing.T) {
	f := newFixture(t)
	var hostErrs []string
	var hostMu sync.Mutex
	ts, err := purraadk.NewToolset("docs", f.catalog, purraadk.Options{
		OnHostError: func(_ context.Context, tool string, err error) {
			hostMu.Lock()
			hostErrs = append(hostErrs, tool+": "+err.Error())
			hostMu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	llm := &scriptedLLM{turns: []func(*model.LLMRequest) *model.LLMResponse{
		calls(
			call("c1", "search", map[string]any{"q": "docs"}),
			call("c2", "search", map[string]any{"q": 7.0}),
			call("c3", "fail", map[string]any{"q": "x"}),
			call("c4", "guarded", map[string]any{"q": "x"}),
			call("c5", "host", map[string]any{"q": "x"}),
			call("c6", "nope", map[string]any{"q": "x"}),
			call("c7", "search", nil),
		),
		answer,
	}}
	if err := run(t.Context(), t, llm, ts, llmagent.Config{}); err != nil {
		t.Fatal(err)
	}
	sent := llm.sent()
	if len(sent) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(sent))
	}

	// Declarations: names, descriptions and schemas unchanged.
	var wantSchema map[string]any
	if err := json.Unmarshal([]byte(searchSchema), &wantSchema); err != nil {
		t.Fatal(err)
	}
	for i, req := range sent {
		decls := declarations(req)
		names := make([]string, 0, len(decls))
		for name, d := range decls {
			names = append(names, name)
			if want := name + " docs. " + canary; d.Description != want {
				t.Errorf("request %d: %s description %q, want %q", i, name, d.Description, want)
			}
			if !reflect.DeepEqual(d.ParametersJsonSchema, wantSchema) {
				t.Errorf("request %d: %s schema %s, want %s", i, name, asJSON(t, d.ParametersJsonSchema), searchSchema)
			}
			if d.ResponseJsonSchema != nil || d.Parameters != nil || d.Response != nil {
				t.Errorf("request %d: %s declares more than its input schema: %s", i, name, asJSON(t, d))
			}
		}
		slices.Sort(names)
		if want := []string{"fail", "guarded", "host", "search", "slow"}; !slices.Equal(names, want) {
			t.Errorf("request %d declares %v, want %v", i, names, want)
		}
	}

	// What the model was shown for each call.
	got := responses(t, sent[1])
	want := map[string]string{
		"c1": `{"structured":{"hits":2},"text":["first hit","second hit"]}`,
		"c2": `{"error":"mcp_invalid_arguments"}`,
		"c3": `{"error":"mcp_tool_error"}`,
		"c4": `{"error":"mcp_scope_denied"}`,
		"c5": `{"error":"host_failure"}`,
		"c7": `{"error":"mcp_invalid_arguments"}`, // no arguments: {} lacks the required q
	}
	for id, w := range want {
		if g := asJSON(t, got[id]); g != w {
			t.Errorf("%s: model shown %s, want %s", id, g, w)
		}
	}
	// An unknown name never reaches the toolset: ADK answers it with its own
	// text, which names only the called name and the local tools.
	if msg, _ := got["c6"]["error"].(string); !strings.Contains(msg, "tool 'nope' not found") {
		t.Errorf("c6: model shown %s, want ADK's not-found error", asJSON(t, got["c6"]))
	}
	assertNoCanary(t, sent)

	// Exactly one tools/call per model call that passed the boundary.
	if args := f.srv.Arguments(); len(args) != 2 || string(args[0]) != `{"q":"docs"}` && string(args[1]) != `{"q":"docs"}` {
		t.Errorf("server received %q, want the search and fail calls once each", args)
	}
	hostMu.Lock()
	if len(hostErrs) != 1 || hostErrs[0] != "host: scope store down "+canary {
		t.Errorf("OnHostError got %q", hostErrs)
	}
	hostMu.Unlock()

	// Call ids and the ADK context reach the scope function.
	ids := map[string]purramcp.ToolContext{}
	for _, c := range f.seen() {
		ids[c.CallID] = c
	}
	for id, name := range map[string]string{"c1": "search", "c3": "fail", "c4": "guarded", "c5": "host"} {
		c, ok := ids[id]
		if !ok || c.ToolName != name || c.AgentID != "helper" || c.RunID == "" {
			t.Errorf("%s: scope saw %+v", id, c)
		}
	}
	if len(ids) != 4 {
		t.Errorf("scope saw calls %v, want c1 c3 c4 c5", ids)
	}
}

// TestRunner_Canceled cancels the run while a call is in flight: Run's
// ErrCanceled reaches ADK as the tool's error and the run ends.
func TestRunner_Canceled(t *testing.T) {
	f := newFixture(t)
	ts, err := purraadk.NewToolset("docs", f.catalog, purraadk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-f.started
		cancel()
	}()
	var toolErr error
	llm := &scriptedLLM{turns: []func(*model.LLMRequest) *model.LLMResponse{
		calls(call("c1", "slow", map[string]any{"q": "x"})), answer}}
	err = run(ctx, t, llm, ts, llmagent.Config{OnToolErrorCallbacks: []llmagent.OnToolErrorCallback{
		func(_ agent.Context, _ tool.Tool, _ map[string]any, err error) (map[string]any, error) {
			toolErr = err
			return nil, nil
		}}})
	if !errors.Is(toolErr, purramcp.ErrCanceled) || toolErr.Error() != purramcp.ErrCanceled.Error() {
		t.Fatalf("tool error %v, want purramcp.ErrCanceled", toolErr)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run ended with %v, want context.Canceled", err)
	}
	if n := len(llm.sent()); n != 1 {
		t.Fatalf("model saw %d requests after the cancellation, want only the first", n)
	}
	if f.srv.Calls() != 1 {
		t.Fatalf("server received %d calls, want 1", f.srv.Calls())
	}
}

// countingToolset counts how often ADK asks for the tools.
type countingToolset struct {
	tool.Toolset
	n atomic.Int32
}

func (c *countingToolset) Tools(ctx agent.ReadonlyContext) ([]tool.Tool, error) {
	c.n.Add(1)
	return c.Toolset.Tools(ctx)
}

// TestRunner_StaleThenSwap: after a list change the served tools answer
// mcp_catalog_stale without a request; after Swap the next invocation runs
// on the rediscovered catalog.
func TestRunner_StaleThenSwap(t *testing.T) {
	f := newFixture(t)
	ts, err := purraadk.NewToolset("docs", f.catalog, purraadk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingToolset{Toolset: ts}
	// One agent and runner, one session, for the whole test: the swap is
	// picked up by the next invocation of the same agent.
	llm := &scriptedLLM{}
	r := newRunner(t, llm, counted, llmagent.Config{})
	step := func(id string) map[string]any {
		t.Helper()
		llm.script(calls(call(id, "search", map[string]any{"q": "docs"})), answer)
		if err := invoke(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		sent := llm.sent()
		assertNoCanary(t, sent)
		return responses(t, sent[len(sent)-1])[id]
	}
	const ok = `{"structured":{"hits":2},"text":["first hit","second hit"]}`
	if got := asJSON(t, step("c1")); got != ok {
		t.Fatalf("fresh catalog: %s", got)
	}
	if n := counted.n.Load(); n != 1 {
		t.Fatalf("ADK asked for the tools %d times in one invocation of two model requests, want 1", n)
	}
	if ts.Digest() != f.catalog.Snapshot().RevisionDigest {
		t.Fatalf("Digest %s, want the catalog's", ts.Digest())
	}

	f.srv.MCP.AddTool(&mcp.Tool{Name: "remote.extra", InputSchema: json.RawMessage(searchSchema)}, purramcptest.Text(nil))
	purramcptest.WaitStale(t, f.catalog)
	if got := asJSON(t, step("c2")); got != `{"error":"mcp_catalog_stale"}` {
		t.Fatalf("stale catalog: %s", got)
	}
	if f.srv.Calls() != 1 {
		t.Fatalf("a stale call reached the server: %d calls", f.srv.Calls())
	}

	fresh := f.srv.Discover(t, map[string]purramcp.ToolBinding{
		"remote.search": purramcptest.Binding("search"),
	}, purramcp.DiscoveryOptions{})
	if err := ts.Swap(fresh); err != nil {
		t.Fatal(err)
	}
	tools, err := ts.Tools(nil)
	if err != nil || len(tools) != 1 || tools[0].Name() != "search" {
		t.Fatalf("tools after swap %v %v", tools, err)
	}
	if got := asJSON(t, step("c3")); got != ok {
		t.Fatalf("after swap: %s", got)
	}
	sent := llm.sent()
	if decls := declarations(sent[len(sent)-1]); len(decls) != 1 || decls["search"] == nil {
		t.Fatalf("after swap the model was sent %v, want the fresh catalog's one tool", decls)
	}
	if n := counted.n.Load(); n != 3 {
		t.Fatalf("ADK asked for the tools %d times in three invocations, want 3", n)
	}
	if f.srv.Calls() != 2 {
		t.Fatalf("server received %d calls, want 2", f.srv.Calls())
	}
	if err := ts.Swap(nil); err == nil {
		t.Fatal("Swap(nil) succeeded")
	}
	if tools, _ := ts.Tools(nil); len(tools) != 1 {
		t.Fatalf("a failed swap changed the tools: %v", tools)
	}
}

// TestRunner_Concurrency: ADK runs one response's calls in parallel; a tool
// that is not concurrency-safe never overlaps itself, a safe one does.
func TestRunner_Concurrency(t *testing.T) {
	var inflight, most atomic.Int32
	serial := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // long enough for a parallel call to overlap
		inflight.Add(-1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "s"}}}, nil
	}
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	parallel := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		arrived.Done()
		select {
		case <-both:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "p"}}}, nil
		case <-time.After(5 * time.Second):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "alone"}}}, nil
		}
	}
	schema := json.RawMessage(`{"type":"object"}`)
	srv := purramcptest.Start(t, purramcptest.Options{},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "serial", InputSchema: schema}, Handler: serial},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "parallel", InputSchema: schema}, Handler: parallel})
	safe := purramcptest.Binding("parallel")
	safe.ConcurrencySafe = true
	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{
		"serial": purramcptest.Binding("serial"), "parallel": safe}, purramcp.DiscoveryOptions{})
	ts, err := purraadk.NewToolset("docs", catalog, purraadk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	llm := &scriptedLLM{turns: []func(*model.LLMRequest) *model.LLMResponse{
		calls(call("s1", "serial", nil), call("s2", "serial", nil), call("s3", "serial", nil),
			call("p1", "parallel", nil), call("p2", "parallel", nil)),
		answer,
	}}
	if err := run(t.Context(), t, llm, ts, llmagent.Config{}); err != nil {
		t.Fatal(err)
	}
	got := responses(t, llm.sent()[1])
	for id, w := range map[string]string{
		"s1": `{"structured":null,"text":["s"]}`, "s2": `{"structured":null,"text":["s"]}`,
		"s3": `{"structured":null,"text":["s"]}`,
		"p1": `{"structured":null,"text":["p"]}`, "p2": `{"structured":null,"text":["p"]}`,
	} {
		if g := asJSON(t, got[id]); g != w {
			t.Errorf("%s: %s, want %s", id, g, w)
		}
	}
	if most.Load() != 1 {
		t.Errorf("serial tool ran %d calls at once", most.Load())
	}
	if srv.Calls() != 5 {
		t.Errorf("server received %d calls, want 5", srv.Calls())
	}
}

// TestOptions_Call: the host's ToolContext is used, with the call id and
// tool name always the framework's.
func TestOptions_Call(t *testing.T) {
	f := newFixture(t)
	var gotID string
	ts, err := purraadk.NewToolset("docs", f.catalog, purraadk.Options{
		Call: func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext {
			gotID = callID
			return purramcp.ToolContext{CallID: "forged", ToolName: "forged", RunID: "run-" + def.Name,
				RootRunID: "root", LeaseEpoch: 3}
		},
		Describe: func(def purramcp.ToolDefinition) string { return "local " + def.Name },
	})
	if err != nil {
		t.Fatal(err)
	}
	llm := &scriptedLLM{turns: []func(*model.LLMRequest) *model.LLMResponse{
		calls(call("c1", "search", map[string]any{"q": "docs"})), answer}}
	if err := run(t.Context(), t, llm, ts, llmagent.Config{}); err != nil {
		t.Fatal(err)
	}
	seen := f.seen()
	want := purramcp.ToolContext{CallID: "c1", ToolName: "search", RunID: "run-search", RootRunID: "root", LeaseEpoch: 3}
	if len(seen) != 1 || seen[0] != want || gotID != "c1" {
		t.Fatalf("scope saw %+v (Call got %q), want %+v", seen, gotID, want)
	}
	if d := declarations(llm.sent()[0])["search"]; d == nil || d.Description != "local search" {
		t.Fatalf("declaration %+v, want the Describe description", d)
	}
}

func TestNewToolset_Errors(t *testing.T) {
	f := newFixture(t)
	if _, err := purraadk.NewToolset("", f.catalog, purraadk.Options{}); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := purraadk.NewToolset("docs", nil, purraadk.Options{}); err == nil {
		t.Error("nil source accepted")
	}
	var none *purramcp.Catalog
	if _, err := purraadk.NewToolset("docs", none, purraadk.Options{}); err == nil {
		t.Error("nil catalog accepted")
	}
	ts, err := purraadk.NewToolset("docs", f.catalog, purraadk.Options{})
	if err != nil || ts.Name() != "docs" {
		t.Fatalf("NewToolset: %v %v", ts, err)
	}
	a, err := ts.Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	a[0] = nil
	if b, _ := ts.Tools(nil); b[0] == nil || b[0].Name() != "fail" || b[0].IsLongRunning() {
		t.Fatalf("Tools shares its slice or misorders: %v", b)
	}
}

// TestRunner_Confirmation: ADK's tool.WithConfirmation wraps the toolset's
// tools (they have Declaration and Run), so human-in-the-loop approval works
// on top: a call awaiting confirmation never reaches the server.
func TestRunner_Confirmation(t *testing.T) {
	f := newFixture(t)
	ts, err := purraadk.NewToolset("docs", f.catalog, purraadk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	confirmSearch := func(name string, _ any) bool { return name == "search" }
	llm := &scriptedLLM{turns: []func(*model.LLMRequest) *model.LLMResponse{
		calls(call("c1", "fail", map[string]any{"q": "x"}), call("c2", "search", map[string]any{"q": "x"})), answer}}
	if err := run(t.Context(), t, llm, tool.WithConfirmation(ts, false, confirmSearch), llmagent.Config{}); err != nil {
		t.Fatal(err)
	}
	if args := f.srv.Arguments(); len(args) != 1 || string(args[0]) != `{"q":"x"}` {
		t.Fatalf("server received %q, want only the unconfirmed fail call", args)
	}
	sent := llm.sent()
	if len(sent) != 1 {
		t.Fatalf("model saw %d requests, want 1 (the invocation waits for the confirmation)", len(sent))
	}
	assertNoCanary(t, sent)
}

// sourceFunc is a Source other than a catalog, as a fleet is.
type sourceFunc func() []purramcp.ToolDefinition

func (f sourceFunc) Registrations() []purramcp.ToolDefinition { return f() }

// TestToolset_ReadsItsSourceEachTime: Tools reads the source on every call,
// so a fleet's new registrations reach the next model request; Digest is
// the catalog's only for a catalog source; a bad read changes nothing.
func TestToolset_ReadsItsSourceEachTime(t *testing.T) {
	f := newFixture(t)
	defs := f.catalog.Registrations()
	var mu sync.Mutex
	served := defs[:1]
	src := sourceFunc(func() []purramcp.ToolDefinition {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(served)
	})
	ts, err := purraadk.NewToolset("fleet", src, purraadk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ts.Digest() != "" {
		t.Errorf("Digest of a non-catalog source %q, want empty", ts.Digest())
	}
	names := func() []string {
		tools, err := ts.Tools(nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name())
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{defs[0].Name}) {
		t.Fatalf("tools %v", got)
	}
	mu.Lock()
	served = defs
	mu.Unlock()
	if got := names(); len(got) != len(defs) {
		t.Fatalf("after the source changed, tools %v, want all %d", got, len(defs))
	}
	mu.Lock()
	served = []purramcp.ToolDefinition{defs[0], defs[0]}
	mu.Unlock()
	if _, err := ts.Tools(nil); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Fatalf("a source with a repeated name: %v", err)
	}
	if err := ts.Swap(f.catalog); err != nil || ts.Digest() != f.catalog.Snapshot().RevisionDigest {
		t.Fatalf("Swap to the catalog: %v, digest %q", err, ts.Digest())
	}
}
