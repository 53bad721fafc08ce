package purramcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogUnapproved {
		t.Fatalf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeCatalogUnapproved)
	}
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings, opts)
	if err != nil {
		t.Fatal(err)
	}
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
		if e.RevisionDigest != digest {
			t.Errorf("T18: every record names the definition: got %q, want %q", e.RevisionDigest, digest)
		}
		if e.ServerID != "fixture" {
			t.Errorf("e.ServerID = %q, want %q", e.ServerID, "fixture")
		}
		if e.Duration <= 0 {
			t.Errorf("T18: latency is recorded: got %v, want > 0", e.Duration)
		}
	}
	if want := []string{"discover:mcp_catalog_unapproved", "discover:", "call:", "call:mcp_scope_denied", "call:host_failure",
		"call:mcp_tool_error", "call:mcp_protocol_error", "call:mcp_result_invalid", "call:mcp_invalid_arguments"}; !reflect.DeepEqual(codes, want) {
		t.Errorf("codes = %v, want %v", codes, want)
	}
	if got, want := func() []int {
		var n []int
		for _, e := range events[2:] {
			n = append(n, e.Requests)
		}
		return n
	}(), []int{1, 0, 0, 1, 1, 1, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("T18: whether a request reached the server: got %v, want %v", got, want)
	}
	if strings.Contains(fmt.Sprintf("%+v", events), secret) {
		t.Errorf("T18: no payload or remote text in an Event: %q contains %q", fmt.Sprintf("%+v", events), secret)
	}
	logged := out.String()
	if got, want := strings.Count(logged, "\n"), len(events); got != want {
		t.Errorf("one record per event: got %v, want %v", got, want)
	}
	if strings.Contains(logged, secret) {
		t.Errorf("T18: nor in the log: %q contains %q", logged, secret)
	}
	if !strings.Contains(logged, `"msg":"purramcp.discover","kind":"discover","serverId":"fixture","revisionDigest":"`+digest+`","code":"mcp_catalog_unapproved"`) {
		t.Errorf("%q does not contain %q", logged, `"msg":"purramcp.discover","kind":"discover","serverId":"fixture","revisionDigest":"`+digest+`","code":"mcp_catalog_unapproved"`)
	}
	if !strings.Contains(logged, `"level":"WARN","msg":"purramcp.call","kind":"call","serverId":"fixture","revisionDigest":"`+digest+
		`","localName":"search","remoteName":"remote.search","callId":"c-d","runId":"r","code":"mcp_scope_denied"`) {
		t.Errorf("%q does not contain %q", logged, `"level":"WARN","msg":"purramcp.call","kind":"call","serverId":"fixture","revisionDigest":"`+digest+
			`","localName":"search","remoteName":"remote.search","callId":"c-d","runId":"r","code":"mcp_scope_denied"`)
	}
}
