package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

var argsA = json.RawMessage(`{"q":"a"}`)

// discoverWith discovers the fixture tool with bindings edited by edit.
func discoverWith(t testing.TB, h sessionHarness, limits purramcp.Limits, edit func(*purramcp.ToolBinding)) purramcp.ToolDefinition {
	t.Helper()
	bindings := searchBinding()
	b := bindings["remote.search"]
	if edit != nil {
		edit(&b)
	}
	bindings["remote.search"] = b
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
		purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
	require.NoError(t, err)
	return catalog.Registrations()[0]
}

// TestBehaviorH16_ScopeDenied: the scope sees validated arguments; Deny
// fails mcp_scope_denied without a call, and the reason is never shown.
func TestBehaviorH16_ScopeDenied(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	var seen map[string]any
	reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
		b.Scope = func(_ context.Context, args map[string]any, call purramcp.ToolContext) error {
			seen = args
			return purramcp.Deny("no access")
		}
	})
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{RunID: "r"})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_scope_denied"}, res)
	assert.Equal(t, map[string]any{"q": "a"}, seen)
	_, calls := h.counts()
	assert.Zero(t, calls)

	wrapped := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
		b.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error {
			return fmt.Errorf("policy: %w", purramcp.Deny(""))
		}
	})
	res, err = wrapped.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "mcp_scope_denied", res.ErrorCode, "a wrapped denial still denies")
}

// TestRun_ScopeHostFailure: any other scope error is returned unchanged.
func TestRun_ScopeHostFailure(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	boom := errors.New("host policy store down")
	reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
		b.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return boom }
	})
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	assert.Same(t, boom, err)
	assert.Equal(t, purramcp.ToolResult{}, res)
	_, calls := h.counts()
	assert.Zero(t, calls)
}

// TestRun_ScopeCannotChangeArguments: the scope gets a copy.
func TestRun_ScopeCannotChangeArguments(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
		b.Scope = func(_ context.Context, args map[string]any, _ purramcp.ToolContext) error {
			args["q"] = "changed"
			args["secret"] = true
			return nil
		}
	})
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	assert.JSONEq(t, `{"q":"a"}`, string(h.lastArguments()))
}

// TestRun_ScopeWrapper: the registration's Scope checks the monitor and ctx.
func TestRun_ScopeWrapper(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, nil)
	require.NoError(t, reg.Scope(t.Context(), map[string]any{"q": "a"}, purramcp.ToolContext{}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, reg.Scope(ctx, nil, purramcp.ToolContext{}), purramcp.ErrCanceled)
	h.monitor.OnNotification("notifications/tools/list_changed")
	assert.ErrorIs(t, reg.Scope(t.Context(), nil, purramcp.ToolContext{}), purramcp.ErrCatalogStale)
}

// TestBehaviorJ3_CanceledRun: a done ctx sends nothing.
func TestBehaviorJ3_CanceledRun(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
	assert.ErrorIs(t, err, purramcp.ErrCanceled)
	assert.ErrorIs(t, err, context.Canceled)
	_, calls := h.counts()
	assert.Zero(t, calls)
}

// gatedServer answers tools/call only when its gate opens or the call's ctx ends.
type gatedServer struct {
	*sdkServer
	started, finished chan struct{}
	gate              chan struct{}
	rpcError          bool
}

func newGatedServer(t testing.TB, tool json.RawMessage) *gatedServer {
	g := &gatedServer{sdkServer: newSDKServer(t, nil, tool), started: make(chan struct{}, 8),
		finished: make(chan struct{}, 8), gate: make(chan struct{})}
	g.handler = func(ctx context.Context) (*mcp.CallToolResult, error) {
		defer func() { g.finished <- struct{}{} }()
		g.started <- struct{}{}
		select {
		case <-g.gate:
		case <-ctx.Done():
		}
		if g.rpcError {
			return nil, errors.New("private remote exception")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	return g
}

// TestBehaviorI_InFlight runs the in-flight modes (reference-behaviors.md
// I1–I4, J2).
func TestBehaviorI_InFlight(t *testing.T) {
	f := loadMCPFixture(t)
	for _, mode := range []string{"timeout", "stale", "rpc", "cancel"} {
		t.Run(mode, func(t *testing.T) {
			g := newGatedServer(t, f.Tool)
			h := sdkHarness(t, g.sdkServer, "")
			limits := purramcp.Limits{Timeout: 2 * time.Second}
			if mode == "timeout" {
				limits.Timeout = 100 * time.Millisecond
			}
			g.rpcError = mode == "rpc"
			reg := discoverWith(t, h, limits, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type ran struct {
				res purramcp.ToolResult
				err error
			}
			done := make(chan ran, 1)
			go func() {
				res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
				done <- ran{res, err}
			}()
			<-g.started
			switch mode {
			case "stale":
				g.server.AddTool(sdkTool(t, f.Tool), g.call)
				require.Eventually(t, func() bool { return h.monitor.Revision() > 0 }, waitFor, tick)
				close(g.gate)
			case "rpc":
				close(g.gate)
			case "cancel":
				cancel()
			}
			r := <-done
			<-g.finished
			want := map[string]string{"timeout": "mcp_timeout", "stale": "mcp_catalog_stale", "rpc": "mcp_protocol_error"}[mode]
			if mode == "cancel" {
				assert.ErrorIs(t, r.err, purramcp.ErrCanceled)
			} else {
				require.NoError(t, r.err)
				assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: want}, r.res)
			}
			_, calls := h.counts()
			assert.Equal(t, 1, calls)
			assert.NoError(t, h.session.Ping(t.Context(), nil))
		})
	}
}

// TestBehaviorI4_Disconnect: the server goes away mid-call.
func TestBehaviorI4_Disconnect(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range []bool{false, true} {
		raw := &rawServer{modern: modern, closeOnCall: true, pages: []string{toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_transport_error", res.ErrorCode)
		assert.Equal(t, emptyEnvelope, res.Content)
		require.Eventually(t, func() bool { return h.monitor.Check(h.monitor.Revision()) != nil }, waitFor, tick)
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_connection_closed", res.ErrorCode, "the monitor closed with the session")
	}
}

// TestRun_BlockedWriteTimesOut: a peer that stops reading blocks go-sdk's
// write; Run still returns at its timeout, and the abandoned goroutine ends
// when the session closes (synctest fails on a leftover goroutine).
func TestRun_BlockedWriteTimesOut(t *testing.T) {
	f := loadMCPFixture(t)
	synctest.Test(t, func(t *testing.T) {
		raw := &rawServer{stallCalls: true, pages: []string{toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		reg := discoverWith(t, h, purramcp.Limits{Timeout: 250 * time.Millisecond}, nil)
		start := time.Now()
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_timeout", res.ErrorCode)
		assert.Equal(t, 250*time.Millisecond, time.Since(start))
	})
}

// TestRun_ResultShapes covers result conversion beyond the shared rows.
func TestRun_ResultShapes(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	for _, tc := range []struct {
		id, result, want string
		tool             json.RawMessage
		wantEnvelope     *purramcp.Envelope
	}{
		{"structured_without_output_schema", `{"content":[{"type":"text","text":"t"}],"structuredContent":{"a":[1,"x"]}}`, "", textOnly,
			&purramcp.Envelope{Text: []string{"t"}, Structured: map[string]any{"a": []any{1.0, "x"}}}},
		{"structured_array", `{"content":[],"structuredContent":[1]}`, "mcp_result_invalid", textOnly, nil},
		{"structured_string", `{"content":[],"structuredContent":"x"}`, "mcp_result_invalid", textOnly, nil},
		{"unknown_block_type", `{"content":[{"type":"video"}]}`, "mcp_result_invalid", textOnly, nil},
		{"audio_block", `{"content":[{"type":"audio","data":"eA==","mimeType":"audio/wav"}]}`, "mcp_result_unsupported", textOnly, nil},
		{"embedded_resource", `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`, "mcp_result_unsupported", textOnly, nil},
		{"input_required", `{"content":[],"resultType":"input_required","inputRequests":{}}`, "mcp_result_unsupported", textOnly, nil},
		{"wrong_field_type", `{"content":"nope"}`, "mcp_result_invalid", textOnly, nil},
		{"missing_content", `{"structuredContent":{"count":1}}`, "", f.Tool,
			&purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}}},
		{"tool_error_first", `{"content":[{"type":"image","data":"eA==","mimeType":"image/png"}],"isError":true}`, "mcp_tool_error", textOnly, nil},
	} {
		t.Run(tc.id, func(t *testing.T) {
			raw := &rawServer{pages: []string{toolsPage(t, "", tc.tool)},
				call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.ErrorCode, tc.id)
			if tc.wantEnvelope != nil {
				assert.Equal(t, *tc.wantEnvelope, res.Content, tc.id)
			} else {
				assert.Equal(t, emptyEnvelope, res.Content, tc.id)
			}
			assert.NoError(t, h.session.Ping(t.Context(), nil), tc.id)
		})
	}
}

// TestRun_RPCErrors: JSON-RPC errors map by code, never echoing the message.
func TestRun_RPCErrors(t *testing.T) {
	f := loadMCPFixture(t)
	for code, want := range map[int64]string{-32602: "mcp_protocol_error", -32005: "mcp_transport_error", 7: "mcp_protocol_error"} {
		raw := &rawServer{pages: []string{toolsPage(t, "", f.Tool)},
			call: func(json.RawMessage) (string, *jsonrpcError) {
				return "", &jsonrpc.Error{Code: code, Message: "private remote message"}
			}}
		h := rawHarness(t, raw)
		res, err := discoverWith(t, h, purramcp.Limits{}, nil).Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, want, res.ErrorCode, "code %d", code)
	}
}

// TestRun_Arguments: strict argument text; empty means {}.
func TestRun_Arguments(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, nil)
	for _, args := range []string{`{"q":"a","q":"b"}`, `{"q":"\ud800"}`, `{"q":"a","n":9007199254740993}`,
		`[]`, `{"q":"a"} x`, `{"q":"a",}`, ` `, `null`, `{"q":1}`} {
		res, err := reg.Run(t.Context(), json.RawMessage(args), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "mcp_invalid_arguments", res.ErrorCode, "args %s", args)
	}
	_, calls := h.counts()
	assert.Zero(t, calls)

	res, err := reg.Run(t.Context(), json.RawMessage(" {\"q\" : \"a\", \"n\": 2e0}\n"), purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	assert.Equal(t, `{"n":2,"q":"a"}`, string(h.lastArguments()), "validated value, re-encoded compactly")

	open := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object"}}`)
	h2 := sdkHarness(t, newSDKServer(t, json.RawMessage(`{"content":[]}`), open), "")
	reg2 := discoverWith(t, h2, purramcp.Limits{}, nil)
	res, err = reg2.Run(t.Context(), nil, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	assert.Equal(t, `{}`, string(h2.lastArguments()))
}

// TestRun_Concurrent: 100 concurrent runs on one registration (style.md C7).
func TestRun_Concurrent(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	reg := catalog.Registrations()[0]
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err == nil && res.ErrorCode != "" {
				err = errors.New(res.ErrorCode)
			}
			_ = catalog.Stale()
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	_, calls := h.counts()
	assert.Equal(t, 100, calls)
}

// TestRun_NoGoroutineLeft: after the session closes nothing of ours remains.
func TestRun_NoGoroutineLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := loadMCPFixture(t)
	srv := newSDKServer(t, nil, f.Tool)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	monitor := purramcp.NewCatalogMonitor()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	require.NoError(t, monitor.Attach(cs))
	reg := discoverWith(t, sessionHarness{session: cs, monitor: monitor}, purramcp.Limits{}, nil)
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	require.NoError(t, cs.Close())
	_ = ss.Wait()
	require.Eventually(t, func() bool { return monitor.Check(0) != nil }, waitFor, tick)
}

type timeoutNetError struct{}

func (timeoutNetError) Error() string   { return "i/o timeout" }
func (timeoutNetError) Timeout() bool   { return true }
func (timeoutNetError) Temporary() bool { return false }

// TestRun_MapCallError has one row per line of the adapter.md §4 mapping.
func TestRun_MapCallError(t *testing.T) {
	live := context.Background()
	canceled, cancel := context.WithCancel(live)
	cancel()
	expired, cancel2 := context.WithTimeout(live, -time.Second)
	defer cancel2()
	for _, tc := range []struct {
		id           string
		ctx, callCtx context.Context
		err          error
		want         string
	}{
		{"caller_canceled_wins", canceled, canceled, &jsonrpc.Error{Code: 1}, ""},
		{"adapter_deadline", live, expired, context.DeadlineExceeded, "mcp_timeout"},
		{"deadline_error", live, live, fmt.Errorf("x: %w", context.DeadlineExceeded), "mcp_timeout"},
		{"connection_closed", live, live, fmt.Errorf("%w: calling", mcp.ErrConnectionClosed), "mcp_transport_error"},
		{"in_flight_eof", live, live, fmt.Errorf("calling \"tools/call\": %w", io.EOF), "mcp_transport_error"},
		{"closed_pipe", live, live, io.ErrClosedPipe, "mcp_transport_error"},
		{"net_error", live, live, &net.OpError{Op: "read", Err: timeoutNetError{}}, "mcp_transport_error"},
		{"transport_rejected", live, live, fmt.Errorf("x: %w", &jsonrpc.Error{Code: -32005, Message: "private"}), "mcp_transport_error"},
		{"server_rpc_error", live, live, fmt.Errorf("x: %w", &jsonrpc.Error{Code: -32603, Message: "private"}), "mcp_protocol_error"},
		{"decode_failure", live, live, &json.UnmarshalTypeError{Value: "string"}, "mcp_result_invalid"},
		{"unknown_content", live, live, errors.New(`unrecognized content type "video"`), "mcp_result_invalid"},
	} {
		err := purramcp.MapCallError(tc.ctx, tc.callCtx, tc.err)
		if tc.want == "" {
			assert.True(t, err == purramcp.ErrCanceled, tc.id)
			continue
		}
		assert.Equal(t, tc.want, purramcp.CodeOf(err), tc.id)
		var rpc *jsonrpc.Error
		assert.False(t, errors.As(err, &rpc), "%s: no SDK error reachable", tc.id)
		assert.NotContains(t, err.Error(), "private", tc.id)
	}
}
