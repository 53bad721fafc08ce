package purraeino_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// canary is in every remote description and every remote error text, and in
// the host's own error: it may reach the model only inside a description.
const canary = "CANARY-7f3a"

// searchSchema is the remote input schema of every fixture tool.
const searchSchema = `{"type":"object","properties":{"q":{"type":"string","maxLength":64}},"required":["q"],"additionalProperties":false}`

// errHost is the host ScopeFunc failure of the "host" tool.
var errHost = errors.New("scope store down " + canary)

// sentTool is a tool as the model is sent it.
type sentTool struct {
	Name   string          `json:"name"`
	Desc   string          `json:"desc"`
	Params json.RawMessage `json:"params"`
}

// sentRequest is one model request: the tools and the messages.
type sentRequest struct {
	Tools    []sentTool        `json:"tools"`
	Messages []*schema.Message `json:"messages"`
}

// scriptedModel is a model.ToolCallingChatModel that answers request n with
// turns[n] and records every request as the model would be sent it.
type scriptedModel struct {
	turns []func() *schema.Message

	mu   sync.Mutex
	sent []sentRequest
}

// boundModel is scriptedModel with tools bound by WithTools.
type boundModel struct {
	m     *scriptedModel
	tools []*schema.ToolInfo
}

func (m *scriptedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &boundModel{m: m, tools: tools}, nil
}

func (m *scriptedModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return (&boundModel{m: m}).Generate(ctx, in, opts...)
}

func (m *scriptedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return (&boundModel{m: m}).Stream(ctx, in, opts...)
}

func (b *boundModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &boundModel{m: b.m, tools: tools}, nil
}

func (b *boundModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tools := b.tools
	if o := model.GetCommonOptions(nil, opts...); o.Tools != nil {
		tools = o.Tools
	}
	req := sentRequest{}
	for _, ti := range tools {
		js, err := ti.ToJSONSchema()
		if err != nil {
			return nil, err
		}
		params, err := json.Marshal(js)
		if err != nil {
			return nil, err
		}
		req.Tools = append(req.Tools, sentTool{Name: ti.Name, Desc: ti.Desc, Params: params})
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &req.Messages); err != nil {
		return nil, err
	}
	b.m.mu.Lock()
	n := len(b.m.sent)
	b.m.sent = append(b.m.sent, req)
	b.m.mu.Unlock()
	if n >= len(b.m.turns) {
		return nil, errors.New("scripted model: no turn left")
	}
	return b.m.turns[n](), nil
}

func (b *boundModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := b.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scriptedModel) requests() []sentRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sentRequest(nil), m.sent...)
}

// calls is a model turn that calls tools; each call is id, name, arguments.
func calls(c ...[3]string) func() *schema.Message {
	return func() *schema.Message {
		msg := &schema.Message{Role: schema.Assistant}
		for _, x := range c {
			msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{ID: x[0], Type: "function",
				Function: schema.FunctionCall{Name: x[1], Arguments: x[2]}})
		}
		return msg
	}
}

// answer is a final model turn.
func answer() *schema.Message { return schema.AssistantMessage("done", nil) }

// toolMessages returns the tool messages' contents by call id.
func toolMessages(msgs []*schema.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == schema.Tool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// assertNoCanary fails t when the canary is anywhere the model was sent,
// other than a tool description.
func assertNoCanary(t *testing.T, reqs []sentRequest) {
	t.Helper()
	for i, req := range reqs {
		for j := range req.Tools {
			req.Tools[j].Desc = ""
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), canary) {
			t.Fatalf("request %d carries remote or host text: %s", i, b)
		}
	}
}

// fixture is a server with one tool per failure kind, and its catalog.
type fixture struct {
	srv     *purramcptest.Server
	catalog *purramcp.Catalog
	started chan struct{} // receives when the "slow" handler starts

	mu       sync.Mutex
	contexts []purramcp.ToolContext // as the scope functions saw them
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
			f.mu.Lock()
			f.contexts = append(f.contexts, call)
			f.mu.Unlock()
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
			return errHost
		}),
		"remote.slow": recording(purramcptest.Binding("slow"), purramcp.Unscoped),
	}, purramcp.DiscoveryOptions{})
	return f
}
