package purraopenai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// canary is put in every error text the MCP server and the host produce; it
// must never appear in a request sent to the vendor API.
const canary = "CANARY-remote-secret-93b4"

// Schemas the MCP server declares. strictSchema is eligible for strict as it
// is; looseSchema is not (an optional property and a numeric bound).
var (
	strictSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"],"additionalProperties":false}`)
	looseSchema  = json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","minimum":1},"verbose":{"type":"boolean"}},"required":["id"],"additionalProperties":false}`)
)

// fakeAPI plays the OpenAI API on 127.0.0.1: it answers each request with
// the next scripted reply and records every request's path and body.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies []string
	paths   []string
	bodies  []string
}

// newFakeAPI starts a fake API that answers with replies, in order.
func newFakeAPI(t *testing.T, replies ...string) *fakeAPI {
	t.Helper()
	a := &fakeAPI{replies: replies}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.paths = append(a.paths, r.URL.Path)
	a.bodies = append(a.bodies, string(body))
	var reply string
	if len(a.replies) > 0 {
		reply, a.replies = a.replies[0], a.replies[1:]
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if reply == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"unscripted request","type":"invalid_request_error"}}`)
		return
	}
	_, _ = io.WriteString(w, reply)
}

// Bodies returns every request body received so far.
func (a *fakeAPI) Bodies() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bodies...)
}

// Paths returns every request path received so far.
func (a *fakeAPI) Paths() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.paths...)
}

// client returns an SDK client that talks only to the fake API.
func (a *fakeAPI) client() openai.Client {
	return openai.NewClient(option.WithBaseURL(a.srv.URL+"/v1/"), option.WithAPIKey("test-key"),
		option.WithMaxRetries(0), option.WithHTTPClient(a.srv.Client()))
}

// call is one scripted function call.
type call struct {
	id, name, arguments string
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chatToolCalls is a scripted chat completion asking for the given calls.
func chatToolCalls(calls ...call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = `{"id":"` + c.id + `","type":"function","function":{"name":"` + c.name + `","arguments":` + quote(c.arguments) + `}}`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","logprobs":null,` +
		`"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[` + strings.Join(parts, ",") + `]}}],` +
		`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
}

// chatEnd is a scripted final chat completion.
const chatEnd = `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","logprobs":null,` +
	`"message":{"role":"assistant","content":"done","refusal":null}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

// responsesCalls is a scripted Responses reply asking for the given calls.
func responsesCalls(calls ...call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = `{"type":"function_call","id":"fc_` + c.id + `","call_id":"` + c.id + `","name":"` + c.name +
			`","arguments":` + quote(c.arguments) + `,"status":"completed"}`
	}
	return `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[` +
		strings.Join(parts, ",") + `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`
}

// responsesEnd is a scripted final Responses reply.
const responsesEnd = `{"id":"resp_2","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[` +
	`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}],` +
	`"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`

// fixture is an MCP server with one tool per outcome, discovered.
type fixture struct {
	srv     *purramcptest.Server
	catalog *purramcp.Catalog
	mu      sync.Mutex
	callIDs []string // ToolContext.CallID seen by the search tool's scope
}

// bindings returns the fixture's bindings: search records call ids, deny
// denies, host fails with the canary in its error.
func (f *fixture) bindings() map[string]purramcp.ToolBinding {
	search := purramcptest.Binding("search")
	search.Scope = func(_ context.Context, _ map[string]any, call purramcp.ToolContext) error {
		f.mu.Lock()
		f.callIDs = append(f.callIDs, call.CallID)
		f.mu.Unlock()
		return nil
	}
	deny := purramcptest.Binding("deny")
	deny.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return purramcp.Deny(canary) }
	host := purramcptest.Binding("host")
	host.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return errors.New(canary) }
	return map[string]purramcp.ToolBinding{
		"remote.search": search,
		"remote.lookup": purramcptest.Binding("lookup"),
		"remote.fail":   purramcptest.Binding("fail"),
		"remote.deny":   deny,
		"remote.host":   host,
		"remote.broken": purramcptest.Binding("broken"),
	}
}

// CallIDs returns the call ids the search tool's scope saw.
func (f *fixture) CallIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.callIDs...)
}

// newFixture starts the MCP server and discovers its tools.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Q string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hits for " + args.Q}}}, nil
	}
	failing := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom " + canary}}}, nil
	}
	broken := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("broken " + canary) // a JSON-RPC error with the canary in its message
	}
	f := &fixture{}
	f.srv = purramcptest.Start(t, purramcptest.Options{},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "remote.search", Description: "Search the index.", InputSchema: strictSchema}, Handler: echo},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "remote.lookup", Description: "Look up one record.", InputSchema: looseSchema},
			Handler: purramcptest.Text(map[string]any{"id": 1.0}, "one")},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "remote.fail", Description: "Always fails.", InputSchema: strictSchema}, Handler: failing},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "remote.deny", Description: "Denied by the host.", InputSchema: strictSchema}, Handler: echo},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "remote.host", Description: "Host scope fails.", InputSchema: strictSchema}, Handler: echo},
		purramcptest.Tool{Tool: &mcp.Tool{Name: "remote.broken", Description: "Answers an error.", InputSchema: strictSchema}, Handler: broken},
	)
	f.catalog = f.srv.Discover(t, f.bindings(), purramcp.DiscoveryOptions{})
	return f
}

// makeStale changes the server's tool list and waits until catalog is stale.
func makeStale(t *testing.T, srv *purramcptest.Server, catalog *purramcp.Catalog) {
	t.Helper()
	srv.MCP.AddTool(&mcp.Tool{Name: "remote.added", InputSchema: strictSchema}, purramcptest.Text(nil, "x"))
	purramcptest.WaitStale(t, catalog)
}

// noCanary fails t when any request body sent to the vendor holds the canary.
func noCanary(t *testing.T, bodies []string) {
	t.Helper()
	for i, b := range bodies {
		if strings.Contains(b, canary) {
			t.Fatalf("request %d to the vendor carries remote or host error text: %s", i, b)
		}
	}
}

// decode decodes a request body.
func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, body)
	}
	return m
}

// chatDeclared returns a chat request's function declarations by name.
func chatDeclared(t *testing.T, body string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	tools, _ := decode(t, body)["tools"].([]any)
	for _, raw := range tools {
		tool := raw.(map[string]any)
		if tool["type"] != "function" {
			t.Fatalf("tool type %v", tool["type"])
		}
		fn := tool["function"].(map[string]any)
		out[fn["name"].(string)] = fn
	}
	return out
}

// chatToolMessages returns a chat request's tool messages, in order, as
// "call id: content".
func chatToolMessages(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, raw := range decode(t, body)["messages"].([]any) {
		m := raw.(map[string]any)
		if m["role"] == "tool" {
			out = append(out, m["tool_call_id"].(string)+": "+m["content"].(string))
		}
	}
	return out
}
