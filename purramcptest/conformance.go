package purramcptest

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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// A Source hands out registrations, as a *purramcp.Catalog and a fleet do.
// [Conformance] gives each adapter one whose registrations it replaces, the
// way a fleet's change after a recovery or an approval does.
type Source interface {
	Registrations() []purramcp.ToolDefinition
}

// An Adapter is one agent-framework integration as [Conformance] drives it:
// the test wraps the integration's own values and calls its framework
// entry points, as a model's tool calls would reach them.
type Adapter interface {
	// Declared returns what the adapter declares to the model now: each
	// tool's input schema, decoded from the JSON the vendor request would
	// carry, by tool name.
	Declared(ctx context.Context) (map[string]map[string]any, error)
	// Invoke runs one model tool call named name with argument text args
	// and call id callID, as the framework runs it, and returns the text the
	// model is shown, with a failure spelled {"error":"<code>"} whatever the
	// framework's own form (a tool_result with is_error, an error value the
	// framework renders as "Error: <code>"). err is the Go error the
	// framework gets back, if any.
	Invoke(ctx context.Context, callID, name string, args json.RawMessage) (model string, err error)
	// Refresh makes the adapter pick up a change of its source the way a
	// host serving a fleet wires it: the adapter's Refresh from the fleet's
	// OnChange, or nothing where the adapter reads its source itself.
	Refresh() error
}

// Hooks are the host hooks [Conformance] hands the adapter to set in the
// integration's Options (they have the same names there).
type Hooks struct {
	// Call supplies a ToolContext for each call.
	Call func(ctx context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext
	// OnHostError records each host failure reported.
	OnHostError func(ctx context.Context, tool string, err error)
}

// ConformanceOptions states what the framework fixes, where integrations
// differ by necessity rather than by choice.
type ConformanceOptions struct {
	// HostFailureIsError is set where the framework ends the run on a Go
	// error and never shows its text to the model (Eino): a host failure is
	// then returned as the host's own error, not shown as
	// {"error":"host_failure"}.
	HostFailureIsError bool
	// NoCallID is set where the framework passes the tool no call id
	// (Anthropic's tool runner): ToolContext.CallID is then Hooks.Call's.
	NoCallID bool
	// UnknownTool is set where the adapter answers a call of a name it does
	// not serve with {"error":"unknown_tool"} (it dispatches by name, or
	// offers the framework a handler for unknown names).
	UnknownTool bool
}

// waitLimit bounds every wait of the kit, so a broken adapter fails instead
// of hanging the test.
const waitLimit = 10 * time.Second

// Conformance checks the rules every purramcp integration shares against
// the adapter newAdapter builds over src with hooks, one subtest a rule,
// each over a fresh in-memory server:
//
//   - Declarations: the declared tools are the source's registrations, each
//     input schema unchanged, and changing a declaration changes nothing
//     in the next;
//   - Outcomes: a success is [purramcp.ToolResult.ModelJSON] after exactly
//     one tools/call with the arguments unchanged; invalid arguments, a
//     tool error, a scope denial and a JSON-RPC error are {"error":"mcp_..."}
//     with their codes, and no remote or host text reaches the model;
//   - HostFailure: the host's ScopeFunc error is reported to OnHostError
//     and shown as {"error":"host_failure"} (or returned, per
//     ConformanceOptions.HostFailureIsError);
//   - ToolContext: what Hooks.Call returns reaches the ScopeFunc with
//     ToolName set and CallID the framework's;
//   - Canceled: an ended ctx gives [purramcp.ErrCanceled] and no tools/call;
//   - Stale: a stale catalog answers mcp_catalog_stale without a
//     tools/call until the source hands out a rediscovered catalog, whose
//     new tools the adapter then declares and runs;
//   - Gate: a registration that is not ConcurrencySafe never runs
//     concurrently with itself, across a refresh of the source too; a call
//     waiting for its turn ends with ErrCanceled when its ctx does and never
//     runs; a ConcurrencySafe one runs concurrently;
//   - UnknownTool (per ConformanceOptions.UnknownTool): {"error":"unknown_tool"}
//     and no tools/call.
func Conformance(t *testing.T, opts ConformanceOptions, newAdapter func(t *testing.T, src Source, hooks Hooks) Adapter) {
	t.Run("Declarations", func(t *testing.T) { conformDeclarations(t, newAdapter) })
	t.Run("Outcomes", func(t *testing.T) { conformOutcomes(t, newAdapter) })
	t.Run("HostFailure", func(t *testing.T) { conformHostFailure(t, opts, newAdapter) })
	t.Run("ToolContext", func(t *testing.T) { conformToolContext(t, opts, newAdapter) })
	t.Run("Canceled", func(t *testing.T) { conformCanceled(t, newAdapter) })
	t.Run("Stale", func(t *testing.T) { conformStale(t, newAdapter) })
	t.Run("Gate", func(t *testing.T) { conformGate(t, newAdapter) })
	if opts.UnknownTool {
		t.Run("UnknownTool", func(t *testing.T) { conformUnknownTool(t, newAdapter) })
	}
}

// switchSource is the kit's Source: the catalog it hands out is replaced
// as a fleet replaces a recovered server's.
type switchSource struct {
	current atomic.Pointer[purramcp.Catalog]
}

// Registrations returns the current catalog's registrations.
func (s *switchSource) Registrations() []purramcp.ToolDefinition {
	return s.current.Load().Registrations()
}

// kit is one conformance fixture: a server with one tool per outcome, the
// source over its catalog, the adapter and what the hooks saw.
type kit struct {
	srv     *Server
	src     *switchSource
	adapter Adapter
	hostErr error // what the host tool's ScopeFunc returns

	serialEntered chan struct{} // one value per serial call reaching the server
	serialRelease chan struct{} // closed to let serial calls answer
	parallelIn    atomic.Int32
	parallelBoth  chan struct{} // closed once two parallel calls are in
	parallelOnce  sync.Once

	mu       sync.Mutex // guards the fields below
	hostErrs []error    // reported to OnHostError, for tool "host"
	seen     []purramcp.ToolContext
	asked    []string // "callID/tool" of each Hooks.Call
	call     purramcp.ToolContext
}

// newKit starts the fixture's server, discovers it and builds the adapter.
func newKit(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) *kit {
	t.Helper()
	k := &kit{hostErr: errors.New("host " + Canary), serialEntered: make(chan struct{}, 4),
		serialRelease: make(chan struct{}), parallelBoth: make(chan struct{})}
	k.srv = Start(t, Options{},
		Tool{Tool: &mcp.Tool{Name: "remote.search", Description: "Search.", InputSchema: StrictSchema}, Handler: echo},
		Tool{Tool: &mcp.Tool{Name: "remote.fail", InputSchema: StrictSchema}, Handler: failing},
		Tool{Tool: &mcp.Tool{Name: "remote.deny", InputSchema: StrictSchema}, Handler: echo},
		Tool{Tool: &mcp.Tool{Name: "remote.host", InputSchema: StrictSchema}, Handler: echo},
		Tool{Tool: &mcp.Tool{Name: "remote.broken", InputSchema: StrictSchema}, Handler: broken},
		Tool{Tool: &mcp.Tool{Name: "remote.serial", InputSchema: StrictSchema}, Handler: k.serial},
		Tool{Tool: &mcp.Tool{Name: "remote.parallel", InputSchema: StrictSchema}, Handler: k.parallel},
	)
	k.src = &switchSource{}
	k.src.current.Store(k.discover(t))
	hooks := Hooks{
		Call: func(_ context.Context, callID string, def purramcp.ToolDefinition) purramcp.ToolContext {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.asked = append(k.asked, callID+"/"+def.Name)
			return k.call
		},
		OnHostError: func(_ context.Context, tool string, err error) {
			k.mu.Lock()
			defer k.mu.Unlock()
			if tool == "host" {
				k.hostErrs = append(k.hostErrs, err)
			} else {
				k.hostErrs = append(k.hostErrs, errors.New("reported for "+tool))
			}
		},
	}
	k.adapter = newAdapter(t, k.src, hooks)
	return k
}

// bindings binds every fixture tool (and remote.added when the server has
// it) read-only to its short name.
func (k *kit) bindings(added bool) map[string]purramcp.ToolBinding {
	search := Binding("search")
	search.Scope = func(_ context.Context, _ map[string]any, call purramcp.ToolContext) error {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.seen = append(k.seen, call)
		return nil
	}
	deny := Binding("deny")
	deny.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return purramcp.Deny(Canary) }
	host := Binding("host")
	host.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return k.hostErr }
	parallel := Binding("parallel")
	parallel.ConcurrencySafe = true
	b := map[string]purramcp.ToolBinding{
		"remote.search": search, "remote.fail": Binding("fail"), "remote.deny": deny, "remote.host": host,
		"remote.broken": Binding("broken"), "remote.serial": Binding("serial"), "remote.parallel": parallel,
	}
	if added {
		b["remote.added"] = Binding("added")
	}
	return b
}

// discover discovers the fixture's tools on the live session.
func (k *kit) discover(t *testing.T) *purramcp.Catalog {
	return k.srv.Discover(t, k.bindings(false), purramcp.DiscoveryOptions{})
}

// echo answers "hits for <q>".
func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct{ Q string }
	_ = json.Unmarshal(req.Params.Arguments, &args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hits for " + args.Q}}}, nil
}

// failing answers isError with the Canary in its text.
func failing(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom " + Canary}}}, nil
}

// broken answers a JSON-RPC error with the Canary in its message.
func broken(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, errors.New("broken " + Canary)
}

// serial announces each call and answers once released.
func (k *kit) serial(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	k.serialEntered <- struct{}{}
	select {
	case <-k.serialRelease:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "serial"}}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// parallel answers once two calls are in at the same time, and fails a
// call that waited waitLimit for the other.
func (k *kit) parallel(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if k.parallelIn.Add(1) == 2 {
		k.parallelOnce.Do(func() { close(k.parallelBoth) })
	}
	select {
	case <-k.parallelBoth:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "parallel"}}}, nil
	case <-time.After(waitLimit):
		return &mcp.CallToolResult{IsError: true}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// invoke runs one call through the adapter and fails t when the model is
// shown the Canary.
func (k *kit) invoke(t *testing.T, ctx context.Context, callID, name, args string) (string, error) {
	t.Helper()
	model, err := k.adapter.Invoke(ctx, callID, name, json.RawMessage(args))
	if strings.Contains(model, Canary) {
		t.Errorf("%s(%s): the model is shown remote or host text: %s", name, args, model)
	}
	return model, err
}

// expect runs one call and checks the model's text, a nil error and the
// number of tools/call it sent.
func (k *kit) expect(t *testing.T, name, args, want string, sent int) {
	t.Helper()
	before := k.srv.Calls()
	got, err := k.invoke(t, t.Context(), "call_1", name, args)
	if err != nil || got != want {
		t.Errorf("%s(%s) = %q, %v; want %q, nil", name, args, got, err, want)
	}
	if n := k.srv.Calls() - before; n != sent {
		t.Errorf("%s(%s) sent %d tools/call, want %d", name, args, n, sent)
	}
}

func conformDeclarations(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	declared, err := k.adapter.Declared(t.Context())
	if err != nil {
		t.Fatalf("Declared: %v", err)
	}
	defs := k.src.Registrations()
	if len(declared) != len(defs) {
		t.Errorf("declared %d tools, want the %d registrations", len(declared), len(defs))
	}
	for _, d := range defs {
		got, ok := declared[d.Name]
		if !ok {
			t.Errorf("registration %q not declared", d.Name)
			continue
		}
		if want := roundTrip(t, d.InputSchema); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: declared schema %v, want %v unchanged", d.Name, got, want)
		}
	}
}

func conformOutcomes(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	k.expect(t, "search", `{"q":"cats"}`, `{"structured":null,"text":["hits for cats"]}`, 1)
	if args := k.srv.Arguments(); len(args) != 1 || string(args[0]) != `{"q":"cats"}` {
		t.Errorf("the server received arguments %q, want {\"q\":\"cats\"}", args)
	}
	k.expect(t, "search", `{"q":1}`, `{"error":"`+purramcp.CodeInvalidArguments+`"}`, 0)
	k.expect(t, "fail", `{"q":"x"}`, `{"error":"`+purramcp.CodeToolError+`"}`, 1)
	k.expect(t, "deny", `{"q":"x"}`, `{"error":"`+purramcp.CodeScopeDenied+`"}`, 0)
	k.expect(t, "broken", `{"q":"x"}`, `{"error":"`+purramcp.CodeProtocolError+`"}`, 1)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.hostErrs) != 0 {
		t.Errorf("OnHostError called for a boundary failure: %v", k.hostErrs)
	}
}

func conformHostFailure(t *testing.T, opts ConformanceOptions, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	got, err := k.invoke(t, t.Context(), "call_1", "host", `{"q":"x"}`)
	switch {
	case opts.HostFailureIsError:
		if !errors.Is(err, k.hostErr) || got != "" {
			t.Errorf("host failure = %q, %v; want the host's error returned", got, err)
		}
	case err != nil || got != `{"error":"`+purramcp.CodeHostFailure+`"}`:
		t.Errorf("host failure = %q, %v; want {\"error\":\"host_failure\"}, nil", got, err)
	}
	if k.srv.Calls() != 0 {
		t.Errorf("a host failure sent %d tools/call", k.srv.Calls())
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.hostErrs) != 1 || k.hostErrs[0] != k.hostErr {
		t.Errorf("OnHostError got %v, want the host's error once for tool host", k.hostErrs)
	}
}

func conformToolContext(t *testing.T, opts ConformanceOptions, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	k.mu.Lock()
	k.call = purramcp.ToolContext{CallID: "from-host", ToolName: "other", RunID: "run-1", AgentID: "agent-1", LeaseEpoch: 2}
	k.mu.Unlock()
	k.expect(t, "search", `{"q":"x"}`, `{"structured":null,"text":["hits for x"]}`, 1)
	want := purramcp.ToolContext{CallID: "call_1", ToolName: "search", RunID: "run-1", AgentID: "agent-1", LeaseEpoch: 2}
	asked := "call_1/search"
	if opts.NoCallID {
		want.CallID, asked = "from-host", "/search"
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.seen) != 1 || k.seen[0] != want {
		t.Errorf("the ScopeFunc saw %+v, want [%+v]", k.seen, want)
	}
	if len(k.asked) != 1 || k.asked[0] != asked {
		t.Errorf("Hooks.Call was asked %q, want [%q]", k.asked, asked)
	}
}

func conformCanceled(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got, err := k.invoke(t, ctx, "call_1", "search", `{"q":"x"}`)
	if !errors.Is(err, purramcp.ErrCanceled) || !errors.Is(err, context.Canceled) || got != "" {
		t.Errorf("canceled call = %q, %v; want ErrCanceled", got, err)
	}
	if k.srv.Calls() != 0 {
		t.Errorf("a canceled call sent %d tools/call", k.srv.Calls())
	}
}

func conformStale(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	k.expect(t, "search", `{"q":"a"}`, `{"structured":null,"text":["hits for a"]}`, 1)
	old := k.src.current.Load()
	k.srv.MCP.AddTool(&mcp.Tool{Name: "remote.added", InputSchema: StrictSchema}, Text(nil, "added"))
	WaitStale(t, old)
	k.expect(t, "search", `{"q":"b"}`, `{"error":"`+purramcp.CodeCatalogStale+`"}`, 0)
	k.src.current.Store(k.srv.Discover(t, k.bindings(true), purramcp.DiscoveryOptions{}))
	if err := k.adapter.Refresh(); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	declared, err := k.adapter.Declared(t.Context())
	if _, ok := declared["added"]; err != nil || !ok {
		t.Errorf("after the source changed, Declared = %v, %v; want the new tool added", keys(declared), err)
	}
	k.expect(t, "search", `{"q":"c"}`, `{"structured":null,"text":["hits for c"]}`, 1)
	k.expect(t, "added", `{"q":"d"}`, `{"structured":null,"text":["added"]}`, 1)
}

func conformGate(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	first := make(chan string, 1)
	go func() {
		got, err := k.adapter.Invoke(t.Context(), "call_1", "serial", json.RawMessage(`{"q":"1"}`))
		if err != nil {
			got = err.Error()
		}
		first <- got
	}()
	select {
	case <-k.serialEntered:
	case <-time.After(waitLimit):
		t.Fatal("the first serial call never reached the server")
	}
	// The source changes while the first call runs: the second call, on a
	// registration of the same name read after the change, waits its turn.
	k.src.current.Store(k.discover(t))
	if err := k.adapter.Refresh(); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	got, err := k.adapter.Invoke(ctx, "call_2", "serial", json.RawMessage(`{"q":"2"}`))
	cancel()
	if !errors.Is(err, purramcp.ErrCanceled) || got != "" {
		t.Errorf("a serial call waiting for its turn = %q, %v; want ErrCanceled when its ctx ends", got, err)
	}
	if n := k.srv.Calls(); n != 1 {
		t.Errorf("%d tools/call while a serial call was in flight, want 1: calls of one name that is not ConcurrencySafe overlapped", n)
	}
	close(k.serialRelease)
	if got := <-first; got != `{"structured":null,"text":["serial"]}` {
		t.Errorf("the first serial call = %q", got)
	}
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := k.adapter.Invoke(t.Context(), "call_p", "parallel", json.RawMessage(`{"q":"p"}`))
			if err != nil {
				got = err.Error()
			}
			results[i] = got
		}()
	}
	wg.Wait()
	for _, got := range results {
		if got != `{"structured":null,"text":["parallel"]}` {
			t.Errorf("ConcurrencySafe calls = %q; want both to run at once", results)
			break
		}
	}
}

func conformUnknownTool(t *testing.T, newAdapter func(*testing.T, Source, Hooks) Adapter) {
	k := newKit(t, newAdapter)
	k.expect(t, "nosuch", `{}`, `{"error":"unknown_tool"}`, 0)
}

// roundTrip returns v as JSON decodes it, so schemas compare as a vendor
// request carries them.
func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("schema does not encode: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("schema does not decode: %v", err)
	}
	return out
}

// keys returns m's keys.
func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
