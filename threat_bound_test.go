package purramcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Hostile and wedged peers against the bounding layer (T6,
// T11): the subtests of TestThreatT6_FloodsHitLimits and
// TestThreatT11_HangsEndAtTimeout defined here.

// Sizes of the hostile frames an adversarial review sent.
const (
	hostileTextBytes = 12 << 20 // one text block, or one annotations.title, of '<'
	hostileTools     = 200_000  // tiny tools on one page
	hostileBlocks    = 400_000  // empty text blocks in one result
)

func hostileText() string { return strings.Repeat("<", hostileTextBytes) }

// tinyTools renders n tools of about 19 bytes each.
func tinyTools(n int) string {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d"}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// emptyBlocks renders a result of n empty text blocks.
func emptyBlocks(n int) string {
	return `{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, n), ",") + `]}`
}

// threatHostileFrames (T6): the frames of the review, written byte for byte
// by a peer (raw '<', which go-sdk's encoder would escape), are rejected by
// the bounding layer before go-sdk decodes them: each request fails with
// the code of the limit it protects, well before Timeout, no decoder
// outlives the call, and the session stays usable.
func threatHostileFrames(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := string(withField(t, f.Tool, "outputSchema", nil))
	titled := `{"name":"unbound","inputSchema":{"type":"object"},"annotations":{"title":"` + hostileText() + `"}}` // raw '<'
	_ = f
	for _, tc := range []struct {
		id, page, call, want string
	}{
		{"12MiB_text_of_lt", page("", textOnly), `{"content":[{"type":"text","text":"` + hostileText() + `"}]}`, purramcp.CodeResultTooLarge},
		{"400000_blocks", page("", textOnly), emptyBlocks(hostileBlocks), purramcp.CodeResultTooLarge},
		{"12MiB_error_result", page("", textOnly), `{"isError":true,"content":[{"type":"text","text":"` + hostileText() + `"}]}`, purramcp.CodeResultTooLarge},
		{"200000_tools", tinyTools(hostileTools), "", purramcp.CodeCatalogLimitExceeded},
		{"12MiB_title_unbound_tool", page("", textOnly, titled), "", purramcp.CodeCatalogLimitExceeded},
	} {
		leakChecked(t, tc.id, func(t *testing.T) {
			h := (&byteServer{page: tc.page, call: tc.call}).start(t)
			start := time.Now()
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{Timeout: 10 * time.Second}})
			if tc.call == "" {
				if catalog != nil {
					t.Errorf("catalog = %v, want nil", catalog)
				}
				if got := purramcp.CodeOf(err); got != tc.want {
					t.Errorf("T6 %s: got %q, want %q", tc.id, got, tc.want)
				}
			} else {
				if err != nil {
					t.Fatalf("%v: %v", tc.id, err)
				}
				res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: tc.want}); !reflect.DeepEqual(res, want) {
					t.Errorf("T6 %s: got %v, want %v", tc.id, res, want)
				}
			}
			t.Logf("T6 %s: %s in %v", tc.id, tc.want, time.Since(start))
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("T6 %s: session usable: %v", tc.id, err)
			}
			if err := h.monitor.Check(h.monitor.Revision()); err != nil {
				t.Errorf("T6 %s: monitor open: %v", tc.id, err)
			}
		})
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// threatSizingCost (T6): with the frames already decoded (as without the
// bounding layer, or under a host's own raised caps), the adapter's own work
// on them allocates at most twice the limit it enforces plus 1 MiB: counts
// come before sizes and sizes stop at the limit, never through go-sdk's
// MarshalJSON (which costs 807 MiB for the 12 MiB text: '<' escaped at every
// level).
func threatSizingCost(t *testing.T) {
	lim := purramcp.DefaultLimits()
	text := hostileText()
	blocks := make([]mcp.Content, hostileBlocks)
	for i := range blocks {
		blocks[i] = &mcp.TextContent{}
	}
	tools := make([]*mcp.Tool, hostileTools)
	for i := range tools {
		tools[i] = &mcp.Tool{Name: fmt.Sprintf("t%d", i)}
	}
	titled := []*mcp.Tool{{Name: "unbound", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{Title: text}}}
	resultBound := uint64(2*lim.MaxResultBytes + 1<<20)
	catalogBound := uint64(2*lim.MaxCatalogBytes + 1<<20)
	for _, tc := range []struct {
		id    string
		run   func() error
		bound uint64
		want  string
	}{
		{"12MiB_text_of_lt", func() error {
			_, err := purramcp.ConvertResult(purramcp.Limits{}, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}})
			return err
		}, resultBound, purramcp.CodeResultTooLarge},
		{"400000_blocks", func() error {
			_, err := purramcp.ConvertResult(purramcp.Limits{}, &mcp.CallToolResult{Content: blocks})
			return err
		}, resultBound, purramcp.CodeResultTooLarge},
		{"200000_tools", func() error {
			_, _, err := purramcp.PageCost(&mcp.ListToolsResult{Tools: tools}, 0, 0, lim)
			return err
		}, catalogBound, purramcp.CodeCatalogLimitExceeded},
		{"12MiB_title_unbound_tool", func() error {
			_, _, err := purramcp.PageCost(&mcp.ListToolsResult{Tools: titled}, 0, 0, lim)
			return err
		}, catalogBound, purramcp.CodeCatalogLimitExceeded},
	} {
		var err error
		n := allocated(func() { err = tc.run() })
		if got := purramcp.CodeOf(err); got != tc.want {
			t.Errorf("T6 %s: got %q, want %q", tc.id, got, tc.want)
		}
		if n > tc.bound {
			t.Errorf("T6 %s: adapter allocation (%s): got %v, want <= %v", tc.id, mib(n), n, tc.bound)
		}
		t.Logf("T6 %s: adapter allocates %d bytes (bound %d)", tc.id, n, tc.bound)
	}
}

// bigArgs are arguments of about 60 KB for the fixture tool.
var bigArgs = json.RawMessage(`{"q":"a","tags":["` + strings.Repeat("x", 60_000) + `"]}`)

// threatWedgedInMemory (T11): a peer that stops reading. The first request
// is still taken by go-sdk's reader on the peer's side and times out as
// usual, severing nothing; the next Run's write blocks and ends at Timeout;
// the session is severed: the catalog is stale,
// 200 later Runs fail mcp_connection_closed at once without a goroutine,
// session.Close returns promptly and nothing is left running. Over the
// in-memory transport the blocked write is the caller's own (the sever
// ends it); over an IOTransport on the host's streams it is the request's
// own goroutine, abandoned at the Timeout.
func threatWedgedInMemory(t *testing.T) {
	f := loadMCPFixture(t)
	for _, wiring := range []struct {
		name   string
		overIO bool
	}{{"in_memory", false}, {"io_workers", true}} {
		leakChecked(t, wiring.name, func(t *testing.T) {
			raw := &rawServer{stallCalls: true, overIO: wiring.overIO, pages: []string{page("", string(f.Tool))}}
			h := rawHarness(t, raw)
			timeout := 200 * time.Millisecond
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{Timeout: timeout}})
			if err != nil {
				t.Fatal(err)
			}
			reg := catalog.Registrations()[0]
			res, err := reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTimeout {
				t.Errorf("T11: written, never answered: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
			}
			if catalog.Stale() {
				t.Errorf("T11: a timeout after a complete write severs nothing")
			}
			before := runtime.NumGoroutine()
			start := time.Now()
			res, err = reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTimeout {
				t.Errorf("T11 wedged peer: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
			}
			// The bound is Timeout + 50 ms (logged below); the assertion leaves
			// room for a loaded -race CI machine.
			if limit := timeout + 150*time.Millisecond; took >= limit {
				t.Errorf("T11: Run returns at its Timeout: got %v, want < %v", took, limit)
			}
			if !catalog.Stale() {
				t.Errorf("T11: severed at once")
			}
			for range 200 {
				res, err = reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorCode != purramcp.CodeConnectionClosed {
					t.Fatalf("T11: later Runs: got %q, want %q", res.ErrorCode, purramcp.CodeConnectionClosed)
				}
			}
			// Polls: no synctest bubble can hold this test, since a write queued
			// behind the wedged one waits on go-sdk's write mutex, which is not
			// durably blocking, so fake time would never reach the Timeout.
			if !eventually(func() bool { return runtime.NumGoroutine() <= before }, waitFor, tick) {
				t.Fatalf("T11: the abandoned write ended; no goroutine per later Run: not met in time")
			}
			closeStart := time.Now()
			if err := h.session.Close(); err != nil {
				t.Fatalf("h.session.Close(): %v", err)
			}
			closeTook := time.Since(closeStart)
			if closeTook >= time.Second {
				t.Errorf("T11: session.Close returns promptly: got %v, want < %v", closeTook, time.Second)
			}
			t.Logf("T11 %s: Run returned after %v (Timeout %v); Close took %v; goroutines %d before, %d after 200 Runs",
				wiring.name, took, timeout, closeTook, before, runtime.NumGoroutine())
		})
	}
}

// stallScript is a stdio MCP server in sh that answers the legacy handshake
// and one tools/list, then stops reading stdin for good.
const stallScript = `read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"stall","version":"1"}}}'
read -r line
read -r line
printf '{"jsonrpc":"2.0","id":2,"result":%s}\n' "$PAGE"
exec sleep 60`

// threatWedgedStdio (T11): a stdio child that stops reading. The first Run's
// 60 KB request fits the pipe and times out normally; the second's write
// blocks, so the session is severed at its Timeout: stdin is closed, the
// child is stopped (SIGTERM after TerminateDuration), later Runs fail
// mcp_connection_closed and session.Close returns promptly.
func threatWedgedStdio(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("sh: %v", err) // every CI image has one
	}
	f := loadMCPFixture(t)
	leakChecked(t, "stdio", func(t *testing.T) {
		cmd := exec.Command("sh", "-c", stallScript)
		cmd.Env = append(cmd.Environ(), "PAGE="+page("", string(f.Tool)))
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		const terminate = 300 * time.Millisecond
		cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: terminate}),
			&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
		if err != nil {
			t.Fatal(err)
		}
		if err := monitor.Attach(cs); err != nil {
			t.Fatalf("monitor.Attach(cs): %v", err)
		}
		timeout := 200 * time.Millisecond
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: monitor, Limits: purramcp.Limits{Timeout: timeout}})
		if err != nil {
			t.Fatal(err)
		}
		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeTimeout {
			t.Errorf("T11 stdio: the first request is written, never answered: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
		}
		if catalog.Stale() {
			t.Errorf("T11 stdio: a timeout after a complete write severs nothing")
		}
		start := time.Now()
		res, err = reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeTimeout {
			t.Errorf("T11 stdio: the second write blocks: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
		}
		if !catalog.Stale() {
			t.Errorf("T11 stdio: severed")
		}
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeConnectionClosed {
			t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeConnectionClosed)
		}
		closeStart := time.Now()
		_ = cs.Close()
		closeTook := time.Since(closeStart)
		if closeTook >= time.Second {
			t.Errorf("T11 stdio: session.Close returns promptly: got %v, want < %v", closeTook, time.Second)
		}
		pid := cmd.Process.Pid
		// Polls: a real child process, stopped and reaped by go-sdk's
		// CommandTransport on its own goroutine; no bubble holds an OS process.
		if !eventually(func() bool { return syscall.Kill(pid, 0) != nil }, waitFor, tick) {
			t.Fatalf("T11 stdio: the child is stopped: not met in time")
		}
		t.Logf("T11 stdio: blocked Run returned after %v (Timeout %v); Close took %v; child gone %v after the sever (TerminateDuration %v)",
			took, timeout, closeTook, time.Since(start)-took, terminate)
	})
}

// threatHTTPMidCall (T11): over streamable HTTP, a connection that fails
// while the answer to tools/call is being read is mcp_transport_error (go-sdk
// reports it without a sentinel), for JSON and SSE answers alike.
func threatHTTPMidCall(t *testing.T) {
	f := loadMCPFixture(t)
	for _, jsonResponse := range []bool{true, false} {
		leakChecked(t, fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			srv := newSDKServer(t, nil, f.Tool)
			inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := readBody(t, r)
				if strings.Contains(body, `"tools/call"`) {
					if jsonResponse {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusOK)
						_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":`))
					} else {
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(http.StatusOK)
						_, _ = w.Write([]byte("event: message\ndata: {\"jsonrpc\":"))
					}
					w.(http.Flusher).Flush()
					panic(http.ErrAbortHandler) // the connection dies mid-answer
				}
				inner.ServeHTTP(w, r)
			}))
			transport := &http.Transport{}
			t.Cleanup(func() { // after the session closes (cleanups run last first): hs.Close waits for open streams
				hs.CloseClientConnections()
				hs.Close()
				transport.CloseIdleConnections()
			})
			h := httpHarness(t, hs.URL, transport, srv)
			reg := discoverWith(t, h, purramcp.Limits{Timeout: 5 * time.Second}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: purramcp.CodeTransportError}); !reflect.DeepEqual(res, want) {
				t.Errorf("T11 HTTP json=%v: the connection failed mid-call: got %v, want %v", jsonResponse, res, want)
			}
		})
	}
}

// threatHTTPFrames (T6): over streamable HTTP a 12 MiB answer is rejected as
// it streams in, as a JSON body and as an SSE event; the session stays usable
// (it discovers and calls again; go-sdk's Ping is refused by a stateless
// 2026-07-28 server). The server is go-sdk's own, which marshals the whole
// 12 MiB result before it writes a byte: seconds of CPU under -race on a
// loaded machine, which no Timeout can be sure to cover. So the session
// runs in a synctest bubble, over an *http.Transport (the layer's inline
// path, as over a socket) whose http scheme memTransport serves in this
// process: fake time stands still while the server works, and only an
// answer never rejected could reach the Timeout.
func threatHTTPFrames(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	for _, jsonResponse := range []bool{true, false} {
		leakChecked(t, fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newSDKServer(t, nil, textOnly)
				srv.handler = func(context.Context) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", hostileTextBytes)}}}, nil
				}
				transport := &http.Transport{}
				transport.RegisterProtocol("http", memTransport{handler: mcp.NewStreamableHTTPHandler(
					func(*http.Request) *mcp.Server { return srv.MCP },
					&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})})
				h := httpHarness(t, "http://peer.test/mcp", transport, srv)
				reg := discoverWith(t, h, purramcp.Limits{Timeout: 10 * time.Second}, nil)
				start := time.Now()
				res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorCode != purramcp.CodeResultTooLarge {
					t.Errorf("T6 HTTP json=%v: got %q, want %q", jsonResponse, res.ErrorCode, purramcp.CodeResultTooLarge)
				}
				if got := time.Since(start); got != 0 {
					t.Errorf("T6 HTTP json=%v: rejected with no wait: got %v, want 0", jsonResponse, got)
				}
				res, err = discoverWith(t, h, purramcp.Limits{}, nil).Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorCode != purramcp.CodeResultTooLarge {
					t.Errorf("T6 HTTP json=%v: the session discovers and calls again: got %q, want %q", jsonResponse, res.ErrorCode, purramcp.CodeResultTooLarge)
				}
			})
		})
	}
}

// httpHarness connects a bounded, attached session over streamable HTTP;
// it closes at cleanup.
func httpHarness(t *testing.T, url string, transport *http.Transport, srv *sdkServer) sessionHarness {
	t.Helper()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), monitor.Transport(&mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: transport}, MaxRetries: -1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	return sessionHarness{session: cs, monitor: monitor, counts: srv.counts, lastArguments: srv.lastArguments}
}

// readBody reads a request body and puts it back for the next handler.
func readBody(t *testing.T, r *http.Request) string {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("reading a request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return string(raw)
}

// rawResult is a server result whose JSON is given verbatim.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// threatHTTPFloods (T6, item 3 of the review): over streamable HTTP, JSON
// and SSE, the 200,000-tool page fails discovery mcp_catalog_limit_exceeded
// and the 400,000-block result fails Run mcp_result_too_large, both rejected
// as they stream in; no goroutine (no go-sdk decoder) outlives the session.
func threatHTTPFloods(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	for _, jsonResponse := range []bool{true, false} {
		for _, flood := range []string{"200000_tools", "400000_blocks"} {
			leakChecked(t, fmt.Sprintf("%s_json=%v", flood, jsonResponse), func(t *testing.T) {
				srv := newSDKServer(t, nil, textOnly)
				srv.MCP.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						switch {
						case method == "tools/list" && flood == "200000_tools":
							return &rawResult{raw: json.RawMessage(tinyTools(hostileTools))}, nil
						case method == "tools/call":
							return &rawResult{raw: json.RawMessage(emptyBlocks(hostileBlocks))}, nil
						}
						return next(ctx, method, req)
					}
				})
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
					&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse}))
				transport := &http.Transport{}
				t.Cleanup(func() {
					hs.CloseClientConnections()
					hs.Close()
					transport.CloseIdleConnections()
				})
				h := httpHarness(t, hs.URL, transport, srv)
				// A generous Timeout: under -race on a loaded 2-core machine the
				// server alone takes seconds to write the flood; the test checks
				// codes and leaks, never time.
				catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
					purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{Timeout: time.Minute}})
				if flood == "200000_tools" {
					if catalog != nil {
						t.Errorf("catalog = %v, want nil", catalog)
					}
					if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
						t.Errorf("T6 HTTP %s json=%v: got %q, want %q", flood, jsonResponse, got, purramcp.CodeCatalogLimitExceeded)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorCode != purramcp.CodeResultTooLarge {
					t.Errorf("T6 HTTP %s json=%v: got %q, want %q", flood, jsonResponse, res.ErrorCode, purramcp.CodeResultTooLarge)
				}
			})
		}
	}
}

// threatFloatOverflow (T6): a number that overflows float64 anywhere in a
// page, even in a tool nobody binds, makes go-sdk fail to decode the whole
// page: discovery fails mcp_result_invalid (README: Hostile and wedged peers).
func threatFloatOverflow(t *testing.T) {
	f := loadMCPFixture(t)
	unbound := `{"name":"unbound","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}}`
	h := rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool), unbound)}})
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if catalog != nil {
		t.Errorf("catalog = %v, want nil", catalog)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeResultInvalid {
		t.Errorf("T6 1e400 in an unbound tool: got %q, want %q", got, purramcp.CodeResultInvalid)
	}
}

// threatHugeNotification (T6): a tools/list_changed notification whose
// params are 1 MiB is not decoded (its params are dropped) but still counts:
// the discovery it raced fails mcp_catalog_stale or returns a catalog that
// ends up stale; a 1 MiB notification of another method is dropped the same
// way and changes nothing.
func threatHugeNotification(t *testing.T) {
	f := loadMCPFixture(t)
	pad := strings.Repeat("n", 1<<20)
	for _, tc := range []struct {
		method string
		stale  bool
	}{{"notifications/tools/list_changed", true}, {"notifications/message", false}} {
		leakChecked(t, tc.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				note := `{"jsonrpc":"2.0","method":"` + tc.method + `","params":{"_meta":{"pad":"` + pad + `"}}}` + "\n"
				h := (&byteServer{page: page("", string(f.Tool)), beforeList: note}).start(t)
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				if !tc.stale {
					if err != nil {
						t.Fatal(err)
					}
					if catalog.Stale() {
						t.Errorf("T6 %s: changes nothing", tc.method)
					}
					if got := h.monitor.Revision(); got != 0 {
						t.Errorf("h.monitor.Revision() = %v, want 0", got)
					}
					return
				}
				if err != nil {
					if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
						t.Errorf("T6 %s: got %q, want %q", tc.method, got, purramcp.CodeCatalogStale)
					}
				} else {
					synctest.Wait()
					if !catalog.Stale() {
						t.Fatalf("T6 %s: ends up stale", tc.method)
					}
				}
				synctest.Wait()
				if got, want := h.monitor.Revision(), uint64(1); got != want {
					t.Fatalf("T6 %s: counted: got %v, want %v", tc.method, got, want)
				}
				if err := h.session.Ping(t.Context(), nil); err != nil {
					t.Errorf("h.session.Ping(t.Context(), nil): %v", err)
				}
			})
		})
	}
}

// threatCanceledMidWrite (T11): the caller's ctx ending while the write of
// its request is blocked abandons the write, and the session is severed
// when the write is still blocked at the adapter's deadline, so nothing
// waits on the stalled peer. Where the write is the caller's own (the
// in-memory transport), Run returns ErrCanceled once the sever ends it, at
// the deadline; where it is a goroutine of its own (an IOTransport on the
// host's streams), Run returns ErrCanceled at once.
func threatCanceledMidWrite(t *testing.T) {
	f := loadMCPFixture(t)
	const timeout, cancelAfter = 300 * time.Millisecond, 50 * time.Millisecond
	for _, wiring := range []struct {
		name     string
		overIO   bool
		earliest time.Duration // when Run may return at the earliest
		latest   time.Duration // and at the latest
	}{{"in_memory", false, timeout, timeout + 150*time.Millisecond}, {"io_workers", true, cancelAfter, cancelAfter + 150*time.Millisecond}} {
		leakChecked(t, wiring.name, func(t *testing.T) {
			raw := &rawServer{stallCalls: true, overIO: wiring.overIO, pages: []string{page("", string(f.Tool))}}
			h := rawHarness(t, raw)
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{Timeout: timeout}})
			if err != nil {
				t.Fatal(err)
			}
			reg := catalog.Registrations()[0]
			res, err := reg.Run(t.Context(), bigArgs, purramcp.ToolContext{}) // taken by the peer's reader, never answered
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTimeout {
				t.Fatalf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
			}
			if catalog.Stale() {
				t.Fatalf("catalog.Stale() is true")
			}
			ctx, cancel := context.WithTimeout(t.Context(), cancelAfter)
			defer cancel()
			start := time.Now()
			_, err = reg.Run(ctx, bigArgs, purramcp.ToolContext{})
			took := time.Since(start)
			if !errors.Is(err, purramcp.ErrCanceled) {
				t.Errorf("T11: the caller's end: error %v, want one matching %v", err, purramcp.ErrCanceled)
			}
			if took < wiring.earliest {
				t.Errorf("T11: %s: got %v, want >= %v", wiring.name, took, wiring.earliest)
			}
			if took >= wiring.latest {
				t.Errorf("T11: %s: got %v, want < %v", wiring.name, took, wiring.latest)
			}
			// Real transports and clocks: the sever comes at the 300 ms deadline.
			if !eventually(catalog.Stale, waitFor, tick) {
				t.Fatalf("T11: severed at the deadline: not met in time")
			}
			if err := h.session.Close(); err != nil {
				t.Fatalf("h.session.Close(): %v", err)
			}
		})
	}
}
