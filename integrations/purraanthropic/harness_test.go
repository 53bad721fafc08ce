package purraanthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// canary is put in every error text the MCP server and the host produce; it
// must never appear in a request sent to the vendor API.
const canary = "CANARY-remote-secret-5d1e"

// Schemas the MCP server declares. strictSchema is eligible for strict as it
// is; looseSchema is not (an optional property and a numeric bound).
var (
	strictSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"],"additionalProperties":false}`)
	looseSchema  = json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","minimum":1},"verbose":{"type":"boolean"}},"required":["id"],"additionalProperties":false}`)
)

// fakeAPI plays the Anthropic Messages API on 127.0.0.1: it answers each
// request with the next scripted reply and records every request body.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies []string
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
	a.bodies = append(a.bodies, string(body))
	var reply string
	if len(a.replies) > 0 {
		reply, a.replies = a.replies[0], a.replies[1:]
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if reply == "" || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unscripted request"}}`)
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

// client returns an SDK client that talks only to the fake API.
func (a *fakeAPI) client() anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(a.srv.URL), option.WithAPIKey("test-key"),
		option.WithMaxRetries(0), option.WithHTTPClient(a.srv.Client()))
}

// use is one scripted tool_use block.
type use struct {
	id, name, input string
}

// toolUseReply is a scripted assistant message that stops for the given tool uses.
func toolUseReply(uses ...use) string {
	blocks := make([]string, len(uses))
	for i, u := range uses {
		blocks[i] = `{"type":"tool_use","id":"` + u.id + `","name":"` + u.name + `","input":` + u.input + `}`
	}
	return `{"id":"msg_tools","type":"message","role":"assistant","model":"claude-test","content":[` +
		strings.Join(blocks, ",") + `],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
}

// endReply is a scripted final assistant message.
const endReply = `{"id":"msg_end","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`

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

// declaredTools returns the request's tools by name.
func declaredTools(t *testing.T, body string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	tools, _ := decode(t, body)["tools"].([]any)
	for _, raw := range tools {
		tool := raw.(map[string]any)
		out[tool["name"].(string)] = tool
	}
	return out
}

// toolResult is one tool_result block of a request.
type toolResult struct {
	text    string
	isError bool
}

// lastToolResults returns the tool_result blocks of the request's last
// message, by tool_use id.
func lastToolResults(t *testing.T, body string) map[string]toolResult {
	t.Helper()
	msgs := decode(t, body)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	out := map[string]toolResult{}
	for _, raw := range last["content"].([]any) {
		block := raw.(map[string]any)
		if block["type"] != "tool_result" {
			continue
		}
		var texts []string
		for _, c := range block["content"].([]any) {
			texts = append(texts, c.(map[string]any)["text"].(string))
		}
		isError, _ := block["is_error"].(bool)
		out[block["tool_use_id"].(string)] = toolResult{text: strings.Join(texts, ""), isError: isError}
	}
	return out
}

// peakTracker records the peak number of concurrent calls of a tool.
type peakTracker struct {
	inflight, peak atomic.Int32
	both           chan struct{}
	once           sync.Once
}
