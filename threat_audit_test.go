package purramcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// TestThreatT18_AuditWithoutPayloads: with an Observer (SlogObserver here)
// the host has a record of which definition was approved or refused (the
// digest of every attempt that computed one) and of every call (binding,
// digest, outcome code, request count, sizes, latency), and no record
// carries a payload or remote text, although the server puts secret into
// descriptions, schemas, results, isError text and JSON-RPC errors and the
// host into arguments, denial reasons, host failures and approver errors.
func TestThreatT18_AuditWithoutPayloads(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "description", "Search "+secret)
	input := decodeObject(t, f.Tool)["inputSchema"].(map[string]any)
	input["properties"].(map[string]any)["q"] = map[string]any{"type": "string", "description": secret}
	tool = withField(t, tool, "inputSchema", input)
	raw := &rawServer{pages: []string{page("", string(tool))}, call: func(args json.RawMessage) (string, *jsonrpc.Error) {
		switch {
		case strings.Contains(string(args), "iserror"):
			return `{"content":[{"type":"text","text":"` + secret + `"}],"isError":true}`, nil
		case strings.Contains(string(args), "rpc"):
			return "", &jsonrpc.Error{Code: -32000, Message: secret}
		case strings.Contains(string(args), "bad"):
			return `{"content":[{"type":"text","text":"` + secret + `"}],"structuredContent":{"count":"` + secret + `"}}`, nil
		}
		return `{"content":[{"type":"text","text":"` + secret + `"}],"structuredContent":{"count":1}}`, nil
	}}
	h := rawHarness(t, raw)
	var out bytes.Buffer
	observe := purramcp.SlogObserver(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	var events []purramcp.Event
	opts := purramcp.DiscoveryOptions{Monitor: h.monitor, Observer: func(ctx context.Context, e purramcp.Event) {
		events = append(events, e)
		observe(ctx, e)
	}}
	bindings := searchBinding()
	b := bindings["remote.search"]
	b.Scope = func(_ context.Context, args map[string]any, _ purramcp.ToolContext) error {
		switch args["q"] {
		case "deny":
			return purramcp.Deny(secret)
		case "host":
			return errors.New(secret)
		}
		return nil
	}
	bindings["remote.search"] = b

	// A refused approval records the digest it refused.
	refusing := opts
	refusing.Approve = func(context.Context, purramcp.Snapshot) error { return errors.New(secret) }
	_, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings, refusing)
	require.Equal(t, purramcp.CodeCatalogUnapproved, purramcp.CodeOf(err))
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings, opts)
	require.NoError(t, err)
	digest := catalog.Snapshot().RevisionDigest
	reg, _ := catalog.Registration("search")
	argsWith := func(q string) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"q":%q,"tags":[%q]}`, q, secret)) }
	for _, q := range []string{"a", "deny", "host", "iserror", "rpc", "bad"} {
		_, _ = reg.Run(t.Context(), argsWith(q), purramcp.ToolContext{CallID: "c-" + q[:1], RunID: "r"})
	}
	_, _ = reg.Run(t.Context(), json.RawMessage(`{"q":"a",`+fmt.Sprintf("%q", secret)+`:1}`), purramcp.ToolContext{RunID: "r"})

	codes := make([]string, len(events))
	for i, e := range events {
		codes[i] = e.Kind + ":" + e.Code
		assert.Equal(t, digest, e.RevisionDigest, "T18: every record names the definition")
		assert.Equal(t, "fixture", e.ServerID)
		assert.Positive(t, e.Duration, "T18: latency is recorded")
	}
	assert.Equal(t, []string{"discover:mcp_catalog_unapproved", "discover:", "call:", "call:mcp_scope_denied", "call:host_failure",
		"call:mcp_tool_error", "call:mcp_protocol_error", "call:mcp_result_invalid", "call:mcp_invalid_arguments"}, codes)
	assert.Equal(t, []int{1, 0, 0, 1, 1, 1, 0}, func() []int {
		var n []int
		for _, e := range events[2:] {
			n = append(n, e.Requests)
		}
		return n
	}(), "T18: whether a request reached the server")
	assert.NotContains(t, fmt.Sprintf("%+v", events), secret, "T18: no payload or remote text in an Event")
	logged := out.String()
	assert.Equal(t, len(events), strings.Count(logged, "\n"), "one record per event")
	assert.NotContains(t, logged, secret, "T18: nor in the log")
	assert.Contains(t, logged, `"msg":"purramcp.discover","kind":"discover","serverId":"fixture","revisionDigest":"`+digest+`","code":"mcp_catalog_unapproved"`)
	assert.Contains(t, logged, `"level":"WARN","msg":"purramcp.call","kind":"call","serverId":"fixture","revisionDigest":"`+digest+
		`","localName":"search","remoteName":"remote.search","callId":"c-d","runId":"r","code":"mcp_scope_denied"`)
}
