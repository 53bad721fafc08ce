package purramcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
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
		ss, err := srv.MCP.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		monitor := purramcp.NewCatalogMonitor()
		cs, err := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), monitor.Transport(ct), nil)
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

// TestRun_ScopeDecisions:
// the scope sees the validated arguments; nil allows, a Deny error (wrapped
// or not, whatever its reason) denies without a call, an *Error becomes the
// result code, ErrCanceled and a ctx ended by the scope cancel, and any other
// error is the host's failure, returned unchanged.
func TestRun_ScopeDecisions(t *testing.T) {
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

// TestRun_EffectStateNotStarted: every Run
// result, success or any failure code, has effectState "not_started". The
// two error returns (ErrCanceled and a host scope failure) carry the zero
// ToolResult: purra-mcp throws there and returns no result at all. Runs in a
// synctest bubble so the timeout path costs no real time.
func TestRun_EffectStateNotStarted(t *testing.T) {
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
			g.MCP.AddTool(sdkTool(t, f.Tool), g.call)
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
			ss, err := g.MCP.Connect(t.Context(), drop, nil)
			if err != nil {
				t.Fatal(err)
			}
			monitor := purramcp.NewCatalogMonitor()
			cs, err := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).
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

// Result conversion: a tools/call result becomes an envelope or a code,
// checked in order (isError, block count, result size, content, structured
// output).

// sharedRow runs the mcp_tools.json case id through discovery and Run at
// both negotiated versions (one test per row).
func sharedRow(t *testing.T, id string) {
	f := loadMCPFixture(t)
	var tc *mcpCallCase
	for i := range f.Cases {
		if f.Cases[i].ID == id {
			tc = &f.Cases[i]
		}
	}
	if tc == nil {
		t.Fatalf("case %s in mcp_tools.json: got nil", id)
	}
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			runSharedCase(t, f, *tc, version)
		})
	}
}

func runSharedCase(t *testing.T, f mcpFixture, tc mcpCallCase, version string) sessionHarness {
	var limits purramcp.Limits
	if tc.Limits != nil {
		limits.MaxResultBytes, limits.MaxContentBlocks = tc.Limits.MaxResultBytes, tc.Limits.MaxContentBlocks
	}
	var h sessionHarness
	if tc.Malformed {
		raw := &rawServer{modern: version == purramcp.ProtocolVersion20260728,
			pages: []string{toolsPage(t, "", f.Tool)},
			call:  func(json.RawMessage) (string, *jsonrpcError) { return string(tc.Result), nil }}
		h = rawHarness(t, raw)
	} else {
		h = sdkHarness(t, newSDKServer(t, tc.Result, f.Tool), version)
	}
	if got := h.monitor.ProtocolVersion(); got != version {
		t.Fatalf("case %s: got %q, want %q", tc.ID, got, version)
	}
	catalog, err := discoverDefault(t, h, limits)
	if err != nil {
		t.Fatalf("case %s: %v", tc.ID, err)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != 1 {
		t.Fatalf("len(regs) = %d, want %d", got, 1)
	}
	res, err := regs[0].Run(t.Context(), tc.Arguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
	if err != nil {
		t.Fatalf("case %s: %v", tc.ID, err)
	}

	want := ""
	if tc.ErrorCode != nil {
		want = *tc.ErrorCode
	}
	if res.ErrorCode != want {
		t.Errorf("case %s: got %q, want %q", tc.ID, res.ErrorCode, want)
	}
	if res.EffectState != "not_started" {
		t.Errorf("case %s: got %q, want %q", tc.ID, res.EffectState, "not_started")
	}
	lists, calls := h.counts()
	if lists != 1 {
		t.Errorf("case %s: tools/list requests: got %v, want %v", tc.ID, lists, 1)
	}
	wantCalls := 1
	if want == purramcp.CodeInvalidArguments {
		wantCalls = 0
	}
	if calls != wantCalls {
		t.Errorf("case %s: tools/call requests: got %v, want %v", tc.ID, calls, wantCalls)
	}
	if want == "" {
		var result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
		}
		if err := json.Unmarshal(tc.Result, &result); err != nil {
			t.Fatalf("json.Unmarshal(tc.Result, &result): %v", err)
		}
		text := []string{}
		for _, b := range result.Content {
			text = append(text, b.Text)
		}
		if want := (purramcp.Envelope{Text: text, Structured: result.StructuredContent}); !reflect.DeepEqual(res.Content, want) {
			t.Errorf("case %s: got %v, want %v", tc.ID, res.Content, want)
		}
		if got, want := decodeObject(t, h.lastArguments()), decodeObject(t, tc.Arguments); !reflect.DeepEqual(got, want) {
			t.Errorf("case %s: arguments sent: got %v, want %v", tc.ID, got, want)
		}
	} else {
		if !reflect.DeepEqual(res.Content, emptyEnvelope) {
			t.Errorf("case %s: got %v, want %v", tc.ID, res.Content, emptyEnvelope)
		}
		encoded, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(encoded), "private") {
			t.Errorf("case %s: no remote text: %q contains %q", tc.ID, string(encoded), "private")
		}
		if strings.Contains(string(encoded), "never echo") {
			t.Errorf("case %s: no remote text: %q contains %q", tc.ID, string(encoded), "never echo")
		}
	}
	if err := h.session.Ping(t.Context(), nil); err != nil {
		t.Errorf("case %s: session left open: %v", tc.ID, err)
	}
	return h
}

// TestBehaviorH1_Valid: {q:"猫"} → {text:["found"], structured:{count:1}}.
func TestBehaviorH1_Valid(t *testing.T) { sharedRow(t, "valid") }

// TestBehaviorH2_UnicodeInteger: 😀 is one code point; 1.0 is an integer and
// the server receives n=1.
func TestBehaviorH2_UnicodeInteger(t *testing.T) {
	sharedRow(t, "unicode_integer")
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	reg := discoverWith(t, h, purramcp.Limits{}, nil)
	res, err := reg.Run(t.Context(), json.RawMessage(`{"q":"\ud83d\ude00","n":1.0}`), purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("H2: got %q, want empty", res.ErrorCode)
	}
	if got := string(h.lastArguments()); got != `{"n":1,"q":"😀"}` {
		t.Errorf("H2: the wire carries n=1: got %q, want %q", got, `{"n":1,"q":"😀"}`)
	}
}

// TestBehaviorH3_NoCoercion: a JSON-looking string is not an array.
func TestBehaviorH3_NoCoercion(t *testing.T) { sharedRow(t, "no_coercion") }

// TestBehaviorH4_ExtraArgument: additionalProperties false holds.
func TestBehaviorH4_ExtraArgument(t *testing.T) { sharedRow(t, "extra_argument") }

// TestBehaviorH5_MissingArgument: q is required.
func TestBehaviorH5_MissingArgument(t *testing.T) { sharedRow(t, "missing_argument") }

// TestBehaviorH6_MissingStructured: text that looks like JSON never stands in
// for required structured content.
func TestBehaviorH6_MissingStructured(t *testing.T) { sharedRow(t, "missing_structured") }

// TestBehaviorH7_WrongOutput: {count:"1"} fails the output schema.
func TestBehaviorH7_WrongOutput(t *testing.T) { sharedRow(t, "wrong_output") }

// TestBehaviorH8_ExtraOutput: an extra property fails the output schema and
// is never echoed.
func TestBehaviorH8_ExtraOutput(t *testing.T) { sharedRow(t, "extra_output") }

// TestBehaviorH9_ToolError: isError → mcp_tool_error; remote text not echoed.
func TestBehaviorH9_ToolError(t *testing.T) { sharedRow(t, "tool_error") }

// TestBehaviorH10_ImageBlock: a non-text block is unsupported.
func TestBehaviorH10_ImageBlock(t *testing.T) { sharedRow(t, "image") }

// TestBehaviorH11_ResourceLink: a resource_link block is unsupported.
func TestBehaviorH11_ResourceLink(t *testing.T) { sharedRow(t, "resource_link") }

// TestBehaviorH12_ResultSize: a ~371-byte result over maxResultBytes 256.
func TestBehaviorH12_ResultSize(t *testing.T) { sharedRow(t, "result_size") }

// TestBehaviorH13_ContentCount: two blocks over maxContentBlocks 1.
func TestBehaviorH13_ContentCount(t *testing.T) { sharedRow(t, "content_count") }

// TestBehaviorH14_InvalidWireContent: a text block whose text is a number
// fails go-sdk's decoding → mcp_result_invalid; the session stays usable.
func TestBehaviorH14_InvalidWireContent(t *testing.T) { sharedRow(t, "invalid_wire_content") }

// TestBehaviorH15_TextNeverPromoted: a text-only tool's JSON-looking text
// stays text; structured is null.
func TestBehaviorH15_TextNeverPromoted(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	forEachVersion(t, func(t *testing.T, version string) {
		srv := newSDKServer(t, json.RawMessage(`{"content":[{"type":"text","text":"{\"count\":3}"}]}`), tool)
		h := sdkHarness(t, srv, version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := (purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{`{"count":3}`}}, EffectState: "not_started"}); !reflect.DeepEqual(res, want) {
			t.Errorf("H15 at %s: got %v, want %v", version, res, want)
		}
	})
}

// TestConvert_StructuredWithoutOutputSchema:
// without an output schema, structuredContent passes through unvalidated when
// it is an object within the limits; anything else fails mcp_result_invalid
// (too large: mcp_result_too_large).
func TestConvert_StructuredWithoutOutputSchema(t *testing.T) {
	f := loadMCPFixture(t)
	tool := withField(t, f.Tool, "outputSchema", nil)
	deep := strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)
	for _, tc := range []struct {
		id, structured string
		limits         purramcp.Limits
		want           string
		structuredWant map[string]any
	}{
		{"object", `{"any":[1,"x",null],"nested":{"ok":true}}`, purramcp.Limits{}, "",
			map[string]any{"any": []any{1.0, "x", nil}, "nested": map[string]any{"ok": true}}},
		{"empty_object", `{}`, purramcp.Limits{}, "", map[string]any{}},
		{"null_is_absent", `null`, purramcp.Limits{}, "", nil},
		{"array", `[1]`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"string", `"x"`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"number", `1`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"boolean", `true`, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"too_deep", deep, purramcp.Limits{}, purramcp.CodeResultInvalid, nil},
		{"too_large", `{"s":"` + strings.Repeat("x", 300) + `"}`, purramcp.Limits{MaxResultBytes: 256}, purramcp.CodeResultTooLarge, nil},
	} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)},
					call: func(json.RawMessage) (string, *jsonrpcError) {
						return `{"content":[{"type":"text","text":"t"}],"structuredContent":` + tc.structured + `}`, nil
					}}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, tc.limits, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if res.ErrorCode != tc.want {
					t.Errorf("%s modern=%v: got %q, want %q", tc.id, modern, res.ErrorCode, tc.want)
				}
				if res.EffectState != "not_started" {
					t.Errorf("%v: got %q, want %q", tc.id, res.EffectState, "not_started")
				}
				if tc.want == "" {
					if want := (purramcp.Envelope{Text: []string{"t"}, Structured: tc.structuredWant}); !reflect.DeepEqual(res.Content, want) {
						t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res.Content, want)
					}
				} else {
					if !reflect.DeepEqual(res.Content, emptyEnvelope) {
						t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res.Content, emptyEnvelope)
					}
				}
				_, calls := h.counts()
				if calls != 1 {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, calls, 1)
				}
			}
		})
	}
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
		{"structured_array", `{"content":[],"structuredContent":[1]}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"structured_string", `{"content":[],"structuredContent":"x"}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"unknown_block_type", `{"content":[{"type":"video"}]}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"audio_block", `{"content":[{"type":"audio","data":"eA==","mimeType":"audio/wav"}]}`, purramcp.CodeResultUnsupported, textOnly, nil},
		{"embedded_resource", `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`, purramcp.CodeResultUnsupported, textOnly, nil},
		{"input_required", `{"content":[],"resultType":"input_required","inputRequests":{}}`, purramcp.CodeResultUnsupported, textOnly, nil},
		{"wrong_field_type", `{"content":"nope"}`, purramcp.CodeResultInvalid, textOnly, nil},
		{"missing_content", `{"structuredContent":{"count":1}}`, "", f.Tool,
			&purramcp.Envelope{Text: []string{}, Structured: map[string]any{"count": 1.0}}},
		{"tool_error_first", `{"content":[{"type":"image","data":"eA==","mimeType":"image/png"}],"isError":true}`, purramcp.CodeToolError, textOnly, nil},
	} {
		t.Run(tc.id, func(t *testing.T) {
			raw := &rawServer{pages: []string{toolsPage(t, "", tc.tool)},
				call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, res.ErrorCode, tc.want)
			}
			if tc.wantEnvelope != nil {
				if want := *tc.wantEnvelope; !reflect.DeepEqual(res.Content, want) {
					t.Errorf("%v: got %v, want %v", tc.id, res.Content, want)
				}
			} else {
				if !reflect.DeepEqual(res.Content, emptyEnvelope) {
					t.Errorf("%v: got %v, want %v", tc.id, res.Content, emptyEnvelope)
				}
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("%v: %v", tc.id, err)
			}
		})
	}
}

// TestResult_UndecodableContent: go-sdk fails the whole result for an
// unknown block type, a null block or bad base64; the adapter reports
// mcp_result_invalid after exactly one call and the session stays usable.
func TestResult_UndecodableContent(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct{ id, result string }{
		{"unknown_type", `{"content":[{"type":"video","data":"private"}],"structuredContent":{"count":1}}`},
		{"future_type_after_text", `{"content":[{"type":"text","text":"ok"},{"type":"hologram"}],"structuredContent":{"count":1}}`},
		{"null_block", `{"content":[null],"structuredContent":{"count":1}}`},
		{"bad_base64", `{"content":[{"type":"image","data":"%%%","mimeType":"image/png"}],"structuredContent":{"count":1}}`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", f.Tool)},
					call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, purramcp.Limits{}, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultInvalid}); !reflect.DeepEqual(res, want) {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res, want)
				}
				lists, calls := h.counts()
				if lists != 1 {
					t.Errorf("%v: got %v, want %v", tc.id, lists, 1)
				}
				if calls != 1 {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, calls, 1)
				}
				if err := h.session.Ping(t.Context(), nil); err != nil {
					t.Errorf("%s modern=%v: session alive: %v", tc.id, modern, err)
				}
				if err := h.monitor.Check(0); err != nil {
					t.Errorf("%s: the monitor stays open: %v", tc.id, err)
				}
			}
		})
	}
}

// TestResult_InputRequestsOneCall: a result asking for more input fails
// mcp_result_unsupported after exactly one tools/call, because
// CatalogMonitor.NewClient disables go-sdk's multi-round-trip retries. The
// control client, built by mcp.NewClient, sends tools/call again.
func TestResult_InputRequestsOneCall(t *testing.T) {
	f := loadMCPFixture(t)
	elicit := `{"content":[],"resultType":"input_required","inputRequests":{"q1":{"method":"elicitation/create",` +
		`"params":{"message":"private question","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s"}`
	loadShed := `{"content":[],"resultType":"input_required","inputRequests":{}}`
	for _, tc := range []struct{ id, result string }{{"elicitation", elicit}, {"load_shedding", loadShed}} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", f.Tool)},
					call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, purramcp.Limits{}, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeResultUnsupported}); !reflect.DeepEqual(res, want) {
					t.Errorf("%s modern=%v: got %v, want %v", tc.id, modern, res, want)
				}
				_, calls := h.counts()
				if calls != 1 {
					t.Errorf("%s modern=%v: exactly one tools/call reached the server: got %v, want %v", tc.id, modern, calls, 1)
				}
			}
		})
	}

	// Control: go-sdk's default client retries load shedding (3 requests),
	// which is why Attach refuses a session whose client the monitor did not
	// build (mcp_binding_invalid), so no catalog can be discovered over it.
	raw := &rawServer{pages: []string{toolsPage(t, "", f.Tool)},
		call: func(json.RawMessage) (string, *jsonrpcError) { return loadShed, nil }}
	monitor := purramcp.NewCatalogMonitor()
	cs, err := raw.startWith(t, mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil), monitor)
	if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
		t.Errorf("control: a client the monitor did not build: got %q, want %q", got, purramcp.CodeBindingInvalid)
	}
	_, err = purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
	if got := purramcp.CodeOf(err); got != purramcp.CodeNotInitialized {
		t.Errorf("control: the monitor never accepted a version: got %q, want %q", got, purramcp.CodeNotInitialized)
	}
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remote.search", Arguments: map[string]any{"a": 1}})
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	_, calls := raw.counts()
	if calls != 3 {
		t.Errorf("control: without the monitor's options go-sdk re-sends tools/call: got %v, want %v", calls, 3)
	}
}

// TestResult_ResultSizeIsJSSize: the result size Run charges, with the
// structured content measured apart from the result, equals jssize.Size of
// the whole result for every fixture result and values JavaScript and Go
// spell differently.
func TestResult_ResultSizeIsJSSize(t *testing.T) {
	f := loadMCPFixture(t)
	var results []*mcp.CallToolResult
	for _, tc := range f.Cases {
		var r mcp.CallToolResult
		if json.Unmarshal(tc.Result, &r) == nil {
			results = append(results, &r)
		}
	}
	if got := len(results); got != 13 {
		t.Fatalf("decodable fixture results: len = %d, want %d", got, 13)
	}
	results = append(results, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<\u2029>"}},
		StructuredContent: map[string]any{"z": math.Copysign(0, -1), "s": "\xff<&>", "a": []any{1e-7, nil}},
		IsError:           true}, &mcp.CallToolResult{})
	for i, r := range results {
		want, err := jssize.Size(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := purramcp.ResultSize(r, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("result %d: got %v, want %v", i, got, want)
		}
		for _, limit := range []int{0, want / 2, want - 1, want} {
			n, err := purramcp.ResultSize(r, limit)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := n > limit, want > limit; got != want {
				t.Errorf("result %d under limit %d: %d: got %v, want %v", i, limit, n, got, want)
			}
			if want <= limit {
				if n != want {
					t.Errorf("result %d at limit %d: got %v, want %v", i, limit, n, want)
				}
			}
		}
	}
}

// TestValidateWithMember_MatchesSnapshotPath is the differential test of
// Run's result validation: validating the decoded envelope in place (member
// names ordered as a snapshot orders them, containers kept when already in
// decoded form) reaches exactly the outcome of the path it replaced,
// ValidateValue of the envelope and then of its structured member, each on
// a fresh snapshot: the same error code, keyword and path, including which
// violation comes first and when the work budget runs out, and an equal
// result. Random schemas inside the profile, values decoded by
// encoding/json as go-sdk decodes results, some respelled as −0, under
// roomy and tight limits.
func TestValidateWithMember_MatchesSnapshotPath(t *testing.T) {
	const schemas, valuesPerSchema = 400, 10
	var kept, copied, failed int
	for i := range schemas {
		g := newDiffGen(uint64(5000 + i))
		root := g.schema(3)
		root["type"] = "object"
		if _, ok := root["properties"]; !ok && g.chance(0.6) {
			g.children(root, 3)
		}
		limits := purramcp.ContractLimits{ValidationSteps: 100000}
		switch i % 4 {
		case 1:
			limits.ValidationSteps = 1 + g.r.IntN(40) // the budget runs out part way
		case 2:
			limits.OutputNodes, limits.OutputDepth = 4+g.r.IntN(30), 2+g.r.IntN(4)
		}
		inner, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "inner", SchemaVersion: "1",
			Schema: json.RawMessage(g.encode(nil, root)), Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		outer, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "envelope", SchemaVersion: "1",
			Schema: map[string]any{"type": "object"}, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		for j := range valuesPerSchema {
			label := "schema #" + strconv.Itoa(i) + " value #" + strconv.Itoa(j)
			text := g.encode(nil, g.objectFor(root, 4))
			if j%3 == 0 {
				text = g.encode(nil, g.valueFor(root, 4))
			}
			envelope := func() map[string]any {
				var structured any
				if err := json.Unmarshal(text, &structured); err != nil {
					t.Fatalf("%v: %v", label, err)
				}
				if j%5 == 4 {
					if m, ok := structured.(map[string]any); ok {
						m["negativeZero"] = math.Copysign(0, -1)
					}
				}
				return map[string]any{"text": []any{"one", "two"}, "structured": structured}
			}
			want, wantErr := outer.ValidateValue(envelope())
			if wantErr == nil {
				_, wantErr = inner.ValidateValue(want["structured"])
				if wantErr != nil {
					want = nil
				}
			}
			value := envelope()
			got, err := purramcp.ValidateWithMember(outer, value, inner)
			if !reflect.DeepEqual(err, wantErr) {
				t.Fatalf("%s: %s: got %v, want %v", label, text, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s: got %v, want %v", label, text, got, want)
			}
			switch {
			case err != nil:
				failed++
			case reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(value).UnsafePointer():
				kept++
			default:
				copied++
			}
		}
	}
	t.Logf("%d kept in place, %d copied, %d failed", kept, copied, failed)
	if kept <= 500 {
		t.Fatalf("kept = %v, want > %v", kept, 500)
	}
	if copied <= 50 {
		t.Fatalf("copied = %v, want > %v", copied, 50)
	}
	if failed <= 500 {
		t.Fatalf("failed = %v, want > %v", failed, 500)
	}
}

// Fuzz targets for the MCP boundary: result conversion here, discovery
// pages in discover_test.go and bindings in bindings_test.go. Each iteration
// connects its own in-memory session, closed at the iteration's cleanup,
// and checks that no goroutine outlives it.

// fuzzResultCodes are the codes Run may report for a result the server
// answered: conversion failures and an undecodable result.
var fuzzResultCodes = []string{purramcp.CodeResultInvalid, purramcp.CodeResultTooLarge, purramcp.CodeResultUnsupported,
	purramcp.CodeToolError}

// fuzzResultSchemas are the output schemas FuzzConvertResult chooses from:
// the fixture tool's, none, the declared-dialect tool's (a root $schema),
// benchOutputSchema and the smallest object schema.
func fuzzResultSchemas(t testing.TB, fx mcpFixture) []json.RawMessage {
	t.Helper()
	outputOf := func(tool json.RawMessage) json.RawMessage {
		var rt rawTool
		if err := json.Unmarshal(tool, &rt); err != nil {
			t.Fatalf("json.Unmarshal(tool, &rt): %v", err)
		}
		if len(rt.OutputSchema) == 0 {
			t.Fatalf("rt.OutputSchema is empty")
		}
		return rt.OutputSchema
	}
	return []json.RawMessage{outputOf(fx.Tool), nil, outputOf(fx.DeclaredDialectTool),
		json.RawMessage(benchOutputSchema), json.RawMessage(`{"type":"object"}`)}
}

// fuzzResultSeed is one FuzzConvertResult input.
type fuzzResultSeed struct {
	result                    string
	schema                    uint8
	schemaText                string
	maxResultBytes, maxBlocks uint32
	modern                    bool
}

// fuzzResultSeeds returns every mcp_tools.json call case under the fixture
// schema at both handshakes, with its limits, and every structured_output.json
// case text as structured content under its own schema text.
func fuzzResultSeeds(t testing.TB, fx mcpFixture) []fuzzResultSeed {
	t.Helper()
	var seeds []fuzzResultSeed
	for _, tc := range fx.Cases {
		s := fuzzResultSeed{result: string(tc.Result)}
		if tc.Limits != nil {
			s.maxResultBytes, s.maxBlocks = uint32(tc.Limits.MaxResultBytes), uint32(tc.Limits.MaxContentBlocks)
		}
		seeds = append(seeds, s)
		s.modern = true
		seeds = append(seeds, s)
	}
	for i, tc := range loadOutputVectors(t).Cases {
		seeds = append(seeds, fuzzResultSeed{
			result: `{"content":[{"type":"text","text":"case"}],"structuredContent":` + tc.Text + `}`,
			schema: uint8(i), schemaText: string(tc.Schema), modern: i%2 == 0})
	}
	return seeds
}

// FuzzConvertResult serves fuzzed tools/call result JSON from the raw
// scripted server for a tool whose output schema is chosen from the fixture
// or, when it compiles, is fuzzed schema text, under fuzzed MaxResultBytes
// and MaxContentBlocks. Run sends exactly one tools/call and
// never returns an error; a failure is a known result code with the empty
// envelope, predicted where the order of the checks decides it (isError, then the
// block count, then the result size, counted independently from the
// go-sdk decoding); a success has the text blocks in order and structured
// content that passes the output contract, and fits both limits. The
// fixture's own cases keep their expected codes.
func FuzzConvertResult(f *testing.F) {
	fx := loadMCPFixture(f)
	schemas := fuzzResultSchemas(f, fx)
	seeds := fuzzResultSeeds(f, fx)
	if got := len(seeds); got != 2*14+62 {
		f.Fatalf("seed count: len = %d, want %d", got, 2*14+62)
	}
	for _, s := range seeds {
		f.Add([]byte(s.result), s.schema, s.schemaText, s.maxResultBytes, s.maxBlocks, s.modern)
	}
	f.Add([]byte(`{}`), uint8(1), "", uint32(6), uint32(0), true) // arguments over MaxResultBytes
	expected := map[string]string{}                               // compact fixture result → code, under the fixture schema and limits
	for _, tc := range fx.Cases {
		if tc.ErrorCode == nil || *tc.ErrorCode != purramcp.CodeInvalidArguments {
			var buf bytes.Buffer
			if err := json.Compact(&buf, tc.Result); err != nil {
				f.Fatalf("json.Compact(&buf, tc.Result): %v", err)
			}
			expected[buf.String()] = ""
			if tc.ErrorCode != nil {
				expected[buf.String()] = *tc.ErrorCode
			}
		}
	}
	f.Fuzz(func(t *testing.T, result []byte, schema uint8, schemaText string, maxResultBytes, maxBlocks uint32,
		modern bool) {
		if !json.Valid(result) {
			return // the raw server can only send JSON; undecodable results are behaviour tests
		}
		output, fromFixture := schemas[int(schema)%len(schemas)], true
		if schemaText != "" && json.Valid([]byte(schemaText)) {
			if _, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
				Schema: json.RawMessage(schemaText)}); err == nil {
				output, fromFixture = json.RawMessage(schemaText), false
			}
		}
		limits := purramcp.Limits{MaxResultBytes: fuzzLimit(maxResultBytes, 65536),
			MaxContentBlocks: fuzzLimit(maxBlocks, 128), Timeout: 10 * time.Second}
		fuzzNoGoroutineGrowth(t)
		tool := withField(t, fx.Tool, "outputSchema", nil)
		if output != nil {
			tool = withField(t, fx.Tool, "outputSchema", output)
		}
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)},
			call: func(json.RawMessage) (string, *jsonrpcError) { return string(result), nil }}
		h := rawHarness(t, raw)
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fuzz", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
		if !fromFixture && err != nil {
			// A compiled schema may still be over MaxSchemaBytes as compact JSON.
			if got := purramcp.CodeOf(err); got != purramcp.CodeSchemaUnsupported {
				t.Fatalf("discovery of schema %q: got %q, want %q", schemaText, got, purramcp.CodeSchemaUnsupported)
			}
			return
		}
		if err != nil {
			t.Fatalf("discovery of output schema %s: %v", output, err)
		}

		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), fuzzArguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
		if err != nil {
			t.Fatalf("Run with result %q: %v", result, err)
		}
		if res.EffectState != "not_started" {
			t.Fatalf("result %q: got %q, want %q", result, res.EffectState, "not_started")
		}
		lists, calls := h.counts()
		if _, err := fuzzInputContract(t, fx, limits).Parse(string(fuzzArguments)); err != nil {
			// MaxResultBytes also bounds the argument text.
			if got, want := [2]int{lists, calls}, [2]int{1, 0}; !reflect.DeepEqual(got, want) {
				t.Fatalf("tools/list and tools/call requests: got %v, want %v", got, want)
			}
			if res.ErrorCode != purramcp.CodeInvalidArguments {
				t.Fatalf("MaxResultBytes %d: got %q, want %q", limits.MaxResultBytes, res.ErrorCode, purramcp.CodeInvalidArguments)
			}
			return
		}
		if got, want := [2]int{lists, calls}, [2]int{1, 1}; !reflect.DeepEqual(got, want) {
			t.Fatalf("tools/list and tools/call requests for %q: got %v, want %v", result, got, want)
		}

		var buf bytes.Buffer
		if err := json.Compact(&buf, result); err != nil {
			t.Fatalf("json.Compact(&buf, result): %v", err)
		}
		if want, ok := expected[buf.String()]; ok && fromFixture && schema%uint8(len(schemas)) == 0 &&
			fuzzFixtureLimits(fx, buf.String(), limits) {
			if res.ErrorCode != want {
				t.Errorf("fixture result %s: got %q, want %q", result, res.ErrorCode, want)
			}
		}
		fuzzCheckResult(t, result, output, limits, res)
	})
}

// fuzzArguments are the arguments of every FuzzConvertResult call.
var fuzzArguments = json.RawMessage(`{"q":"a"}`)

// fuzzInputContract is the fixture tool's input contract under limits, as
// discovery compiles it: MaxResultBytes bounds the argument text and value.
func fuzzInputContract(t *testing.T, fx mcpFixture, limits purramcp.Limits) *purramcp.Contract {
	resolved, err := purramcp.ResolveLimits(limits)
	if err != nil {
		t.Fatal(err)
	}
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(fx.Tool, &tool); err != nil {
		t.Fatalf("json.Unmarshal(fx.Tool, &tool): %v", err)
	}
	c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
		Schema: tool.InputSchema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fuzzFixtureLimits reports whether limits are the ones the fixture case
// with this compact result runs under.
func fuzzFixtureLimits(fx mcpFixture, result string, limits purramcp.Limits) bool {
	for _, tc := range fx.Cases {
		var buf bytes.Buffer
		if json.Compact(&buf, tc.Result) != nil || buf.String() != result {
			continue
		}
		var want purramcp.Limits
		if tc.Limits != nil {
			want.MaxResultBytes, want.MaxContentBlocks = tc.Limits.MaxResultBytes, tc.Limits.MaxContentBlocks
		}
		return want.MaxResultBytes == limits.MaxResultBytes && want.MaxContentBlocks == limits.MaxContentBlocks
	}
	return false
}

// fuzzCheckResult checks Run's result against result as go-sdk decodes it.
func fuzzCheckResult(t *testing.T, result []byte, output json.RawMessage, limits purramcp.Limits,
	res purramcp.ToolResult) {
	resolved, err := purramcp.ResolveLimits(limits)
	if err != nil {
		t.Fatal(err)
	}
	var decoded mcp.CallToolResult
	decodeErr := json.Unmarshal(result, &decoded)
	if res.ErrorCode != "" {
		if !slices.Contains(fuzzResultCodes, res.ErrorCode) {
			t.Fatalf("result %q: %v does not contain %q", result, fuzzResultCodes, res.ErrorCode)
		}
		if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started",
			ErrorCode: res.ErrorCode}); !reflect.DeepEqual(res, want) {
			t.Fatalf("failed result for %q: got %v, want %v", result, res, want)
		}
	}
	if decodeErr != nil {
		if res.ErrorCode != purramcp.CodeResultInvalid {
			t.Fatalf("undecodable result %q: got %q, want %q", result, res.ErrorCode, purramcp.CodeResultInvalid)
		}
		return
	}
	if fuzzDepth(result) > 990 {
		return // go-sdk's 1000-level bound applies to the whole JSON-RPC message
	}
	size, sizeErr := jssize.Size(&decoded) // the full encoding/json measure
	if sizeErr != nil {
		t.Fatalf("size of the decoded result %q: %v", result, sizeErr)
	}
	switch {
	case decoded.IsError:
		if res.ErrorCode != purramcp.CodeToolError {
			t.Fatalf("isError result %q: got %q, want %q", result, res.ErrorCode, purramcp.CodeToolError)
		}
		return
	case len(decoded.Content) > resolved.MaxContentBlocks || size > resolved.MaxResultBytes:
		if res.ErrorCode != purramcp.CodeResultTooLarge {
			t.Fatalf("result %q: %d blocks, %d bytes: got %q, want %q", result, len(decoded.Content), size, res.ErrorCode, purramcp.CodeResultTooLarge)
		}
		return
	}
	if res.ErrorCode == purramcp.CodeResultTooLarge {
		t.Fatalf("result %q: %d blocks, %d bytes: got %q, want anything else", result, len(decoded.Content), size, res.ErrorCode)
	}
	if res.ErrorCode != "" {
		return
	}
	text := []string{}
	for _, block := range decoded.Content {
		tc, ok := block.(*mcp.TextContent)
		if !ok {
			t.Fatalf("result %q succeeded with a %T block", result, block)
		}
		text = append(text, tc.Text)
	}
	if !reflect.DeepEqual(res.Content.Text, text) {
		t.Fatalf("text of result %q: got %v, want %v", result, res.Content.Text, text)
	}
	if decoded.NeedsInput() {
		t.Fatalf("result %q succeeded asking for input", result)
	}
	if decoded.StructuredContent == nil {
		if res.Content.Structured != nil {
			t.Fatalf("structured content of result %q: got %v, want nil", result, res.Content.Structured)
		}
	} else {
		if got := any(res.Content.Structured); !reflect.DeepEqual(got, decoded.StructuredContent) {
			t.Fatalf("structured content of %q: got %v, want %v", result, got, decoded.StructuredContent)
		}
	}
	if output != nil {
		var schema map[string]any // as go-sdk decodes it; the root $schema is not compiled
		if err := json.Unmarshal(output, &schema); err != nil {
			t.Fatalf("json.Unmarshal(output, &schema): %v", err)
		}
		delete(schema, "$schema")
		contract, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
			Schema: schema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
		if err != nil {
			t.Fatalf("output schema %s: %v", output, err)
		}
		got, err := contract.ValidateValue(res.Content.Structured)
		if err != nil {
			t.Fatalf("structured content of result %q under %s: %v", result, output, err)
		}
		if !reflect.DeepEqual(got, res.Content.Structured) {
			t.Fatalf("structured content of result %q: got %v, want %v", result, got, res.Content.Structured)
		}
	}
}

// fuzzDepth is the deepest nesting of arrays and objects in JSON text.
func fuzzDepth(text []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range text {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// boundTexts are text blocks' texts: escapes of every width, multi-byte and
// astral text, JSON look-alikes and a long run.
var boundTexts = []string{"", "plain", "quote \" and \\ backslash", "\x00\x01\x1f\b\f\n\r\t", "é日😀\u2028\u2029",
	`{"looks":"like json"}`, "<&>", strings.Repeat("ab\n", 300)}

// boundNumbers are number literals whose JavaScript spelling is longer than
// the literal, up to the longest one there is (25 characters).
var boundNumbers = []string{"-1.2345678901234567e-6", "-0.0000012345678901234567", "1e20", "-1e20", "1e21",
	"-1e-7", "5e-324", "-1.7976931348623157e308", "1e9", "-0", "0.1", "123456.5", "-9007199254740991"}

// boundResult writes the i-th random tools/call result as a server would
// send it: text blocks, sometimes another block, _meta or annotations,
// structured content from the differential generator with numbers respelled
// long, and resultType as each protocol writes it.
func boundResult(g *diffGen, i int) []byte {
	var b strings.Builder
	b.WriteString(`{"content":[`)
	for j := range g.r.IntN(4) {
		if j > 0 {
			b.WriteByte(',')
		}
		text, _ := json.Marshal(diffPick(g, boundTexts) + g.str(0, 4))
		switch g.r.IntN(12) {
		case 0:
			b.WriteString(`{"type":"text","text":` + string(text) + `,"_meta":{"k":1}}`)
		case 1:
			b.WriteString(`{"type":"text","text":` + string(text) + `,"annotations":{"priority":0.5}}`)
		case 2:
			b.WriteString(`{"type":"image","mimeType":"image/png","data":"AAAA"}`)
		default:
			b.WriteString(`{"type":"text","text":` + string(text) + `}`)
		}
	}
	b.WriteByte(']')
	if g.r.IntN(6) != 0 {
		v := g.value(3)
		if g.r.IntN(3) != 0 {
			v = map[string]any{"v": v, "n": json.Number(diffPick(g, boundNumbers)),
				"list": []any{json.Number(diffPick(g, boundNumbers)), json.Number(diffPick(g, boundNumbers))}}
		}
		b.WriteString(`,"structuredContent":`)
		b.Write(g.encode(nil, v))
	}
	switch g.r.IntN(10) {
	case 0:
		b.WriteString(`,"isError":true`)
	case 1:
		b.WriteString(`,"_meta":{"trace":"x"}`)
	case 2, 3, 4:
		b.WriteString(`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"},"n":[` +
			diffPick(g, boundNumbers) + `,` + diffPick(g, boundNumbers) + `]}`)
	}
	if i%2 == 0 {
		b.WriteString(`,"resultType":"complete"`) // 2026-07-28
	}
	b.WriteByte('}')
	return []byte(b.String())
}

func decodeResult(t *testing.T, text []byte) *mcp.CallToolResult {
	t.Helper()
	var result mcp.CallToolResult
	require.NoError(t, json.Unmarshal(text, &result), "%s", text)
	return &result
}

// TestSizeBound_NeverBelowExact: the bound that lets Run skip the exact
// count never claims a result fits a limit below its exact JSON.stringify
// size, on random decoded results of both protocols with the longest number
// spellings there are; and it settles more than half of them at twice their
// size.
func TestSizeBound_NeverBelowExact(t *testing.T) {
	var walked, settled int
	for i := range 5000 {
		g := newDiffGen(uint64(9000 + i))
		text := boundResult(g, i)
		result := decodeResult(t, text)
		exact, err := purramcp.ResultSize(result, math.MaxInt)
		require.NoError(t, err)
		holds, ok := purramcp.SizeBoundHolds(result, exact-1)
		require.False(t, holds, "result %d of %d bytes claimed within %d: %s", i, exact, exact-1, text)
		if ok {
			walked++
			if holds, _ := purramcp.SizeBoundHolds(result, 2*exact+256); holds {
				settled++
			}
		}
	}
	t.Logf("%d of 5000 results walked, %d of them settled at twice their size", walked, settled)
	require.Greater(t, walked, 1500)
	require.Greater(t, settled, walked/2)
	long := decodeResult(t, []byte(`{"content":[],"structuredContent":{"a":[`+
		strings.TrimSuffix(strings.Repeat("-0.0000012345678901234567,", 200), ",")+`]}}`))
	exact, err := purramcp.ResultSize(long, math.MaxInt)
	require.NoError(t, err)
	require.Equal(t, len(`{"content":[],"structuredContent":{"a":[]}}`)+200*25+199, exact,
		"200 numbers of 25 characters each")
	holds, ok := purramcp.SizeBoundHolds(long, exact-1)
	require.True(t, ok)
	require.False(t, holds)
}

// TestConvert_BoundMatchesExact is the differential test of the size bound:
// converting a result with it gives exactly what converting with the exact
// count first gives (the same code, the same envelope), for random results
// of both protocols, with and without an output schema, at limits just
// below, at and just above each result's exact size and at the default.
func TestConvert_BoundMatchesExact(t *testing.T) {
	outcomes := map[string]int{}
	for i := range 1500 {
		g := newDiffGen(uint64(20000 + i))
		text := boundResult(g, i)
		exactSize, err := purramcp.ResultSize(decodeResult(t, text), math.MaxInt)
		require.NoError(t, err)
		var output map[string]any
		if i%3 == 0 {
			output = g.schema(2)
			output["type"] = "object"
		}
		for _, limit := range []int{exactSize - 1, exactSize, exactSize + 1, 2*exactSize + 300, 0} {
			limits := purramcp.Limits{MaxResultBytes: max(limit, 0)}
			if limit > 65536 {
				continue
			}
			want, wantErr := purramcp.ConvertResultWith(limits, output, decodeResult(t, text), true)
			got, err := purramcp.ConvertResultWith(limits, output, decodeResult(t, text), false)
			label := "result " + strconv.Itoa(i) + " under MaxResultBytes " + strconv.Itoa(limit)
			require.Equal(t, wantErr, err, "%s: %s", label, text)
			require.Equal(t, want, got, "%s: %s", label, text)
			outcomes[purramcp.CodeOf(err)]++
		}
	}
	t.Logf("outcomes: %v", outcomes)
	for _, code := range []string{"", purramcp.CodeResultTooLarge, purramcp.CodeResultInvalid,
		purramcp.CodeResultUnsupported, purramcp.CodeToolError} {
		require.Positive(t, outcomes[code], "no conversion ended %q", code)
	}
}
