package purraanthropic_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"purra.dev/purramcp/internal/vendortest"
	"purra.dev/purramcp/purramcptest"
)

// canary and the schemas are the shared fixture's.
const canary = purramcptest.Canary

var (
	strictSchema = purramcptest.StrictSchema
	looseSchema  = purramcptest.LooseSchema
)

// fakeAPI plays the Anthropic Messages API on 127.0.0.1 (see vendortest.API).
type fakeAPI struct{ *vendortest.API }

// newFakeAPI starts a fake API that answers with replies, in order.
func newFakeAPI(t *testing.T, replies ...string) fakeAPI {
	t.Helper()
	return fakeAPI{vendortest.New(t, "/v1/messages", `{"type":"error","error":{"type":"invalid_request_error","message":"unscripted request"}}`, replies...)}
}

// client returns an SDK client that talks only to the fake API.
func (a fakeAPI) client() anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(a.URL()), option.WithAPIKey("test-key"),
		option.WithMaxRetries(0), option.WithHTTPClient(a.HTTPClient()))
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

// noCanary fails t when any request body sent to the vendor holds the canary.
func noCanary(t *testing.T, bodies []string) { t.Helper(); vendortest.NoCanary(t, canary, bodies) }

// decode decodes a request body.
func decode(t *testing.T, body string) map[string]any { t.Helper(); return vendortest.Decode(t, body) }

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
