package purramcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Threats met on calls and sessions: T4, T10–T14, T16,
// T17. The list of ids and the not-applicable lines are in threat_test.go.

// jsonString encodes s as a JSON string.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestThreatT4_NoRemoteTextInResults: every way a server can fail a call or
// a listing, each carrying secret in its message, data, text, structured
// content, content type, field value or name, gives a stable code and an
// empty envelope; secret is in no envelope, ToolResult, catalog or error
// text, and nothing behind the error (errors.As) holds it. Only text blocks
// and validated structured content ever reach the model.
func TestThreatT4_NoRemoteTextInResults(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	for _, tc := range []struct {
		id, result string
		rpc        *jsonrpc.Error
		textOnly   bool
		limits     purramcp.Limits
		want       string
	}{
		{id: "rpc_error", rpc: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "failed for " + secret,
			Data: json.RawMessage(`{"token":"` + secret + `"}`)}, want: purramcp.CodeProtocolError},
		{id: "rpc_error_code_0", rpc: &jsonrpc.Error{Code: 0, Message: secret}, want: purramcp.CodeProtocolError},
		{id: "tool_error", result: `{"content":[{"type":"text","text":"` + secret + `"}],"structuredContent":{"count":1,"why":"` +
			secret + `"},"isError":true}`, want: purramcp.CodeToolError},
		{id: "output_extra_value", result: `{"content":[{"type":"text","text":"ok"}],"structuredContent":{"count":1,"leak":"` + secret + `"}}`,
			want: purramcp.CodeResultInvalid},
		{id: "output_extra_key", result: `{"content":[],"structuredContent":{"count":1,"` + secret + `":true}}`, want: purramcp.CodeResultInvalid},
		{id: "output_wrong_type", result: `{"content":[],"structuredContent":{"count":"` + secret + `"}}`, want: purramcp.CodeResultInvalid},
		{id: "structured_not_object", result: `{"content":[],"structuredContent":["` + secret + `"]}`, textOnly: true, want: purramcp.CodeResultInvalid},
		{id: "json_text_never_structured", result: `{"content":[{"type":"text","text":"{\"count\":1,\"s\":\"` + secret + `\"}"}]}`,
			want: purramcp.CodeResultInvalid},
		{id: "unknown_block_type", result: `{"content":[{"type":"` + secret + `"}]}`, want: purramcp.CodeResultInvalid},
		{id: "wrong_field_type", result: `{"content":"` + secret + `"}`, want: purramcp.CodeResultInvalid},
		{id: "bad_base64", result: `{"content":[{"type":"image","data":"` + secret + `!","mimeType":"image/png"}]}`, want: purramcp.CodeResultInvalid},
		{id: "image_block", result: `{"content":[{"type":"image","data":"` + b64 + `","mimeType":"image/` + secret + `"}]}`,
			want: purramcp.CodeResultUnsupported},
		{id: "resource_link", result: `{"content":[{"type":"resource_link","uri":"https://example.invalid/` + secret + `","name":"` +
			secret + `"}]}`, want: purramcp.CodeResultUnsupported},
		{id: "embedded_resource", result: `{"content":[{"type":"resource","resource":{"uri":"file:///` + secret + `","text":"` +
			secret + `"}}]}`, want: purramcp.CodeResultUnsupported},
		{id: "input_required", result: `{"content":[],"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create",` +
			`"params":{"message":"` + secret + `","requestedSchema":{"type":"object","properties":{}}}}}}`, want: purramcp.CodeResultUnsupported},
		{id: "too_large", result: `{"content":[{"type":"text","text":"` + secret + strings.Repeat("x", 300) + `"}],"structuredContent":{"count":1}}`,
			limits: purramcp.Limits{MaxResultBytes: 256}, want: purramcp.CodeResultTooLarge},
		{id: "too_many_blocks", result: `{"content":[{"type":"text","text":"` + secret + `"},{"type":"text","text":"` + secret + `"}],` +
			`"structuredContent":{"count":1}}`, limits: purramcp.Limits{MaxContentBlocks: 1}, want: purramcp.CodeResultTooLarge},
	} {
		t.Run(tc.id, func(t *testing.T) {
			tool := f.Tool
			if tc.textOnly {
				tool = textOnly
			}
			for _, modern := range modernities {
				raw := &rawServer{modern: modern, pages: []string{page("", string(tool))},
					call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, tc.rpc }}
				h := rawHarness(t, raw)
				reg := discoverWith(t, h, tc.limits, nil)
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: tc.want}); !reflect.DeepEqual(res, want) {
					t.Errorf("T4 %s modern=%v: got %v, want %v", tc.id, modern, res, want)
				}
				assertNoSecret(t, "T4 "+tc.id, res, err)
				_, calls := h.counts()
				if calls != 1 {
					t.Errorf("T4 %s: got %v, want %v", tc.id, calls, 1)
				}
			}
		})
	}

	named := `{"name":"` + secret + `","inputSchema":{"type":"object"}}`
	for _, tc := range []struct {
		id     string
		raw    *rawServer
		limits purramcp.Limits
		want   string
	}{
		{"list_rpc_error", &rawServer{listError: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: secret,
			Data: json.RawMessage(`"` + secret + `"`)}, pages: []string{page("")}}, purramcp.Limits{}, purramcp.CodeProtocolError},
		{"malformed_page", &rawServer{pages: []string{`{"tools":"` + secret + `"}`}}, purramcp.Limits{}, purramcp.CodeResultInvalid},
		{"schema_keyword_value", &rawServer{pages: []string{page("", string(withField(t, f.Tool, "inputSchema",
			map[string]any{"type": "object", "pattern": secret})))}}, purramcp.Limits{}, purramcp.CodeSchemaUnsupported},
		{"schema_keyword_name", &rawServer{pages: []string{page("", string(withField(t, f.Tool, "inputSchema",
			map[string]any{"type": "object", secret: true})))}}, purramcp.Limits{}, purramcp.CodeSchemaUnsupported},
		{"description_too_long", &rawServer{pages: []string{page("", string(withField(t, f.Tool, "description", secret)))}},
			purramcp.Limits{MaxDescriptionBytes: 8}, purramcp.CodeCatalogLimitExceeded},
		{"duplicate_name", &rawServer{pages: []string{page("", string(f.Tool), named, named)}}, purramcp.Limits{}, purramcp.CodeNameConflict},
		{"cursor_too_long", &rawServer{pages: []string{page(secret + strings.Repeat("x", 600))}}, purramcp.Limits{}, purramcp.CodePaginationInvalid},
		{"binding_missing", &rawServer{pages: []string{page("", named)}}, purramcp.Limits{}, purramcp.CodeBindingMissing},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, tc.raw)
			catalog, err := discoverDefault(t, h, tc.limits)
			if catalog != nil {
				t.Errorf("T4 %s: got %v, want nil", tc.id, catalog)
			}
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("T4 %s: got %q, want %q", tc.id, got, tc.want)
			}
			assertNoSecret(t, "T4 "+tc.id, catalog, err)
		})
	}
}

// secretWriteTransport is a client transport whose tools/call writes fail
// with a network error naming a credential, as a dialer's error may.
type secretWriteTransport struct{ mcp.Transport }

func (s *secretWriteTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := s.Transport.Connect(ctx)
	return &secretWriteConn{Connection: c}, err
}

type secretWriteConn struct{ mcp.Connection }

func (c *secretWriteConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "tools/call" {
		return &net.OpError{Op: "write", Net: "tcp", Err: errors.New("proxy https://user:" + secret + "@proxy.invalid refused")}
	}
	return c.Connection.Write(ctx, msg)
}

// TestThreatT12_NoSecretsInFailures: credentials in a transport's error, in
// an HTTP endpoint URL, in an HTTP error body, in a notification sent before
// a timeout, in arguments the input contract rejects, and in a scope's
// denial reason never surface from the adapter. For the URL, go-sdk's own
// error names the token (the control), the adapter's does not.
func TestThreatT12_NoSecretsInFailures(t *testing.T) {
	f := loadMCPFixture(t)
	t.Run("transport_write_error", func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.MCP.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		monitor := purramcp.NewCatalogMonitor()
		cs, err := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).
			Connect(t.Context(), monitor.Transport(&secretWriteTransport{ct}), nil)
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
		h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts}
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeTransportError {
			t.Errorf("T12 write error: got %q, want %q", res.ErrorCode, purramcp.CodeTransportError)
		}
		assertNoSecret(t, "T12 write error", res, err)
		// After a failed write go-sdk refuses every new request as closed
		// (the session itself stays open while its 2026-07-28
		// subscriptions/listen call is outstanding).
		_, control := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remote.search", Arguments: map[string]any{"q": "a"}})
		if control == nil {
			t.Fatalf("control = nil, want an error")
		}
		if !strings.Contains(control.Error(), secret) {
			t.Errorf("control: go-sdk's error names the credential: %q does not contain %q", control.Error(), secret)
		}
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if got := purramcp.CodeOf(err); got != purramcp.CodeTransportError {
			t.Errorf("T12 discovery after the write error: got %q, want %q", got, purramcp.CodeTransportError)
		}
		assertNoSecret(t, "T12 discovery after write error", catalog, err)
	})
	t.Run("http_url_and_body", func(t *testing.T) { threatHTTPSecrets(t, f) })
	t.Run("timeout_after_notification", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{pages: []string{page("", string(f.Tool))}}
			raw.beforeAnswer = func(ctx context.Context, _ json.RawMessage) {
				_ = raw.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/message",
					Params: json.RawMessage(`{"level":"error","data":"` + secret + `"}`)})
				<-ctx.Done()
			}
			reg := discoverWith(t, rawHarness(t, raw), purramcp.Limits{Timeout: time.Second}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTimeout {
				t.Errorf("T12 timeout: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
			}
			assertNoSecret(t, "T12 timeout", res, err)
		})
	})
	t.Run("host_side", func(t *testing.T) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		for _, tc := range []struct{ args, parseCode string }{
			{`{"q":"` + secret + `"}`, "structured_output_schema_mismatch"},
			{`{"q":"a","` + secret + `":1}`, "structured_output_schema_mismatch"},
			{`{"q":"a","token":"` + secret + `"}`, "structured_output_schema_mismatch"},
			{`{"q":"a","tags":[1,"` + secret + `"]}`, "structured_output_schema_mismatch"},
			{`{"q":"` + secret, "structured_output_invalid_json"},
		} {
			res, err := reg.Run(t.Context(), json.RawMessage(tc.args), purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeInvalidArguments {
				t.Errorf("T12 arguments %s: got %q, want %q", tc.args, res.ErrorCode, purramcp.CodeInvalidArguments)
			}
			assertNoSecret(t, "T12 Run "+tc.args, res, err)
			value, err := reg.ArgumentContract.Parse(tc.args)
			if got := purramcp.CodeOf(err); got != tc.parseCode {
				t.Errorf("T12 Parse %s: got %q, want %q", tc.args, got, tc.parseCode)
			}
			assertNoSecret(t, "T12 ArgumentContract.Parse "+tc.args, value, err)
		}
		denied := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
			b.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error {
				return purramcp.Deny("token " + secret)
			}
		})
		res, err := denied.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeScopeDenied {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeScopeDenied)
		}
		assertNoSecret(t, "T12 scope denial", res, err)
		_, calls := h.counts()
		if calls != 0 {
			t.Errorf("T12 host side: nothing sent: got %v, want 0", calls)
		}
	})
}

// threatHTTPSecrets runs T12 over stateless streamable HTTP with a token in
// the endpoint URL: an HTTP 500 whose body and header name the token, then
// the server gone.
func threatHTTPSecrets(t *testing.T, f mcpFixture) {
	srv := newSDKServer(t, nil, f.Tool)
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
		&mcp.StreamableHTTPOptions{Stateless: true})
	var failing atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.Header().Set("WWW-Authenticate", `Bearer error="`+secret+`"`)
			http.Error(w, "invalid token "+secret, http.StatusInternalServerError)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	monitor := purramcp.NewCatalogMonitor()
	cs, err := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).
		Connect(t.Context(), monitor.Transport(&mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp?token=" + secret,
			HTTPClient: &http.Client{Transport: transport}, MaxRetries: 1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts}
	reg := discoverWith(t, h, purramcp.Limits{}, nil)

	failing.Store(true)
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeTransportError {
		t.Errorf("T12 HTTP 500: got %q, want %q", res.ErrorCode, purramcp.CodeTransportError)
	}
	assertNoSecret(t, "T12 HTTP 500", res, err)
	failing.Store(false)

	hs.CloseClientConnections()
	hs.Close()
	_, control := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remote.search", Arguments: map[string]any{"q": "a"}})
	if control == nil {
		t.Fatalf("control = nil, want an error")
	}
	if !strings.Contains(control.Error(), secret) {
		t.Errorf("control: go-sdk's error names the endpoint URL: %q does not contain %q", control.Error(), secret)
	}
	res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeTransportError {
		t.Errorf("T12 server gone: got %q, want %q", res.ErrorCode, purramcp.CodeTransportError)
	}
	assertNoSecret(t, "T12 server gone", res, err)
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if got := purramcp.CodeOf(err); got != purramcp.CodeTransportError {
		t.Errorf("T12 discovery, server gone: got %q, want %q", got, purramcp.CodeTransportError)
	}
	assertNoSecret(t, "T12 discovery, server gone", catalog, err)
}

// TestThreatT10_NoReplay: a call is sent once. When the connection drops
// after the server received it, Run fails mcp_transport_error (outcome
// unknown) and nothing is re-sent, then or later (the session ended, so the
// next Run fails mcp_connection_closed without a request; a go-sdk server
// whose handler ran before the drop: TestBehaviorI4_Disconnect). A
// JSON-RPC error is not retried. A timeout cancels the request on the wire
// and never re-sends it, however long the session lives on. (go-sdk's
// multi-round-trip re-sends are disabled: TestResult_InputRequestsOneCall.)
func TestThreatT10_NoReplay(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{modern: modern, closeOnCall: true, pages: []string{page("", string(f.Tool))}}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTransportError {
				t.Errorf("T10 drop modern=%v: got %q, want %q", modern, res.ErrorCode, purramcp.CodeTransportError)
			}
			synctest.Wait()
			if err := h.monitor.Check(0); err == nil {
				t.Fatalf("T10 drop modern=%v: the monitor closed with the session: got no error", modern)
			}
			res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeConnectionClosed {
				t.Errorf("T10 drop modern=%v: got %q, want %q", modern, res.ErrorCode, purramcp.CodeConnectionClosed)
			}
			_, calls := h.counts()
			if calls != 1 {
				t.Errorf("T10 drop modern=%v: exactly one tools/call: got %v, want %v", modern, calls, 1)
			}

			rpc := &rawServer{modern: modern, pages: []string{page("", string(f.Tool))},
				call: func(json.RawMessage) (string, *jsonrpcError) {
					return "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "temporarily unavailable, retry"}
				}}
			h = rawHarness(t, rpc)
			res, err = discoverWith(t, h, purramcp.Limits{}, nil).Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeProtocolError {
				t.Errorf("T10 rpc modern=%v: got %q, want %q", modern, res.ErrorCode, purramcp.CodeProtocolError)
			}
			_, calls = h.counts()
			if calls != 1 {
				t.Errorf("T10 rpc modern=%v: not retried: got %v, want %v", modern, calls, 1)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		raw := &rawServer{neverAnswer: true, pages: []string{page("", string(f.Tool))}}
		h := rawHarness(t, raw)
		reg := discoverWith(t, h, purramcp.Limits{Timeout: 100 * time.Millisecond}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeTimeout {
			t.Errorf("T10 timeout: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := raw.cancelledCalls(); got != 1 {
			t.Fatalf("T10: the request is canceled on the wire: got %v, want %v", got, 1)
		}
		_, calls := h.counts()
		if calls != 1 {
			t.Errorf("T10 timeout: never re-sent: got %v, want %v", calls, 1)
		}
		if err := h.session.Ping(t.Context(), nil); err != nil {
			t.Errorf("h.session.Ping(t.Context(), nil): %v", err)
		}
	})
	t.Run("client_built_with_other_options", threatClientBuiltWithOtherOptions)
}

// TestThreatT11_HangsEndAtTimeout: nothing a server does wedges the host
// beyond Limits.Timeout, even when the caller's ctx has no deadline. Shown in
// synctest bubbles (exact times, no leftover goroutine): a tools/list never
// answered under the 30s default, a tools/call whose answer carries another
// id (go-sdk drops it, so the call is never answered), and a peer that stops
// reading in the middle of paging. Other hangs: TestRun_NoAnswerTimesOut,
// TestDiscover_RequestFailures, TestRun_BlockedWriteTimesOut.
func TestThreatT11_HangsEndAtTimeout(t *testing.T) {
	f := loadMCPFixture(t)
	t.Run("wedged_peer_severed", threatWedgedInMemory)
	t.Run("wedged_stdio_child_stopped", threatWedgedStdio)
	t.Run("canceled_mid_write_severs", threatCanceledMidWrite)
	t.Run("http_failure_mid_call", threatHTTPMidCall)
	t.Run("http_connection_failed_in_flight", threatHTTPConnectionFailsInFlight)
	t.Run("http_session_lost", threatHTTPSessionLost)
	t.Run("reference_wiring_one_abandoned_goroutine", threatReferenceWiringOneAbandoned)
	t.Run("list_never_answered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := rawHarness(t, &rawServer{listFault: "silent", pages: []string{page("")}})
			start := time.Now()
			_, err := discoverDefault(t, h, purramcp.Limits{})
			if got := purramcp.CodeOf(err); got != purramcp.CodeTimeout {
				t.Errorf("T11 list never answered: got %q, want %q", got, purramcp.CodeTimeout)
			}
			if got, want := time.Since(start), purramcp.DefaultLimits().Timeout; got != want {
				t.Errorf("T11: the 30s default: got %v, want %v", got, want)
			}
		})
	})
	t.Run("answer_with_other_id", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{pages: []string{page("", string(f.Tool))}}
			raw.beforeAnswer = func(ctx context.Context, _ json.RawMessage) {
				id, err := jsonrpc.MakeID(float64(987654))
				if err == nil {
					_ = raw.conn.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[],"structuredContent":{"count":1}}`)})
				}
				<-ctx.Done()
			}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{Timeout: time.Second}, nil)
			start := time.Now()
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTimeout {
				t.Errorf("T11 answer with another id: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
			}
			if got := time.Since(start); got != time.Second {
				t.Errorf("time.Since(start) = %v, want %v", got, time.Second)
			}
			_, calls := h.counts()
			if calls != 1 {
				t.Errorf("calls = %v, want %v", calls, 1)
			}
		})
	})
	t.Run("peer_stops_reading_mid_paging", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			raw := &rawServer{stallCalls: true, pages: []string{page("c1", string(f.Tool)), page("")}}
			h := rawHarness(t, raw)
			start := time.Now()
			_, err := discoverDefault(t, h, purramcp.Limits{Timeout: 250 * time.Millisecond})
			if got := purramcp.CodeOf(err); got != purramcp.CodeTimeout {
				t.Errorf("T11 peer stops reading: got %q, want %q", got, purramcp.CodeTimeout)
			}
			if got, want := time.Since(start), 250*time.Millisecond; got != want {
				t.Errorf("time.Since(start) = %v, want %v", got, want)
			}
			lists, _ := h.counts()
			if lists != 1 {
				t.Errorf("T11: the second tools/list never reached the server: got %v, want %v", lists, 1)
			}
		})
	})
}

// TestThreatT13_ScopeDecidesEveryCall: credentials and audiences are the
// host's (its transport and client; purramcp never sees a token), so the
// adapter's share of confused-deputy defence is the per-call scope. It runs
// on every Run, before any request, with that call's ToolContext and its
// validated arguments; a decision for one principal never carries over to
// the next call.
func TestThreatT13_ScopeDecidesEveryCall(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	var mu sync.Mutex
	var seen []purramcp.ToolContext
	reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
		b.Scope = func(_ context.Context, args map[string]any, call purramcp.ToolContext) error {
			mu.Lock()
			seen = append(seen, call)
			mu.Unlock()
			if call.AgentID != "alice" || args["q"] != "a" {
				return purramcp.Deny("not alice's query")
			}
			return nil
		}
	})
	calls := []struct {
		call purramcp.ToolContext
		args string
		want string
	}{
		{purramcp.ToolContext{CallID: "1", AgentID: "alice", RunID: "r1"}, `{"q":"a"}`, ""},
		{purramcp.ToolContext{CallID: "2", AgentID: "mallory", RunID: "r1"}, `{"q":"a"}`, purramcp.CodeScopeDenied},
		{purramcp.ToolContext{CallID: "3", AgentID: "alice", RunID: "r2"}, `{"q":"b"}`, purramcp.CodeScopeDenied},
		{purramcp.ToolContext{CallID: "4", AgentID: "alice", RunID: "r2"}, `{"q":"a"}`, ""},
		{purramcp.ToolContext{CallID: "5", AgentID: "mallory", RunID: "r2"}, `{"q":"a"}`, purramcp.CodeScopeDenied},
	}
	for _, c := range calls {
		res, err := reg.Run(t.Context(), json.RawMessage(c.args), c.call)
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != c.want {
			t.Errorf("T13 call %s: got %q, want %q", c.call.CallID, res.ErrorCode, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := len(seen); got != len(calls) {
		t.Fatalf("T13: the scope ran on every call: len = %d, want %d", got, len(calls))
	}
	for i, c := range calls {
		if !reflect.DeepEqual(seen[i], c.call) {
			t.Errorf("T13 call %s: the scope saw this call's context: got %v, want %v", c.call.CallID, seen[i], c.call)
		}
	}
	_, sent := h.counts()
	if sent != 2 {
		t.Errorf("T13: only the allowed calls were sent: got %v, want %v", sent, 2)
	}
}

// TestThreatT14_ResourceLinksNeverFollowed: URLs a server puts in a result
// are never fetched. resource_link and embedded resource blocks fail
// mcp_result_unsupported, a URL in text stays text, and the URL's server
// sees no request. (Redirects and OAuth metadata are the host's HTTP
// client's: purramcp makes no HTTP requests of its own.)
func TestThreatT14_ResourceLinksNeverFollowed(t *testing.T) {
	f := loadMCPFixture(t)
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer target.Close()
	link := jsonString(t, target.URL+"/exfiltrate?d=1")
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	for _, tc := range []struct {
		id, result string
		want       string
		text       []string
	}{
		{"resource_link", `{"content":[{"type":"resource_link","uri":` + link + `,"name":"doc"}]}`, purramcp.CodeResultUnsupported, nil},
		{"resource_link_after_text", `{"content":[{"type":"text","text":"see"},{"type":"resource_link","uri":` + link + `,"name":"doc"}]}`,
			purramcp.CodeResultUnsupported, nil},
		{"embedded_resource", `{"content":[{"type":"resource","resource":{"uri":` + link + `,"text":"x"}}]}`, purramcp.CodeResultUnsupported, nil},
		{"url_in_text", `{"content":[{"type":"text","text":` + link + `}]}`, "", []string{target.URL + "/exfiltrate?d=1"}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			raw := &rawServer{pages: []string{page("", string(textOnly))},
				call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
			reg := discoverWith(t, rawHarness(t, raw), purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != tc.want {
				t.Errorf("T14 %s: got %q, want %q", tc.id, res.ErrorCode, tc.want)
			}
			if tc.text != nil {
				if want := (purramcp.Envelope{Text: tc.text}); !reflect.DeepEqual(res.Content, want) {
					t.Errorf("T14 %s: text is data: got %v, want %v", tc.id, res.Content, want)
				}
			}
		})
	}
	if got := hits.Load(); got != 0 {
		t.Errorf("T14: no URL was fetched: got %v, want 0", got)
	}
}
