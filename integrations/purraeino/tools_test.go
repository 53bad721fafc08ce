package purraeino_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraeino"
	"purra.dev/purramcp/purramcptest"
)

const okSearch = `{"structured":{"hits":2},"text":["first hit","second hit"]}`

func newTools(t *testing.T, catalog *purramcp.Catalog, opts purraeino.Options) []tool.BaseTool {
	t.Helper()
	tools, err := purraeino.Tools(catalog.Registrations(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if _, ok := tl.(tool.InvokableTool); !ok {
			t.Fatalf("%T is not a tool.InvokableTool", tl)
		}
	}
	return tools
}

func assistant(c ...[3]string) *schema.Message { return calls(c...)() }

// TestToolsNode_Outcomes runs one message of tool calls through Eino's
// ToolsNode (in parallel, as it does by default).
func TestToolsNode_Outcomes(t *testing.T) {
	f := newFixture(t)
	var reports atomic.Int32
	tools := newTools(t, f.catalog, purraeino.Options{
		OnHostError: func(context.Context, string, error) { reports.Add(1) }})
	node, err := compose.NewToolNode(t.Context(), &compose.ToolsNodeConfig{Tools: tools,
		UnknownToolsHandler: purraeino.UnknownTool})
	if err != nil {
		t.Fatal(err)
	}
	out, err := node.Invoke(t.Context(), assistant(
		[3]string{"c1", "search", `{"q":"docs"}`},
		[3]string{"c2", "search", `{"q":7}`},
		[3]string{"c3", "search", `{"q":"a","q":"b"}`}, // duplicate keys: the raw text reaches purramcp
		[3]string{"c4", "fail", `{"q":"x"}`},
		[3]string{"c5", "guarded", `{"q":"x"}`},
		[3]string{"c6", "nope", `{"q":"x"}`},
		[3]string{"c7", "search", ``}, // no arguments: {} lacks q
	))
	if err != nil {
		t.Fatal(err)
	}
	got := toolMessages(out)
	want := map[string]string{
		"c1": okSearch,
		"c2": `{"error":"mcp_invalid_arguments"}`,
		"c3": `{"error":"mcp_invalid_arguments"}`,
		"c4": `{"error":"mcp_tool_error"}`,
		"c5": `{"error":"mcp_scope_denied"}`,
		"c6": `{"error":"unknown_tool"}`,
		"c7": `{"error":"mcp_invalid_arguments"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool messages\n got %v\nwant %v", got, want)
	}
	for _, m := range out {
		if strings.Contains(m.Content, canary) {
			t.Fatalf("remote text in %q", m.Content)
		}
	}
	if args := f.srv.Arguments(); len(args) != 2 {
		t.Fatalf("server received %q, want the search and fail calls once each", args)
	}
	if reports.Load() != 0 {
		t.Fatalf("OnHostError called %d times", reports.Load())
	}
	ids := map[string]string{}
	for _, c := range f.seen() {
		ids[c.CallID] = c.ToolName
	}
	if want := map[string]string{"c1": "search", "c4": "fail", "c5": "guarded"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("scope saw calls %v, want %v", ids, want)
	}
}

// TestToolsNode_HostFailure: Eino ends the run on a tool's Go error and never
// shows it to the model, so a host failure is returned (and reported).
func TestToolsNode_HostFailure(t *testing.T) {
	f := newFixture(t)
	var reported []string
	tools := newTools(t, f.catalog, purraeino.Options{
		OnHostError: func(_ context.Context, tool string, err error) { reported = append(reported, tool+": "+err.Error()) }})
	node, err := compose.NewToolNode(t.Context(), &compose.ToolsNodeConfig{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	_, err = node.Invoke(t.Context(), assistant([3]string{"c1", "host", `{"q":"x"}`}))
	if !errors.Is(err, errHost) {
		t.Fatalf("Invoke: %v, want the host's error", err)
	}
	if len(reported) != 1 || reported[0] != "host: "+errHost.Error() {
		t.Fatalf("OnHostError got %q", reported)
	}
	if f.srv.Calls() != 0 {
		t.Fatalf("server received %d calls", f.srv.Calls())
	}
}

// TestToolsNode_Concurrency: a tool that is not concurrency-safe never
// overlaps itself; a safe one runs in parallel.
func TestToolsNode_Concurrency(t *testing.T) {
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
	schemaJSON := json.RawMessage(`{"type":"object"}`)
	srv := purramcptest.Start(t, purramcptest.Options{},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "serial", InputSchema: schemaJSON}, Handler: serial},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "parallel", InputSchema: schemaJSON}, Handler: parallel})
	safe := purramcptest.Binding("parallel")
	safe.ConcurrencySafe = true
	catalog := srv.Discover(t, map[string]purramcp.ToolBinding{
		"serial": purramcptest.Binding("serial"), "parallel": safe}, purramcp.DiscoveryOptions{})
	node, err := compose.NewToolNode(t.Context(), &compose.ToolsNodeConfig{Tools: newTools(t, catalog, purraeino.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	out, err := node.Invoke(t.Context(), assistant(
		[3]string{"s1", "serial", `{}`}, [3]string{"s2", "serial", `{}`}, [3]string{"s3", "serial", `{}`},
		[3]string{"p1", "parallel", `{}`}, [3]string{"p2", "parallel", `{}`}))
	if err != nil {
		t.Fatal(err)
	}
	s, p := `{"structured":null,"text":["s"]}`, `{"structured":null,"text":["p"]}`
	if got, want := toolMessages(out), map[string]string{"s1": s, "s2": s, "s3": s, "p1": p, "p2": p}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tool messages %v, want %v", got, want)
	}
	if most.Load() != 1 {
		t.Fatalf("serial tool ran %d calls at once", most.Load())
	}
	if srv.Calls() != 5 {
		t.Fatalf("server received %d calls, want 5", srv.Calls())
	}
}

// newAgent is a ReAct agent over model m with tools.
func newAgent(t *testing.T, m *scriptedModel, tools []tool.BaseTool) *react.Agent {
	t.Helper()
	a, err := react.NewAgent(t.Context(), &react.AgentConfig{ToolCallingModel: m,
		ToolsConfig: compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: purraeino.UnknownTool}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestReact_Outcomes runs a ReAct agent: what the model is sent (tools
// unchanged) and shown for each outcome.
func TestReact_Outcomes(t *testing.T) {
	f := newFixture(t)
	m := &scriptedModel{turns: []func() *schema.Message{calls(
		[3]string{"c1", "search", `{"q":"docs"}`},
		[3]string{"c2", "search", `{"q":7}`},
		[3]string{"c3", "fail", `{"q":"x"}`},
		[3]string{"c4", "guarded", `{"q":"x"}`},
		[3]string{"c5", "nope", `{}`},
	), answer}}
	a := newAgent(t, m, newTools(t, f.catalog, purraeino.Options{}))
	msg, err := a.Generate(t.Context(), []*schema.Message{schema.UserMessage("go")})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content != "done" {
		t.Fatalf("answer %q", msg.Content)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(reqs))
	}
	var wantSchema any
	if err := json.Unmarshal([]byte(searchSchema), &wantSchema); err != nil {
		t.Fatal(err)
	}
	for i, req := range reqs {
		var names []string
		for _, st := range req.Tools {
			names = append(names, st.Name)
			if want := st.Name + " docs. " + canary; st.Desc != want {
				t.Errorf("request %d: %s description %q, want %q", i, st.Name, st.Desc, want)
			}
			var got any
			if err := json.Unmarshal(st.Params, &got); err != nil || !reflect.DeepEqual(got, wantSchema) {
				t.Errorf("request %d: %s schema %s, want %s", i, st.Name, st.Params, searchSchema)
			}
		}
		if want := []string{"fail", "guarded", "host", "search", "slow"}; !reflect.DeepEqual(names, want) {
			t.Errorf("request %d: tools %v, want %v", i, names, want)
		}
	}
	got := toolMessages(reqs[1].Messages)
	want := map[string]string{
		"c1": okSearch,
		"c2": `{"error":"mcp_invalid_arguments"}`,
		"c3": `{"error":"mcp_tool_error"}`,
		"c4": `{"error":"mcp_scope_denied"}`,
		"c5": `{"error":"unknown_tool"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("model shown\n got %v\nwant %v", got, want)
	}
	assertNoCanary(t, reqs)
	if f.srv.Calls() != 2 {
		t.Fatalf("server received %d calls, want 2", f.srv.Calls())
	}
}

// TestReact_HostFailureEndsRun: the host's error ends Generate with its text
// and the model is never shown it.
func TestReact_HostFailureEndsRun(t *testing.T) {
	f := newFixture(t)
	m := &scriptedModel{turns: []func() *schema.Message{calls([3]string{"c1", "host", `{"q":"x"}`}), answer}}
	a := newAgent(t, m, newTools(t, f.catalog, purraeino.Options{}))
	_, err := a.Generate(t.Context(), []*schema.Message{schema.UserMessage("go")})
	if !errors.Is(err, errHost) {
		t.Fatalf("Generate: %v, want the host's error", err)
	}
	reqs := m.requests()
	if len(reqs) != 1 {
		t.Fatalf("model saw %d requests, want 1", len(reqs))
	}
	assertNoCanary(t, reqs)
}

// TestReact_Canceled: canceling the run while a call is in flight ends
// Generate with purramcp.ErrCanceled after exactly one tools/call.
func TestReact_Canceled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-f.started
		cancel()
	}()
	m := &scriptedModel{turns: []func() *schema.Message{calls([3]string{"c1", "slow", `{"q":"x"}`}), answer}}
	a := newAgent(t, m, newTools(t, f.catalog, purraeino.Options{}))
	_, err := a.Generate(ctx, []*schema.Message{schema.UserMessage("go")})
	if !errors.Is(err, purramcp.ErrCanceled) {
		t.Fatalf("Generate: %v, want purramcp.ErrCanceled", err)
	}
	if n := len(m.requests()); n != 1 {
		t.Fatalf("model saw %d requests, want 1", n)
	}
	if f.srv.Calls() != 1 {
		t.Fatalf("server received %d calls, want 1", f.srv.Calls())
	}
}

// TestReact_StaleThenSwap: a stale catalog answers mcp_catalog_stale without
// a request; the rediscovered catalog's tools, passed per call, work.
func TestReact_StaleThenSwap(t *testing.T) {
	f := newFixture(t)
	m := &scriptedModel{}
	a := newAgent(t, m, newTools(t, f.catalog, purraeino.Options{}))
	generate := func(id string, opts ...agent.AgentOption) string {
		t.Helper()
		m.mu.Lock()
		m.turns = append(m.turns, calls([3]string{id, "search", `{"q":"docs"}`}), answer)
		m.mu.Unlock()
		if _, err := a.Generate(t.Context(), []*schema.Message{schema.UserMessage("go")}, opts...); err != nil {
			t.Fatal(err)
		}
		reqs := m.requests()
		assertNoCanary(t, reqs)
		return toolMessages(reqs[len(reqs)-1].Messages)[id]
	}
	if got := generate("c1"); got != okSearch {
		t.Fatalf("fresh catalog: %s", got)
	}
	f.srv.MCP.AddTool(&mcp.Tool{Name: "remote.extra", InputSchema: json.RawMessage(searchSchema)}, purramcptest.Text(nil))
	purramcptest.WaitStale(t, f.catalog)
	if got := generate("c2"); got != `{"error":"mcp_catalog_stale"}` {
		t.Fatalf("stale catalog: %s", got)
	}
	if f.srv.Calls() != 1 {
		t.Fatalf("a stale call reached the server: %d calls", f.srv.Calls())
	}
	fresh := f.srv.Discover(t, map[string]purramcp.ToolBinding{"remote.search": purramcptest.Binding("search")},
		purramcp.DiscoveryOptions{})
	swap, err := react.WithTools(t.Context(), newTools(t, fresh, purraeino.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	if got := generate("c3", swap...); got != okSearch {
		t.Fatalf("after swap: %s", got)
	}
	if last := m.requests()[len(m.requests())-1]; len(last.Tools) != 1 || last.Tools[0].Name != "search" {
		t.Fatalf("after swap the model was sent %+v, want the fresh catalog's one tool", last.Tools)
	}
	if f.srv.Calls() != 2 {
		t.Fatalf("server received %d calls, want 2", f.srv.Calls())
	}
}

// TestTools_CallContext: Options.Call fills the ToolContext; the call id and
// tool name are always Eino's.
func TestTools_CallContext(t *testing.T) {
	f := newFixture(t)
	tools := newTools(t, f.catalog, purraeino.Options{
		Call: func(_ context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext {
			return purramcp.ToolContext{CallID: "forged", ToolName: "forged", RunID: "run-" + callID, AgentID: def.Name}
		},
		Describe: func(def purramcp.ToolDefinition) string { return "local " + def.Name },
	})
	node, err := compose.NewToolNode(t.Context(), &compose.ToolsNodeConfig{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.Invoke(t.Context(), assistant([3]string{"c9", "search", `{"q":"x"}`})); err != nil {
		t.Fatal(err)
	}
	want := purramcp.ToolContext{CallID: "c9", ToolName: "search", RunID: "run-c9", AgentID: "search"}
	if seen := f.seen(); len(seen) != 1 || seen[0] != want {
		t.Fatalf("scope saw %+v, want %+v", seen, want)
	}
	info, err := tools[3].Info(t.Context())
	if err != nil || info.Name != "search" || info.Desc != "local search" {
		t.Fatalf("Info %+v %v", info, err)
	}
}

// TestReact_Stream: the streaming run shows the model the same tool messages.
func TestReact_Stream(t *testing.T) {
	f := newFixture(t)
	m := &scriptedModel{turns: []func() *schema.Message{calls(
		[3]string{"c1", "search", `{"q":"docs"}`},
		[3]string{"c2", "fail", `{"q":"x"}`},
	), answer}}
	a := newAgent(t, m, newTools(t, f.catalog, purraeino.Options{}))
	sr, err := a.Stream(t.Context(), []*schema.Message{schema.UserMessage("go")})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := schema.ConcatMessageStream(sr)
	if err != nil || msg.Content != "done" {
		t.Fatalf("answer %v %v", msg, err)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(reqs))
	}
	want := map[string]string{"c1": okSearch, "c2": `{"error":"mcp_tool_error"}`}
	if got := toolMessages(reqs[1].Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("model shown %v, want %v", got, want)
	}
	assertNoCanary(t, reqs)
	if f.srv.Calls() != 2 {
		t.Fatalf("server received %d calls, want 2", f.srv.Calls())
	}
}
