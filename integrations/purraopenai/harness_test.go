package purraopenai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"purra.dev/purramcp/internal/vendortest"
	"purra.dev/purramcp/purramcptest"
)

// canary and the schemas are the shared fixture's.
const canary = purramcptest.Canary

var (
	strictSchema = purramcptest.StrictSchema
	looseSchema  = purramcptest.LooseSchema
)

// fakeAPI plays the OpenAI API on 127.0.0.1 (see vendortest.API).
type fakeAPI struct{ *vendortest.API }

// newFakeAPI starts a fake API that answers with replies, in order.
func newFakeAPI(t *testing.T, replies ...string) fakeAPI {
	t.Helper()
	return fakeAPI{vendortest.New(t, "/", `{"error":{"message":"unscripted request","type":"invalid_request_error"}}`, replies...)}
}

// client returns an SDK client that talks only to the fake API.
func (a fakeAPI) client() openai.Client {
	return openai.NewClient(option.WithBaseURL(a.URL()+"/v1/"), option.WithAPIKey("test-key"),
		option.WithMaxRetries(0), option.WithHTTPClient(a.HTTPClient()))
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

// noCanary fails t when any request body sent to the vendor holds the canary.
func noCanary(t *testing.T, bodies []string) { t.Helper(); vendortest.NoCanary(t, canary, bodies) }

// decode decodes a request body.
func decode(t *testing.T, body string) map[string]any { t.Helper(); return vendortest.Decode(t, body) }

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
