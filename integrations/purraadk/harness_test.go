package purraadk_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// canary is in every remote description and every remote error text: it
// may reach the model only inside a declaration's description.
const canary = "CANARY-7f3a"

// searchSchema is the remote input schema of every test tool.
const searchSchema = `{"type":"object","properties":{"q":{"type":"string","maxLength":64}},"required":["q"],"additionalProperties":false}`

// scriptedLLM is a model.LLM that answers request n with turns[n](req) and
// records every request as the JSON the model would be sent.
type scriptedLLM struct {
	mu       sync.Mutex // guards the fields below
	turns    []func(req *model.LLMRequest) *model.LLMResponse
	requests []*model.LLMRequest // deep copies, in order
}

// script appends turns.
func (m *scriptedLLM) script(turns ...func(*model.LLMRequest) *model.LLMResponse) {
	m.mu.Lock()
	m.turns = append(m.turns, turns...)
	m.mu.Unlock()
}

func (m *scriptedLLM) Name() string { return "scripted" }

func (m *scriptedLLM) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		m.mu.Lock()
		n := len(m.requests)
		m.requests = append(m.requests, copyRequest(req))
		var turn func(*model.LLMRequest) *model.LLMResponse
		if n < len(m.turns) {
			turn = m.turns[n]
		}
		m.mu.Unlock()
		if turn == nil {
			yield(nil, errors.New("scripted model: no turn left"))
			return
		}
		yield(turn(req), nil)
	}
}

// copyRequest deep-copies what a model is sent (contents and config) through
// JSON, the way a model client would encode it.
func copyRequest(req *model.LLMRequest) *model.LLMRequest {
	b, err := json.Marshal(struct {
		Contents []*genai.Content
		Config   *genai.GenerateContentConfig
	}{req.Contents, req.Config})
	if err != nil {
		panic(err)
	}
	var out struct {
		Contents []*genai.Content
		Config   *genai.GenerateContentConfig
	}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return &model.LLMRequest{Contents: out.Contents, Config: out.Config}
}

func (m *scriptedLLM) sent() []*model.LLMRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.LLMRequest(nil), m.requests...)
}

// calls is a model turn that calls the given functions.
func calls(fc ...*genai.FunctionCall) func(*model.LLMRequest) *model.LLMResponse {
	return func(*model.LLMRequest) *model.LLMResponse {
		parts := make([]*genai.Part, len(fc))
		for i, c := range fc {
			parts[i] = &genai.Part{FunctionCall: c}
		}
		return &model.LLMResponse{Content: &genai.Content{Role: "model", Parts: parts}}
	}
}

// answer is a final model turn.
func answer(*model.LLMRequest) *model.LLMResponse {
	return &model.LLMResponse{Content: genai.NewContentFromText("done", "model")}
}

func call(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

// newRunner returns an ADK in-memory runner whose agent has ts.
func newRunner(t *testing.T, llm model.LLM, ts tool.Toolset, cfg llmagent.Config) *runner.Runner {
	t.Helper()
	cfg.Name, cfg.Model, cfg.Toolsets = "helper", llm, []tool.Toolset{ts}
	a, err := llmagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.NewInMemory("app", a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// invoke sends one user message through r in session "session" and returns
// the run's error (nil when it completed).
func invoke(ctx context.Context, r *runner.Runner) error {
	for _, err := range r.Run(ctx, "user", "session", genai.NewContentFromText("go", "user"), agent.RunConfig{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// run is one invocation of a fresh runner.
func run(ctx context.Context, t *testing.T, llm model.LLM, ts tool.Toolset, cfg llmagent.Config) error {
	t.Helper()
	return invoke(ctx, newRunner(t, llm, ts, cfg))
}

// responses returns the function responses in req by call id.
func responses(t *testing.T, req *model.LLMRequest) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out[p.FunctionResponse.ID] = p.FunctionResponse.Response
			}
		}
	}
	return out
}

// declarations returns the function declarations in req by name.
func declarations(req *model.LLMRequest) map[string]*genai.FunctionDeclaration {
	out := map[string]*genai.FunctionDeclaration{}
	if req.Config == nil {
		return out
	}
	for _, tl := range req.Config.Tools {
		for _, d := range tl.FunctionDeclarations {
			out[d.Name] = d
		}
	}
	return out
}

// assertNoCanary fails t when the canary is anywhere in what the model was
// sent, other than a declaration's description.
func assertNoCanary(t *testing.T, reqs []*model.LLMRequest) {
	t.Helper()
	for i, req := range reqs {
		c := copyRequest(req)
		for _, d := range declarations(c) {
			d.Description = ""
		}
		b, err := json.Marshal(struct {
			Contents []*genai.Content
			Config   *genai.GenerateContentConfig
		}{c.Contents, c.Config})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), canary) {
			t.Fatalf("request %d carries remote text: %s", i, b)
		}
	}
}

// fixture is a server with one tool per failure kind, and its catalog.
type fixture struct {
	srv     *purramcptest.Server
	catalog *purramcp.Catalog

	mu       sync.Mutex
	contexts []purramcp.ToolContext // as the scope functions saw them
	started  chan struct{}          // receives when the "slow" handler starts
}

func (f *fixture) record(call purramcp.ToolContext) {
	f.mu.Lock()
	f.contexts = append(f.contexts, call)
	f.mu.Unlock()
}

func (f *fixture) seen() []purramcp.ToolContext {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]purramcp.ToolContext(nil), f.contexts...)
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{started: make(chan struct{}, 8)}
	remote := func(name string, h mcp.ToolHandler) purramcptest.Tool {
		return purramcptest.Tool{Tool: &mcp.Tool{Name: "remote." + name, Description: name + " docs. " + canary,
			InputSchema: json.RawMessage(searchSchema)}, Handler: h}
	}
	failing := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom " + canary}}}, nil
	}
	slow := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.started <- struct{}{}
		<-ctx.Done()
		return nil, errors.New("gone " + canary)
	}
	f.srv = purramcptest.Start(t, purramcptest.Options{},
		remote("search", purramcptest.Text(map[string]any{"hits": 2.0}, "first hit", "second hit")),
		remote("fail", failing),
		remote("guarded", purramcptest.Text(nil, "never")),
		remote("host", purramcptest.Text(nil, "never")),
		remote("slow", slow),
	)
	recording := func(b purramcp.ToolBinding, scope purramcp.ScopeFunc) purramcp.ToolBinding {
		b.Scope = func(ctx context.Context, args map[string]any, call purramcp.ToolContext) error {
			f.record(call)
			return scope(ctx, args, call)
		}
		return b
	}
	f.catalog = f.srv.Discover(t, map[string]purramcp.ToolBinding{
		"remote.search": recording(purramcptest.Binding("search"), purramcp.Unscoped),
		"remote.fail":   recording(purramcptest.Binding("fail"), purramcp.Unscoped),
		"remote.guarded": recording(purramcptest.Binding("guarded"), func(context.Context, map[string]any, purramcp.ToolContext) error {
			return purramcp.Deny("not yours " + canary)
		}),
		"remote.host": recording(purramcptest.Binding("host"), func(context.Context, map[string]any, purramcp.ToolContext) error {
			return errors.New("scope store down " + canary)
		}),
		"remote.slow": recording(purramcptest.Binding("slow"), purramcp.Unscoped),
	}, purramcp.DiscoveryOptions{})
	return f
}
