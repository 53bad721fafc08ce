package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	if err != nil {
		t.Fatal(err)
	}
	if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeScopeDenied}); !reflect.DeepEqual(res, want) {
		t.Errorf("res = %v, want %v", res, want)
	}
	if want := map[string]any{"q": "a"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("seen = %v, want %v", seen, want)
	}
	_, calls := h.counts()
	if calls != 0 {
		t.Errorf("calls = %v, want 0", calls)
	}

	wrapped := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
		b.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error {
			return fmt.Errorf("policy: %w", purramcp.Deny(""))
		}
	})
	res, err = wrapped.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeScopeDenied {
		t.Errorf("a wrapped denial still denies: got %q, want %q", res.ErrorCode, purramcp.CodeScopeDenied)
	}
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
	if err != boom {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if want := (purramcp.ToolResult{}); !reflect.DeepEqual(res, want) {
		t.Errorf("res = %v, want %v", res, want)
	}
	_, calls := h.counts()
	if calls != 0 {
		t.Errorf("calls = %v, want 0", calls)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	if got, want := string(h.lastArguments()), `{"q":"a"}`; !jsonEqual(t, got, want) {
		t.Errorf("got %s, want JSON equal to %s", got, want)
	}
}

// TestRun_ScopeWrapper: the registration's Scope checks the monitor and ctx.
func TestRun_ScopeWrapper(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, nil)
	if err := reg.Scope(t.Context(), map[string]any{"q": "a"}, purramcp.ToolContext{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := reg.Scope(ctx, nil, purramcp.ToolContext{}); !errors.Is(err, purramcp.ErrCanceled) {
		t.Errorf("error %v, want one matching %v", err, purramcp.ErrCanceled)
	}
	h.monitor.OnNotification("notifications/tools/list_changed")
	if err := reg.Scope(t.Context(), nil, purramcp.ToolContext{}); !errors.Is(err, purramcp.ErrCatalogStale) {
		t.Errorf("error %v, want one matching %v", err, purramcp.ErrCatalogStale)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != want {
			t.Errorf("code %d: got %q, want %q", code, res.ErrorCode, want)
		}
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
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeInvalidArguments {
			t.Errorf("args %s: got %q, want %q", args, res.ErrorCode, purramcp.CodeInvalidArguments)
		}
	}
	_, calls := h.counts()
	if calls != 0 {
		t.Errorf("calls = %v, want 0", calls)
	}

	res, err := reg.Run(t.Context(), json.RawMessage(" {\"q\" : \"a\", \"n\": 2e0}\n"), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	if got := string(h.lastArguments()); got != `{"n":2,"q":"a"}` {
		t.Errorf("validated value, re-encoded compactly: got %q, want %q", got, `{"n":2,"q":"a"}`)
	}

	open := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object"}}`)
	h2 := sdkHarness(t, newSDKServer(t, json.RawMessage(`{"content":[]}`), open), "")
	reg2 := discoverWith(t, h2, purramcp.Limits{}, nil)
	res, err = reg2.Run(t.Context(), nil, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	if got := string(h2.lastArguments()); got != `{}` {
		t.Errorf("string(h2.lastArguments()) = %q, want %q", got, `{}`)
	}
}

// TestRun_Concurrent: 100 concurrent runs on one registration.
func TestRun_Concurrent(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Error(err)
		}
	}
	_, calls := h.counts()
	if calls != 100 {
		t.Errorf("calls = %v, want %v", calls, 100)
	}
}

// TestRun_NoGoroutineLeft: after the session closes nothing of ours remains.
func TestRun_NoGoroutineLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := loadMCPFixture(t)
	synctest.Test(t, func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.server.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		monitor := purramcp.NewCatalogMonitor()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).Connect(t.Context(), monitor.Transport(ct), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := monitor.Attach(cs); err != nil {
			t.Fatalf("monitor.Attach(cs): %v", err)
		}
		reg := discoverWith(t, sessionHarness{session: cs, monitor: monitor}, purramcp.Limits{}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != "" {
			t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
		}
		if err := cs.Close(); err != nil {
			t.Fatalf("cs.Close(): %v", err)
		}
		_ = ss.Wait()
		synctest.Wait()
		if err := monitor.Check(0); err == nil {
			t.Fatalf("the monitor closed with the session: got no error")
		}
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
			if err != purramcp.ErrCanceled {
				t.Errorf("%v", tc.id)
			}
			continue
		}
		if got := purramcp.CodeOf(err); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.id, got, tc.want)
		}
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			t.Errorf("%s: no SDK error reachable", tc.id)
		}
		if strings.Contains(err.Error(), "private") {
			t.Errorf("%v: %q contains %q", tc.id, err.Error(), "private")
		}
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
		if want := map[string]any{"q": "a", "n": 2.0}; !reflect.DeepEqual(seen, want) {
			t.Errorf("%s: validated arguments: got %v, want %v", tc.id, seen, want)
		}
		if got := after - before; got != tc.wantCalls {
			t.Errorf("%s: tools/call requests: got %v, want %v", tc.id, got, tc.wantCalls)
		}
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%v: error %v, want one matching %v", tc.id, err, tc.wantErr)
			}
			if want := (purramcp.ToolResult{}); !reflect.DeepEqual(res, want) {
				t.Errorf("%s: no result with an error: got %v, want %v", tc.id, res, want)
			}
			if tc.wantErr == hostErr {
				if err != hostErr {
					t.Errorf("%s: the host's error, unchanged: got %v, want %v", tc.id, err, hostErr)
				}
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.id, err)
		}
		if res.ErrorCode != tc.wantCode {
			t.Errorf("%v: got %q, want %q", tc.id, res.ErrorCode, tc.wantCode)
		}
		if res.EffectState != "not_started" {
			t.Errorf("%v: got %q, want %q", tc.id, res.EffectState, "not_started")
		}
		if tc.wantCode != "" {
			if !reflect.DeepEqual(res.Content, emptyEnvelope) {
				t.Errorf("%v: got %v, want %v", tc.id, res.Content, emptyEnvelope)
			}
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
			if err != nil {
				t.Fatalf("q=%s: %v", q, err)
			}
			if res.ErrorCode != want {
				t.Errorf("q=%s: got %q, want %q", q, res.ErrorCode, want)
			}
			if res.EffectState != "not_started" {
				t.Errorf("q=%s (%s): got %q, want %q", q, want, res.EffectState, "not_started")
			}
		}
		for _, tc := range []struct{ q, want string }{
			{"a", ""}, {"too long", purramcp.CodeInvalidArguments}, {"d", purramcp.CodeScopeDenied},
			{"e", purramcp.CodeToolError}, {"i", purramcp.CodeResultUnsupported}, {"w", purramcp.CodeResultInvalid},
			{"r", purramcp.CodeProtocolError}, {"x", purramcp.CodeResultTooLarge}, {"t", purramcp.CodeTimeout},
		} {
			run(reg, tc.q, tc.want)
		}
		res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"f"}`), purramcp.ToolContext{})
		if err != hostErr {
			t.Errorf("err = %v, want %v", err, hostErr)
		}
		if want := (purramcp.ToolResult{}); !reflect.DeepEqual(res, want) {
			t.Errorf("host failure: no result: got %v, want %v", res, want)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res, err = reg.Run(ctx, argsA, purramcp.ToolContext{})
		if !errors.Is(err, purramcp.ErrCanceled) {
			t.Errorf("error %v, want one matching %v", err, purramcp.ErrCanceled)
		}
		if want := (purramcp.ToolResult{}); !reflect.DeepEqual(res, want) {
			t.Errorf("canceled: no result: got %v, want %v", res, want)
		}

		h.monitor.OnNotification("notifications/tools/list_changed")
		run(reg, "a", purramcp.CodeCatalogStale)
		fresh := discoverWith(t, h, limits, scoped)
		run(fresh, "c", purramcp.CodeTransportError)
		synctest.Wait()
		if err := h.monitor.Check(h.monitor.Revision()); err == nil {
			t.Fatalf("the monitor closed with the session: got no error")
		}
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
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != tc.want {
			t.Errorf("MaxResultBytes %d, %d tags: got %q, want %q", tc.limit, tc.tags, res.ErrorCode, tc.want)
		}
		_, after := h.counts()
		if tc.want != "" {
			if after != before {
				t.Errorf("nothing sent for %d tags: got %v, want %v", tc.tags, after, before)
			}
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
		if r := recovered(func() { res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{}) }); r != nil {
			t.Fatalf("%s: Run panicked: %v", id, r)
		}
		if err != nil {
			t.Fatalf("%v: %v", id, err)
		}
		if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeScopeDenied}); !reflect.DeepEqual(res, want) {
			t.Errorf("%v: got %v, want %v", id, res, want)
		}
	}
	_, calls := h.counts()
	if calls != 0 {
		t.Errorf("nothing sent: got %v, want 0", calls)
	}
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
			if got := h.monitor.Revision(); got <= 0 {
				t.Fatalf("%s: list change seen: got %v, want > 0", id, got)
			}
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
			if !errors.Is(r.err, purramcp.ErrCanceled) {
				t.Errorf("%v: error %v, want one matching %v", id, r.err, purramcp.ErrCanceled)
			}
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("%v: error %v, want one matching %v", id, r.err, context.Canceled)
			}
			if want := (purramcp.ToolResult{}); !reflect.DeepEqual(r.res, want) {
				t.Errorf("%s: a cancellation is not an error envelope: got %v, want %v", id, r.res, want)
			}
			if got := g.ctxEnded.Load(); got != 1 {
				t.Errorf("%s: the server saw notifications/cancelled: got %v, want %v", id, got, 1)
			}
		case "timeout":
			if want := 100 * time.Millisecond; r.elapsed != want {
				t.Errorf("%s: Run returns at its timeout: got %v, want %v", id, r.elapsed, want)
			}
			if got := g.ctxEnded.Load(); got != 1 {
				t.Errorf("%s: go-sdk's cancel notification unblocked the server: got %v, want %v", id, got, 1)
			}
		}
		if mode != "cancel" {
			if r.err != nil {
				t.Fatalf("%v: %v", id, r.err)
			}
			want := map[string]string{"timeout": purramcp.CodeTimeout, "stale": purramcp.CodeCatalogStale, "rpc": purramcp.CodeProtocolError}[mode]
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: want}); !reflect.DeepEqual(r.res, want) {
				t.Errorf("%v: got %v, want %v", id, r.res, want)
			}
		}
		lists, calls := h.counts()
		if lists != 1 {
			t.Errorf("%v: got %v, want %v", id, lists, 1)
		}
		if calls != 1 {
			t.Errorf("%v: got %v, want %v", id, calls, 1)
		}
		if err := h.session.Ping(t.Context(), nil); err != nil {
			t.Errorf("%s: session left open: %v", id, err)
		}
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
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTransportError {
				t.Errorf("I4 raw modern=%v: got %q, want %q", modern, res.ErrorCode, purramcp.CodeTransportError)
			}
			if !reflect.DeepEqual(res.Content, emptyEnvelope) {
				t.Errorf("res.Content = %v, want %v", res.Content, emptyEnvelope)
			}
			synctest.Wait()
			if err := h.monitor.Check(h.monitor.Revision()); err == nil {
				t.Fatalf("I4 raw modern=%v: the monitor closed with the session: got no error", modern)
			}
			res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeConnectionClosed {
				t.Errorf("the monitor closed with the session: got %q, want %q", res.ErrorCode, purramcp.CodeConnectionClosed)
			}
			_, calls := h.counts()
			if calls != 1 {
				t.Errorf("I4 raw modern=%v: got %v, want %v", modern, calls, 1)
			}
		})
	}
	forEachVersion(t, func(t *testing.T, version string) {
		synctest.Test(t, func(t *testing.T) {
			g := newGatedServer(t, f.Tool)
			st, ct := mcp.NewInMemoryTransports()
			drop := &dropTransport{Transport: st}
			ss, err := g.server.Connect(t.Context(), drop, nil)
			if err != nil {
				t.Fatal(err)
			}
			monitor := purramcp.NewCatalogMonitor()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).
				Connect(t.Context(), monitor.Transport(ct), &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cs.Close()
				_ = ss.Wait()
			})
			if err := monitor.Attach(cs); err != nil {
				t.Fatalf("monitor.Attach(cs): %v", err)
			}
			reg := discoverWith(t, sessionHarness{session: cs, monitor: monitor}, purramcp.Limits{}, nil)
			done := runAsync(t.Context(), reg)
			<-g.started
			drop.drop()
			r := <-done
			close(g.gate)
			<-g.finished
			if r.err != nil {
				t.Fatal(r.err)
			}
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError}); !reflect.DeepEqual(r.res, want) {
				t.Errorf("I4 go-sdk server at %s: got %v, want %v", version, r.res, want)
			}
			synctest.Wait()
			if err := monitor.Check(monitor.Revision()); err == nil {
				t.Fatalf("I4 at %s: the monitor closed with the session: got no error", version)
			}
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeConnectionClosed {
				t.Errorf("I4 at %s: got %q, want %q", version, res.ErrorCode, purramcp.CodeConnectionClosed)
			}
			_, calls := g.counts()
			if calls != 1 {
				t.Errorf("I4 at %s: got %v, want %v", version, calls, 1)
			}
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
			if calls != 1 {
				t.Fatalf("J2 modern=%v: the call reached the server: got %v, want %v", modern, calls, 1)
			}
			cancel()
			r := <-done
			if !errors.Is(r.err, purramcp.ErrCanceled) {
				t.Errorf("J2 modern=%v: error %v, want one matching %v", modern, r.err, purramcp.ErrCanceled)
			}
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("J2 modern=%v: error %v, want one matching %v", modern, r.err, context.Canceled)
			}
			if want := (purramcp.ToolResult{}); !reflect.DeepEqual(r.res, want) {
				t.Errorf("J2: not an error envelope: got %v, want %v", r.res, want)
			}
			synctest.Wait()
			if got := raw.cancelledCalls(); got != 1 {
				t.Fatalf("J2 modern=%v: notifications/cancelled for the call: got %v, want %v", modern, got, 1)
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("J2 modern=%v: %v", modern, err)
			}
			_, calls = h.counts()
			if calls != 1 {
				t.Errorf("calls = %v, want %v", calls, 1)
			}
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
		if !errors.Is(err, purramcp.ErrCanceled) {
			t.Errorf("J3 at %s: error %v, want one matching %v", version, err, purramcp.ErrCanceled)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("J3 at %s: error %v, want one matching %v", version, err, context.Canceled)
		}
		if want := (purramcp.ToolResult{}); !reflect.DeepEqual(res, want) {
			t.Errorf("res = %v, want %v", res, want)
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("J3 at %s: got %v, want 0", version, calls)
		}
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
			if err != nil {
				t.Fatal(err)
			}
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTimeout}); !reflect.DeepEqual(res, want) {
				t.Errorf("res = %v, want %v", res, want)
			}
			if gotV := time.Since(start); gotV != want {
				t.Errorf("timeout %v: got %v, want %v", want, gotV, want)
			}
			synctest.Wait()
			if gotV := raw.cancelledCalls(); gotV != 1 {
				t.Fatalf("timeout %v: request canceled on the wire: got %v, want %v", want, gotV, 1)
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("h.session.Ping(t.Context(), nil): %v", err)
			}
			_, calls := h.counts()
			if calls != 1 {
				t.Errorf("calls = %v, want %v", calls, 1)
			}
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
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeTimeout {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
		}
		if got, want := time.Since(start), 250*time.Millisecond; got != want {
			t.Errorf("time.Since(start) = %v, want %v", got, want)
		}
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("the request never reached the server: got %v, want 0", calls)
		}
	})
}
