package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"sync/atomic"
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
	assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeScopeDenied}, res)
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
	assert.Equal(t, purramcp.CodeScopeDenied, res.ErrorCode, "a wrapped denial still denies")
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

// TestRun_RPCErrors: JSON-RPC errors map by code, never echoing the message.
func TestRun_RPCErrors(t *testing.T) {
	f := loadMCPFixture(t)
	for code, want := range map[int64]string{-32602: purramcp.CodeProtocolError, -32005: purramcp.CodeTransportError, 7: purramcp.CodeProtocolError} {
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
		assert.Equal(t, purramcp.CodeInvalidArguments, res.ErrorCode, "args %s", args)
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

// TestRun_Concurrent: 100 concurrent runs on one registration.
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
	synctest.Test(t, func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.server.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		monitor := purramcp.NewCatalogMonitor()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).Connect(t.Context(), monitor.Transport(ct), nil)
		require.NoError(t, err)
		require.NoError(t, monitor.Attach(cs))
		reg := discoverWith(t, sessionHarness{session: cs, monitor: monitor}, purramcp.Limits{}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Empty(t, res.ErrorCode)
		require.NoError(t, cs.Close())
		_ = ss.Wait()
		synctest.Wait()
		require.Error(t, monitor.Check(0), "the monitor closed with the session")
	})
}

type timeoutNetError struct{}

func (timeoutNetError) Error() string   { return "i/o timeout" }
func (timeoutNetError) Timeout() bool   { return true }
func (timeoutNetError) Temporary() bool { return false }

// TestRun_MapCallError has one row per kind of call failure and the code
// it maps to (timeout, cancel, closed connection, transport, RPC error).
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
		{"adapter_deadline", live, expired, context.DeadlineExceeded, purramcp.CodeTimeout},
		{"deadline_error", live, live, fmt.Errorf("x: %w", context.DeadlineExceeded), purramcp.CodeTimeout},
		{"connection_closed", live, live, fmt.Errorf("%w: calling", mcp.ErrConnectionClosed), purramcp.CodeTransportError},
		{"in_flight_eof", live, live, fmt.Errorf("calling \"tools/call\": %w", io.EOF), purramcp.CodeTransportError},
		{"closed_pipe", live, live, io.ErrClosedPipe, purramcp.CodeTransportError},
		{"closed_file", live, live, fmt.Errorf("write |1: %w", fs.ErrClosed), purramcp.CodeTransportError},
		{"net_error", live, live, &net.OpError{Op: "read", Err: timeoutNetError{}}, purramcp.CodeTransportError},
		{"transport_rejected", live, live, fmt.Errorf("x: %w", &jsonrpc.Error{Code: -32005, Message: "private"}), purramcp.CodeTransportError},
		{"server_rpc_error", live, live, fmt.Errorf("x: %w", &jsonrpc.Error{Code: -32603, Message: "private"}), purramcp.CodeProtocolError},
		{"decode_failure", live, live, &json.UnmarshalTypeError{Value: "string"}, purramcp.CodeResultInvalid},
		{"unknown_content", live, live, errors.New(`unrecognized content type "video"`), purramcp.CodeResultInvalid},
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

// TestGap11_ScopeDecisions:
// the scope sees the validated arguments; nil allows, a Deny error (wrapped
// or not, whatever its reason) denies without a call, an *Error becomes the
// result code, ErrCanceled and a ctx ended by the scope cancel, and any other
// error is the host's failure, returned unchanged.
func TestGap11_ScopeDecisions(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	hostErr := errors.New("host policy store down")
	returning := func(err error) purramcp.ScopeFunc {
		return func(context.Context, map[string]any, purramcp.ToolContext) error { return err }
	}
	for _, tc := range []struct {
		id        string
		scope     func(cancel context.CancelFunc) purramcp.ScopeFunc
		wantCode  string
		wantErr   error
		wantCalls int
	}{
		{"unscoped_allows", func(context.CancelFunc) purramcp.ScopeFunc { return purramcp.Unscoped }, "", nil, 1},
		{"nil_allows", func(context.CancelFunc) purramcp.ScopeFunc { return returning(nil) }, "", nil, 1},
		{"deny", func(context.CancelFunc) purramcp.ScopeFunc { return returning(purramcp.Deny("no access")) }, purramcp.CodeScopeDenied, nil, 0},
		{"deny_blank_reason", func(context.CancelFunc) purramcp.ScopeFunc { return returning(purramcp.Deny(" ")) }, purramcp.CodeScopeDenied, nil, 0},
		{"deny_wrapped", func(context.CancelFunc) purramcp.ScopeFunc {
			return returning(fmt.Errorf("policy: %w", purramcp.Deny("x")))
		}, purramcp.CodeScopeDenied, nil, 0},
		{"adapter_code", func(context.CancelFunc) purramcp.ScopeFunc {
			return returning(&purramcp.Error{Code: purramcp.CodeCatalogStale})
		}, purramcp.CodeCatalogStale, nil, 0},
		{"host_failure", func(context.CancelFunc) purramcp.ScopeFunc { return returning(hostErr) }, "", hostErr, 0},
		{"scope_returns_canceled", func(context.CancelFunc) purramcp.ScopeFunc { return returning(purramcp.ErrCanceled) }, "", purramcp.ErrCanceled, 0},
		{"scope_cancels_ctx", func(cancel context.CancelFunc) purramcp.ScopeFunc {
			return func(context.Context, map[string]any, purramcp.ToolContext) error { cancel(); return nil }
		}, "", purramcp.ErrCanceled, 0},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		var seen map[string]any
		inner := tc.scope(cancel)
		reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
			b.Scope = func(ctx context.Context, args map[string]any, call purramcp.ToolContext) error {
				seen = args
				return inner(ctx, args, call)
			}
		})
		_, before := h.counts()
		res, err := reg.Run(ctx, json.RawMessage(`{"q":"a","n":2.0}`), purramcp.ToolContext{})
		cancel()
		_, after := h.counts()
		assert.Equal(t, map[string]any{"q": "a", "n": 2.0}, seen, "%s: validated arguments", tc.id)
		assert.Equal(t, tc.wantCalls, after-before, "%s: tools/call requests", tc.id)
		if tc.wantErr != nil {
			assert.ErrorIs(t, err, tc.wantErr, tc.id)
			assert.Equal(t, purramcp.ToolResult{}, res, "%s: no result with an error", tc.id)
			if tc.wantErr == hostErr {
				assert.Same(t, hostErr, err, "%s: the host's error, unchanged", tc.id)
			}
			continue
		}
		require.NoError(t, err, tc.id)
		assert.Equal(t, tc.wantCode, res.ErrorCode, tc.id)
		assert.Equal(t, "not_started", res.EffectState, tc.id)
		if tc.wantCode != "" {
			assert.Equal(t, emptyEnvelope, res.Content, tc.id)
		}
	}
}

// effectQuery reads q from the arguments of a scripted call.
func effectQuery(args json.RawMessage) string {
	var a struct {
		Q string `json:"q"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Q
}

// TestGap15_EffectStateNotStarted: every Run
// result, success or any failure code, has effectState "not_started". The
// two error returns (ErrCanceled and a host scope failure) carry the zero
// ToolResult: purra-mcp throws there and returns no result at all. Runs in a
// synctest bubble so the timeout path costs no real time.
func TestGap15_EffectStateNotStarted(t *testing.T) {
	f := loadMCPFixture(t)
	hostErr := errors.New("host failure")
	synctest.Test(t, func(t *testing.T) {
		raw := &rawServer{pages: []string{toolsPage(t, "", f.Tool)}}
		raw.beforeAnswer = func(ctx context.Context, args json.RawMessage) {
			switch effectQuery(args) {
			case "t":
				<-ctx.Done() // never answered before cleanup
			case "c":
				_ = raw.conn.Close()
			}
		}
		raw.call = func(args json.RawMessage) (string, *jsonrpcError) {
			switch effectQuery(args) {
			case "e":
				return `{"content":[{"type":"text","text":"private"}],"isError":true}`, nil
			case "i":
				return `{"content":[{"type":"image","data":"eA==","mimeType":"image/png"}],"structuredContent":{"count":1}}`, nil
			case "w":
				return `{"content":[],"structuredContent":{"count":"1"}}`, nil
			case "r":
				return "", &jsonrpc.Error{Code: -32603, Message: "private"}
			case "x":
				return `{"content":[{"type":"text","text":"` + strings.Repeat("x", 300) + `"}],"structuredContent":{"count":1}}`, nil
			}
			return `{"content":[],"structuredContent":{"count":1}}`, nil
		}
		h := rawHarness(t, raw)
		scoped := func(b *purramcp.ToolBinding) {
			b.Scope = func(_ context.Context, args map[string]any, _ purramcp.ToolContext) error {
				switch args["q"] {
				case "d":
					return purramcp.Deny("no")
				case "f":
					return hostErr
				}
				return nil
			}
		}
		limits := purramcp.Limits{Timeout: time.Second, MaxResultBytes: 256}
		reg := discoverWith(t, h, limits, scoped)
		run := func(reg purramcp.ToolDefinition, q, want string) {
			res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"`+q+`"}`), purramcp.ToolContext{})
			require.NoError(t, err, "q=%s", q)
			assert.Equal(t, want, res.ErrorCode, "q=%s", q)
			assert.Equal(t, "not_started", res.EffectState, "q=%s (%s)", q, want)
		}
		for _, tc := range []struct{ q, want string }{
			{"a", ""}, {"too long", purramcp.CodeInvalidArguments}, {"d", purramcp.CodeScopeDenied},
			{"e", purramcp.CodeToolError}, {"i", purramcp.CodeResultUnsupported}, {"w", purramcp.CodeResultInvalid},
			{"r", purramcp.CodeProtocolError}, {"x", purramcp.CodeResultTooLarge}, {"t", purramcp.CodeTimeout},
		} {
			run(reg, tc.q, tc.want)
		}
		res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"f"}`), purramcp.ToolContext{})
		assert.Same(t, hostErr, err)
		assert.Equal(t, purramcp.ToolResult{}, res, "host failure: no result")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res, err = reg.Run(ctx, argsA, purramcp.ToolContext{})
		assert.ErrorIs(t, err, purramcp.ErrCanceled)
		assert.Equal(t, purramcp.ToolResult{}, res, "canceled: no result")

		h.monitor.OnNotification("notifications/tools/list_changed")
		run(reg, "a", purramcp.CodeCatalogStale)
		fresh := discoverWith(t, h, limits, scoped)
		run(fresh, "c", purramcp.CodeTransportError)
		synctest.Wait()
		require.Error(t, h.monitor.Check(h.monitor.Revision()), "the monitor closed with the session")
		run(fresh, "a", purramcp.CodeConnectionClosed)
	})
}

// TestRun_ArgumentBytes: argument text is bounded by MaxResultBytes, the
// input contract's output limit; nothing is sent.
func TestRun_ArgumentBytes(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	tags := func(n int) json.RawMessage {
		return json.RawMessage(`{"q":"a","tags":[` + strings.TrimSuffix(strings.Repeat(`"x",`, n), ",") + `]}`)
	}
	for _, tc := range []struct {
		limit, tags int
		want        string
	}{
		{256, 40, ""}, {256, 200, purramcp.CodeInvalidArguments}, {0, 200, ""}, {0, 20000, purramcp.CodeInvalidArguments},
	} {
		reg := discoverWith(t, h, purramcp.Limits{MaxResultBytes: tc.limit}, nil)
		_, before := h.counts()
		res, err := reg.Run(t.Context(), tags(tc.tags), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, tc.want, res.ErrorCode, "MaxResultBytes %d, %d tags", tc.limit, tc.tags)
		_, after := h.counts()
		if tc.want != "" {
			assert.Equal(t, before, after, "nothing sent for %d tags", tc.tags)
		}
	}
}

// TestRun_ScopeTypedNilErrorDenies: a ScopeFunc returning a typed-nil
// *purramcp.Error (non-nil as an error, but carrying no code), bare or
// wrapped, or an *Error with an empty code, denies: mcp_scope_denied, no
// panic, nothing sent.
func TestRun_ScopeTypedNilErrorDenies(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for id, scopeErr := range map[string]func() error{
		"typed_nil":         func() error { var e *purramcp.Error; return e },
		"wrapped_typed_nil": func() error { var e *purramcp.Error; return fmt.Errorf("host: %w", e) },
		"empty_code":        func() error { return &purramcp.Error{} },
	} {
		reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
			b.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return scopeErr() }
		})
		var res purramcp.ToolResult
		var err error
		require.NotPanics(t, func() { res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{}) }, id)
		require.NoError(t, err, id)
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeScopeDenied}, res, id)
	}
	_, calls := h.counts()
	assert.Zero(t, calls, "nothing sent")
}

// In-flight errors, cancellation and timeouts. Timeouts run in synctest
// bubbles, so they take no wall-clock time.

// gatedServer answers tools/call only when its gate opens or the call's ctx
// ends (the reference's gate; go-sdk cancels a handler's ctx when the client
// sends notifications/cancelled).
type gatedServer struct {
	*sdkServer
	started, finished chan struct{}
	gate              chan struct{}
	rpcError          bool
	// ctxEnded counts handlers that returned because their ctx ended.
	ctxEnded atomic.Int32
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
			g.ctxEnded.Add(1)
		}
		if g.rpcError {
			return nil, errors.New("private remote exception")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	return g
}

// inFlight runs one reference in-flight mode against a gated go-sdk server at
// version, inside a synctest bubble: start the call, wait until the handler
// runs, apply the mode. Common asserts: one call, the handler finishes, the
// session answers a ping.
func inFlight(t *testing.T, id, mode, version string) {
	f := loadMCPFixture(t)
	synctest.Test(t, func(t *testing.T) {
		g := newGatedServer(t, f.Tool)
		g.rpcError = mode == "rpc"
		h := sdkHarness(t, g.sdkServer, version)
		limits := purramcp.Limits{Timeout: 2 * time.Second}
		if mode == "timeout" {
			limits.Timeout = 100 * time.Millisecond
		}
		reg := discoverWith(t, h, limits, nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, reg)
		<-g.started
		switch mode {
		case "stale":
			g.server.AddTool(sdkTool(t, f.Tool), g.call)
			awaitServerNotify()
			require.Positive(t, h.monitor.Revision(), "%s: list change seen", id)
			close(g.gate)
		case "rpc":
			close(g.gate)
		case "cancel":
			cancel()
		}
		r := <-done
		<-g.finished
		switch mode {
		case "cancel":
			assert.ErrorIs(t, r.err, purramcp.ErrCanceled, id)
			assert.ErrorIs(t, r.err, context.Canceled, id)
			assert.Equal(t, purramcp.ToolResult{}, r.res, "%s: a cancellation is not an error envelope", id)
			assert.EqualValues(t, 1, g.ctxEnded.Load(), "%s: the server saw notifications/cancelled", id)
		case "timeout":
			assert.Equal(t, 100*time.Millisecond, r.elapsed, "%s: Run returns at its timeout", id)
			assert.EqualValues(t, 1, g.ctxEnded.Load(), "%s: go-sdk's cancel notification unblocked the server", id)
		}
		if mode != "cancel" {
			require.NoError(t, r.err, id)
			want := map[string]string{"timeout": purramcp.CodeTimeout, "stale": purramcp.CodeCatalogStale, "rpc": purramcp.CodeProtocolError}[mode]
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: want}, r.res, id)
		}
		lists, calls := h.counts()
		assert.Equal(t, 1, lists, id)
		assert.Equal(t, 1, calls, id)
		assert.NoError(t, h.session.Ping(t.Context(), nil), "%s: session left open", id)
	})
}

// TestBehaviorI1_Timeout: the adapter's own deadline → mcp_timeout, exactly
// at Limits.Timeout.
func TestBehaviorI1_Timeout(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I1", "timeout", version) })
	}
}

// TestBehaviorI2_StaleInFlight: a list change while the call is in flight
// discards the late result → mcp_catalog_stale.
func TestBehaviorI2_StaleInFlight(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I2", "stale", version) })
	}
}

// TestBehaviorI3_RPCError: the handler's private exception arrives as a
// JSON-RPC error → mcp_protocol_error, no remote text.
func TestBehaviorI3_RPCError(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I3", "rpc", version) })
	}
}

// TestBehaviorI5_Cancel: the caller's ctx ends mid-call → ErrCanceled, not an
// envelope; the server handler's ctx is canceled (notifications/cancelled).
func TestBehaviorI5_Cancel(t *testing.T) {
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { inFlight(t, "I5", "cancel", version) })
	}
}

// dropTransport is a server transport whose connection a test can close,
// as the Python reference closes the server's write stream.
type dropTransport struct {
	mcp.Transport

	mu   sync.Mutex // guards conn
	conn mcp.Connection
}

func (d *dropTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	return c, err
}

func (d *dropTransport) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = d.conn.Close()
}

// TestBehaviorI4_Disconnect: the connection goes away mid-call →
// mcp_transport_error; the monitor closes with the session, so the next Run
// fails mcp_connection_closed without a request.
func TestBehaviorI4_Disconnect(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{modern: modern, closeOnCall: true, pages: []string{toolsPage(t, "", f.Tool)}}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.CodeTransportError, res.ErrorCode, "I4 raw modern=%v", modern)
			assert.Equal(t, emptyEnvelope, res.Content)
			synctest.Wait()
			require.Error(t, h.monitor.Check(h.monitor.Revision()), "I4 raw modern=%v: the monitor closed with the session", modern)
			res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.CodeConnectionClosed, res.ErrorCode, "the monitor closed with the session")
			_, calls := h.counts()
			assert.Equal(t, 1, calls, "I4 raw modern=%v", modern)
		})
	}
	forEachVersion(t, func(t *testing.T, version string) {
		synctest.Test(t, func(t *testing.T) {
			g := newGatedServer(t, f.Tool)
			st, ct := mcp.NewInMemoryTransports()
			drop := &dropTransport{Transport: st}
			ss, err := g.server.Connect(t.Context(), drop, nil)
			require.NoError(t, err)
			monitor := purramcp.NewCatalogMonitor()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).
				Connect(t.Context(), monitor.Transport(ct), &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			t.Cleanup(func() {
				_ = cs.Close()
				_ = ss.Wait()
			})
			require.NoError(t, monitor.Attach(cs))
			reg := discoverWith(t, sessionHarness{session: cs, monitor: monitor}, purramcp.Limits{}, nil)
			done := runAsync(t.Context(), reg)
			<-g.started
			drop.drop()
			r := <-done
			close(g.gate)
			<-g.finished
			require.NoError(t, r.err)
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError},
				r.res, "I4 go-sdk server at %s", version)
			synctest.Wait()
			require.Error(t, monitor.Check(monitor.Revision()), "I4 at %s: the monitor closed with the session", version)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.CodeConnectionClosed, res.ErrorCode, "I4 at %s", version)
			_, calls := g.counts()
			assert.Equal(t, 1, calls, "I4 at %s", version)
		})
	})
}

// TestBehaviorJ2_CancelInFlight: canceling while the server holds the call
// rejects with ErrCanceled; on the wire the server receives
// notifications/cancelled for that request, and the session stays usable.
func TestBehaviorJ2_CancelInFlight(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{modern: modern, neverAnswer: true, pages: []string{toolsPage(t, "", f.Tool)}}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			ctx, cancel := context.WithCancel(t.Context())
			done := runAsync(ctx, reg)
			synctest.Wait()
			_, calls := h.counts()
			require.Equal(t, 1, calls, "J2 modern=%v: the call reached the server", modern)
			cancel()
			r := <-done
			assert.ErrorIs(t, r.err, purramcp.ErrCanceled, "J2 modern=%v", modern)
			assert.ErrorIs(t, r.err, context.Canceled, "J2 modern=%v", modern)
			assert.Equal(t, purramcp.ToolResult{}, r.res, "J2: not an error envelope")
			synctest.Wait()
			require.Equal(t, 1, raw.cancelledCalls(), "J2 modern=%v: notifications/cancelled for the call", modern)
			assert.NoError(t, h.session.Ping(t.Context(), nil), "J2 modern=%v", modern)
			_, calls = h.counts()
			assert.Equal(t, 1, calls)
		})
	}
}

// TestBehaviorJ3_CanceledRun: a done ctx sends nothing.
func TestBehaviorJ3_CanceledRun(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
		assert.ErrorIs(t, err, purramcp.ErrCanceled, "J3 at %s", version)
		assert.ErrorIs(t, err, context.Canceled, "J3 at %s", version)
		assert.Equal(t, purramcp.ToolResult{}, res)
		_, calls := h.counts()
		assert.Zero(t, calls, "J3 at %s", version)
	})
}

// TestRun_NoAnswerTimesOut: a tools/call answer that never comes fails
// mcp_timeout exactly at Limits.Timeout (the 30s default costs no real time in
// the bubble); go-sdk cancels the request on the wire and the session stays
// usable.
func TestRun_NoAnswerTimesOut(t *testing.T) {
	f := loadMCPFixture(t)
	for _, timeout := range []time.Duration{100 * time.Millisecond, 0} {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{neverAnswer: true, pages: []string{toolsPage(t, "", f.Tool)}}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{Timeout: timeout}, nil)
			want := timeout
			if want == 0 {
				want = purramcp.DefaultLimits().Timeout
			}
			start := time.Now()
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTimeout}, res)
			assert.Equal(t, want, time.Since(start), "timeout %v", want)
			synctest.Wait()
			require.Equal(t, 1, raw.cancelledCalls(), "timeout %v: request canceled on the wire", want)
			assert.NoError(t, h.session.Ping(t.Context(), nil))
			_, calls := h.counts()
			assert.Equal(t, 1, calls)
		})
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
		assert.Equal(t, purramcp.CodeTimeout, res.ErrorCode)
		assert.Equal(t, 250*time.Millisecond, time.Since(start))
		_, calls := h.counts()
		assert.Zero(t, calls, "the request never reached the server")
	})
}
