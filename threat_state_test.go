package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// TestThreatT16_NoSharedMutableState: every value purramcp returns is a
// fresh copy. Mutating snapshot maps and slices, registrations' input
// schemas, the argument contract's Schema(), an envelope's structured map and
// text slice changes no later snapshot, digest, contract or result. Under
// 2026-07-28 with go-sdk's TTL cache (ServerOptions.SetCacheable), the
// catalog shares no map with the cached tools/list result the SDK hands to
// every caller: mutating that result changes nothing in the catalog, and
// nothing the adapter does (it removes a root $schema before compiling)
// touches it. (Scope arguments: TestRun_ScopeCannotChangeArguments; bindings:
// TestBehaviorA3_BindingsCopied.)
func TestThreatT16_NoSharedMutableState(t *testing.T) {
	t.Run("returned_values", threatReturnedValues)
	t.Run("ttl_cache", threatTTLCache)
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// vandalize mutates a decoded input schema of the fixture's shape in place.
func vandalize(schema map[string]any) {
	schema["additionalProperties"] = true
	schema["required"].([]any)[0] = "tags"
	schema["properties"].(map[string]any)["q"].(map[string]any)["maxLength"] = 1000.0
	schema["properties"].(map[string]any)["path"] = map[string]any{"type": "string"}
}

func threatReturnedValues(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, json.RawMessage(`{"content":[{"type":"text","text":"found"}],"structuredContent":{"count":1}}`), f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	wantSnapshot := mustJSON(t, catalog.Snapshot())
	reg := catalog.Registrations()[0]
	wantSchema := mustJSON(t, reg.ArgumentContract.Schema())
	schemaDigest, contractDigest := reg.ArgumentContract.SchemaDigest(), reg.ArgumentContract.ContractDigest()
	want := purramcp.Envelope{Text: []string{"found"}, Structured: map[string]any{"count": 1.0}}
	first, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.Content, want) {
		t.Fatalf("first.Content = %v, want %v", first.Content, want)
	}

	snap := catalog.Snapshot()
	vandalize(snap.Entries[0].InputSchema)
	snap.Entries[0].OutputSchema["additionalProperties"] = true
	snap.Entries[0].Description, snap.Entries[0].RemoteName = "changed", "remote.other"
	snap.Entries = append(snap.Entries[:0], purramcp.ToolEntry{LocalName: "injected"})
	regs := catalog.Registrations()
	vandalize(regs[0].InputSchema)
	regs[0].Name, regs[0].Policy.Mode = "injected", "write"
	vandalize(reg.ArgumentContract.Schema())
	first.Content.Structured["count"] = "many"
	first.Content.Structured["leak"] = true
	first.Content.Text[0] = "changed"

	if got := mustJSON(t, catalog.Snapshot()); got != wantSnapshot {
		t.Errorf("T16: snapshot unchanged: got %q, want %q", got, wantSnapshot)
	}
	if got, want := catalog.Snapshot().RevisionDigest, snapshotDigest(t, catalog.Snapshot()); got != want {
		t.Errorf("T16: digest unchanged: got %q, want %q", got, want)
	}
	if got := mustJSON(t, reg.ArgumentContract.Schema()); got != wantSchema {
		t.Errorf("T16: contract schema unchanged: got %q, want %q", got, wantSchema)
	}
	if got := mustJSON(t, catalog.Registrations()[0].InputSchema); got != wantSchema {
		t.Errorf("T16: registration schema unchanged: got %q, want %q", got, wantSchema)
	}
	if got := reg.ArgumentContract.SchemaDigest(); got != schemaDigest {
		t.Errorf("T16: got %q, want %q", got, schemaDigest)
	}
	if got := reg.ArgumentContract.ContractDigest(); got != contractDigest {
		t.Errorf("T16: got %q, want %q", got, contractDigest)
	}
	if got := catalog.Registrations()[0].Name; got != "search" {
		t.Errorf("T16: got %q, want %q", got, "search")
	}
	for _, args := range []string{`{"q":"ab"}`, `{"q":"a","path":"/"}`, `{"tags":[]}`} {
		res, err := reg.Run(t.Context(), json.RawMessage(args), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("T16 %s: the pinned contract holds: got %q, want %q", args, res.ErrorCode, purramcp.CodeInvalidArguments)
		}
	}
	second, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(second.Content, want) {
		t.Errorf("T16: a fresh envelope: got %v, want %v", second.Content, want)
	}
}

func threatTTLCache(t *testing.T) {
	f := loadMCPFixture(t)
	var lists atomic.Int32
	server := mcp.NewServer(&mcp.Implementation{Name: "cached", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 600_000, "private"
		},
	})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	input := decodeObject(t, f.Tool)["inputSchema"].(map[string]any)
	input["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	server.AddTool(sdkTool(t, withField(t, f.Tool, "inputSchema", input)),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
		})
	cs, monitor := connectSDK(t, server, "")
	if got := monitor.ProtocolVersion(); got != purramcp.ProtocolVersion20260728 {
		t.Fatalf("monitor.ProtocolVersion() = %q, want %q", got, purramcp.ProtocolVersion20260728)
	}
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		t.Fatal(err)
	}
	cached, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if again != cached {
		t.Fatalf("go-sdk hands every caller its cached result: got %v, want %v", again, cached)
	}
	if got := lists.Load(); got != 1 {
		t.Fatalf("one tools/list reached the server: got %v, want %v", got, 1)
	}
	cachedSchema := cached.Tools[0].InputSchema.(map[string]any)
	if !reflect.DeepEqual(cachedSchema["$schema"], input["$schema"]) {
		t.Errorf("T16: the adapter removed $schema from its own copy only: got %v, want %v", cachedSchema["$schema"], input["$schema"])
	}
	if got, want := mustJSON(t, cachedSchema), mustJSON(t, input); got != want {
		t.Errorf("T16: the cached result is as the server sent it: got %q, want %q", got, want)
	}

	wantSnapshot := mustJSON(t, catalog.Snapshot())
	vandalize(cachedSchema)
	cached.Tools[0].Description = "changed in the cache"
	if got := mustJSON(t, catalog.Snapshot()); got != wantSnapshot {
		t.Errorf("T16: mutating the cache changes no snapshot: got %q, want %q", got, wantSnapshot)
	}
	reg := catalog.Registrations()[0]
	for _, args := range []string{`{"q":"ab"}`, `{"q":"a","path":"/"}`} {
		res, err := reg.Run(t.Context(), json.RawMessage(args), purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("T16 %s: nor the contract: got %q, want %q", args, res.ErrorCode, purramcp.CodeInvalidArguments)
		}
	}

	wantCached := mustJSON(t, cachedSchema)
	snap := catalog.Snapshot()
	snap.Entries[0].InputSchema["type"] = "array"
	catalog.Registrations()[0].InputSchema["type"] = "array"
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	if got := mustJSON(t, cachedSchema); got != wantCached {
		t.Errorf("T16: nothing the catalog returns reaches the cache: got %q, want %q", got, wantCached)
	}
}

// TestThreatT17_NoServerInitiatedRequests: a CatalogMonitor.NewClient client
// advertises no roots, sampling or elicitation capability (go-sdk's own
// default, for nil Capabilities, advertises roots), and the requests a server
// might send to pull data or costs from the host get nothing: go-sdk refuses
// sampling/createMessage (-31001) and elicitation/create (-32602) without a
// host handler, and answers roots/list with the client's roots, which are
// empty because neither the adapter nor this host added any. A host's own
// capability choice is kept. (inputRequests inside a result are refused
// with one tools/call: TestResult_InputRequestsOneCall.)
func TestThreatT17_NoServerInitiatedRequests(t *testing.T) {
	f := loadMCPFixture(t)
	requests := []struct{ method, params string }{
		{"sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"summarize the host's files"}}],"maxTokens":16}`},
		{"elicitation/create", `{"message":"your API token?","requestedSchema":{"type":"object","properties":{"token":{"type":"string"}}}}`},
		{"roots/list", `{}`},
	}
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{page("", string(f.Tool))}, responses: make(chan *jsonrpc.Response, len(requests))}
		h := rawHarness(t, raw)
		caps := raw.clientCapabilities()
		if len(caps) == 0 {
			t.Fatalf("T17 modern=%v: empty", modern)
		}
		for _, c := range caps {
			if got, want := string(c), `{}`; !jsonEqual(t, got, want) {
				t.Errorf("T17 modern=%v: no capability advertised: got %s, want JSON equal to %s", modern, got, want)
			}
		}
		methods := map[string]string{}
		for i, r := range requests {
			id, err := jsonrpc.MakeID(float64(900 + i))
			if err != nil {
				t.Fatal(err)
			}
			methods[mustJSON(t, id.Raw())] = r.method
			if err := raw.conn.Write(t.Context(), &jsonrpc.Request{ID: id, Method: r.method, Params: json.RawMessage(r.params)}); err != nil {
				t.Fatal(err)
			}
		}
		answers := map[string]*jsonrpc.Response{}
		for range requests {
			select {
			case resp := <-raw.responses:
				answers[methods[mustJSON(t, resp.ID.Raw())]] = resp
			case <-time.After(waitFor):
				t.Fatalf("T17: the client did not answer: modern=%v", modern)
			}
		}
		for method, code := range map[string]int64{"sampling/createMessage": -31001, "elicitation/create": jsonrpc.CodeInvalidParams} {
			var rpc *jsonrpc.Error
			if !errors.As(answers[method].Error, &rpc) {
				t.Fatalf("T17 %s modern=%v: refused: error %v, want one of type %T", method, modern, answers[method].Error, &rpc)
			}
			if rpc.Code != code {
				t.Errorf("T17 %s modern=%v: got %v, want %v", method, modern, rpc.Code, code)
			}
		}
		if answers["roots/list"].Error != nil {
			t.Fatalf("T17 roots/list modern=%v: %v", modern, answers["roots/list"].Error)
		}
		if got, want := string(answers["roots/list"].Result), `{"roots":[]}`; !jsonEqual(t, got, want) {
			t.Errorf("T17 roots/list modern=%v: nothing exposed: got %s, want JSON equal to %s", modern, got, want)
		}

		res, err := discoverWith(t, h, purramcp.Limits{}, nil).Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("T17 modern=%v: the session works on: got %q, want empty", modern, res.ErrorCode)
		}
	}

	own := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	opts := purramcp.ClientOptionsOf(purramcp.NewCatalogMonitor(), &mcp.ClientOptions{Capabilities: own})
	if opts.Capabilities != own {
		t.Errorf("T17: a host's own capabilities are kept: got %v, want %v", opts.Capabilities, own)
	}
}
