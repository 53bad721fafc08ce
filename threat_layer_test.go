package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// The bounding layer on every path (threats T6, floods, and T11, hangs): long SSE lines,
// resumed streams, count-dense pages and results, dripped events. Each
// hostile answer fails with the code of the limit it meets, within Timeout
// + 50 ms, with the adapter's allocation at most 2 × that limit + 1 MiB and
// no goroutine (no go-sdk decoder) left behind.

// hostileSSEBytes is the size of one hostile SSE data line: far over every
// default budget, well under go-sdk's 6 MiB event cap the layer sets.
const hostileSSEBytes = 5<<20 + 150<<10

// httpPeer is a scripted streamable HTTP MCP server that writes every
// answer as the exact bytes a test gives it.
type httpPeer struct {
	list    string                                                  // the tools/list result
	sseList bool                                                    // answer tools/list as one SSE event
	call    func(w http.ResponseWriter, r *http.Request, id string) // writes the tools/call answer
	// resume writes the answer to a GET that resumes a stream (it carries
	// Last-Event-ID); nil refuses it.
	resume func(w http.ResponseWriter, id string)

	mu     sync.Mutex
	callID string // the id of the last tools/call, for resume
	gets   int    // resumed streams
}

func (p *httpPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if r.Header.Get("Last-Event-ID") == "" || p.resume == nil {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
			return
		}
		p.mu.Lock()
		p.gets++
		id := p.callID
		p.mu.Unlock()
		p.resume(w, id)
		return
	case http.MethodDelete:
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(raw, &req) != nil || len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // notifications
		return
	}
	result := `{}`
	switch req.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"peer","version":"1"}}`
	case "tools/list":
		if p.sseList {
			writeSSEAnswer(w, string(req.ID), p.list)
			return
		}
		result = p.list
	case "tools/call":
		p.mu.Lock()
		p.callID = string(req.ID)
		p.mu.Unlock()
		p.call(w, r, string(req.ID))
		return
	}
	writeJSONAnswer(w, string(req.ID), result)
}

func writeJSONAnswer(w http.ResponseWriter, id, result string) {
	w.Header().Set("Content-Type", "application/json")
	for _, piece := range []string{`{"jsonrpc":"2.0","id":` + id + `,"result":`, result, `}`} {
		_, _ = io.WriteString(w, piece)
	}
}

// writeSSE starts an SSE answer, if not yet started, and writes events,
// flushing each.
func writeSSE(w http.ResponseWriter, events ...string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	for _, e := range events {
		_, _ = io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// writeSSEAnswer starts an SSE answer (after the events before) and writes
// one event answering id with result on one data line, in pieces, so that
// the server copies no hostile result.
func writeSSEAnswer(w http.ResponseWriter, id, result string, before ...string) {
	writeSSE(w, before...)
	writeSSE(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":`+id+`,"result":`, result, "}\n\n")
}

// start serves p and connects a bounded, attached session to it with
// monitor.Connect; everything closes at t's cleanup.
func (p *httpPeer) start(t *testing.T) sessionHarness {
	t.Helper()
	hs := httptest.NewServer(p)
	transport := &http.Transport{}
	t.Cleanup(func() { // after the session closes (cleanups run last first)
		hs.CloseClientConnections()
		hs.Close()
		transport.CloseIdleConnections()
	})
	return p.connect(t, hs.URL, &http.Client{Transport: transport})
}

// startInMemory is start over a memTransport, with no socket, so that it
// runs inside a testing/synctest bubble.
func (p *httpPeer) startInMemory(t *testing.T) sessionHarness {
	t.Helper()
	return p.connect(t, "http://peer.test/mcp", &http.Client{Transport: memTransport{handler: p}})
}

func (p *httpPeer) connect(t *testing.T, endpoint string, hc *http.Client) sessionHarness {
	t.Helper()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := monitor.Connect(t.Context(), client, &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: hc, MaxRetries: 2},
		&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return sessionHarness{session: cs, monitor: monitor, counts: func() (int, int) { return 0, 0 }}
}

// runHostile runs the bound tool once under limits and checks the outcome:
// code want, within Timeout + 50 ms, allocating at most 2 × limit + 1 MiB.
func runHostile(t *testing.T, h sessionHarness, limits purramcp.Limits, limit int, want, id string) {
	t.Helper()
	runHostileReading(t, h, limits, limit, 0, want, id)
}

// runHostileReading is runHostile where the bound also allows read bytes:
// what a server in this process allocates to send the answer.
func runHostileReading(t *testing.T, h sessionHarness, limits purramcp.Limits, limit, read int, want, id string) {
	t.Helper()
	reg := discoverWith(t, h, limits, nil)
	var res purramcp.ToolResult
	var err error
	var took time.Duration
	alloc := allocated(func() {
		start := time.Now()
		res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		took = time.Since(start)
	})
	if err != nil {
		t.Fatalf("%v: %v", id, err)
	}
	if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: want}); !reflect.DeepEqual(res, want) {
		t.Errorf("%v: got %v, want %v", id, res, want)
	}
	if limit := limits.Timeout + 50*time.Millisecond; took >= limit {
		t.Errorf("%s: Run ends within Timeout + 50 ms: got %v, want < %v", id, took, limit)
	}
	if limit := uint64(2*limit + 1<<20 + read); alloc > limit {
		t.Errorf("%s: allocation: got %v, want <= %v", id, alloc, limit)
	}
	t.Logf("%s: %s in %v, %.2f MiB allocated", id, res.ErrorCode, took, float64(alloc)/(1<<20))
}

// textTool is the fixture's tool without its output schema.
func textTool(t *testing.T) string {
	return string(withField(t, loadMCPFixture(t).Tool, "outputSchema", nil))
}

// threatBoundingLayerEveryPath (T6): hostile answers (oversized, malformed,
// unanswered), over streamable HTTP, io and in memory, each rejected before
// go-sdk decodes it.
func threatBoundingLayerEveryPath(t *testing.T) {
	t.Run("sse_data_line_longer_than_the_read_buffer", threatSSELongLine)
	t.Run("resumed_stream_bounded_by_its_request", threatResumedStream)
	t.Run("count_dense_page_and_result", threatCountDense)
	t.Run("dripped_sse_event_rejected_at_the_budget", threatDrippedEvent)
}

// threatSSELongLine (T6): a tools/call answer of 5.15 MiB as one SSE data
// line (every SSE server writes one line per event) is counted whole, not
// just its first 64 KiB, and fails mcp_result_too_large; so does a
// tools/list page of 1.14 MiB on one line (mcp_catalog_limit_exceeded). A
// comment line of the same size is no data and costs nothing.
func threatSSELongLine(t *testing.T) {
	tool := textTool(t)
	hostile := `{"content":[{"type":"text","text":"` + strings.Repeat("x", hostileSSEBytes) + `"}]}`
	leakChecked(t, "call", func(t *testing.T) {
		h := (&httpPeer{list: page("", tool), call: func(w http.ResponseWriter, _ *http.Request, id string) {
			writeSSEAnswer(w, id, hostile)
		}}).start(t)
		lim := purramcp.Limits{Timeout: 5 * time.Second}
		runHostile(t, h, lim, purramcp.DefaultLimits().MaxResultBytes, purramcp.CodeResultTooLarge, "T6 long SSE line")
		if err := h.monitor.Check(h.monitor.Revision()); err != nil {
			t.Errorf("the session stays usable: %v", err)
		}
	})
	leakChecked(t, "comment", func(t *testing.T) {
		comment := ":" + strings.Repeat("c", hostileSSEBytes) + "\n"
		h := (&httpPeer{list: page("", tool), call: func(w http.ResponseWriter, _ *http.Request, id string) {
			writeSSEAnswer(w, id, `{"content":[{"type":"text","text":"ok"}]}`, comment)
		}}).start(t)
		reg := discoverWith(t, h, purramcp.Limits{Timeout: 5 * time.Second}, nil)
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"ok"}; !reflect.DeepEqual(res.Content.Text, want) {
			t.Errorf("T6: a long comment is not the answer's data: got %v, want %v", res.Content.Text, want)
		}
	})
	leakChecked(t, "page", func(t *testing.T) {
		described := `{"name":"big","inputSchema":{"type":"object"},"description":"` + strings.Repeat("d", 1<<20+150<<10) + `"}`
		h := (&httpPeer{list: page("", tool, described), sseList: true}).start(t)
		var took time.Duration
		alloc := allocated(func() {
			start := time.Now()
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{Timeout: 5 * time.Second}})
			took = time.Since(start)
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
				t.Errorf("T6 long SSE page line: got %q, want %q", got, purramcp.CodeCatalogLimitExceeded)
			}
		})
		if limit := 5*time.Second + 50*time.Millisecond; took >= limit {
			t.Errorf("within Timeout + 50 ms: got %v, want < %v", took, limit)
		}
		if limit := uint64(2*purramcp.DefaultLimits().MaxCatalogBytes + 1<<20); alloc > limit {
			t.Errorf("allocation: got %v, want <= %v", alloc, limit)
		}
		t.Logf("T6 long SSE page line: %v, %.2f MiB allocated", took, float64(alloc)/(1<<20))
	})
}

// threatResumedStream (T6): when a tools/call stream ends after a priming
// event id, go-sdk fetches the answer with a GET carrying Last-Event-ID
// under the call's ctx; that answer is bounded by the call's budget as a
// POST's is. A fitting answer on the resumed stream still arrives.
func threatResumedStream(t *testing.T) {
	tool := textTool(t)
	priming := func(w http.ResponseWriter, _ *http.Request, _ string) { writeSSE(w, "retry: 1\nid: 1\ndata:\n\n") }
	for _, tc := range []struct{ id, result, want string }{
		{"hostile", `{"content":[{"type":"text","text":"` + strings.Repeat("x", hostileSSEBytes) + `"}]}`, purramcp.CodeResultTooLarge},
		{"dense", emptyBlocks(2000), purramcp.CodeResultTooLarge},
		{"fits", `{"content":[{"type":"text","text":"ok"}]}`, ""},
	} {
		leakChecked(t, tc.id, func(t *testing.T) {
			peer := &httpPeer{list: page("", tool), call: priming, resume: func(w http.ResponseWriter, id string) {
				writeSSEAnswer(w, id, tc.result, "id: 2\n")
			}}
			h := peer.start(t)
			if tc.want == "" {
				res, err := discoverWith(t, h, purramcp.Limits{Timeout: 5 * time.Second}, nil).Run(t.Context(), argsA, purramcp.ToolContext{})
				if err != nil {
					t.Fatal(err)
				}
				if want := []string{"ok"}; !reflect.DeepEqual(res.Content.Text, want) {
					t.Errorf("T6 resumed stream: a fitting answer: got %v, want %v", res.Content.Text, want)
				}
			} else {
				runHostile(t, h, purramcp.Limits{Timeout: 5 * time.Second}, purramcp.DefaultLimits().MaxResultBytes, tc.want, "T6 resumed "+tc.id)
			}
			peer.mu.Lock()
			defer peer.mu.Unlock()
			if peer.gets != 1 {
				t.Errorf("T6 %s: the answer came on the resumed stream: got %v, want %v", tc.id, peer.gets, 1)
			}
		})
	}
}

// oneLetterTools renders a page of n tools named "a", about 13 bytes each.
func oneLetterTools(n int) string {
	return `{"tools":[` + strings.TrimSuffix(strings.Repeat(`{"name":"a"},`, n), ",") + `]}`
}

// threatCountDense (T6): a page of 80,000 one-letter tools (1.04 MB, under
// MaxCatalogBytes + 4 KiB) and a result of 20,000 empty blocks (60 KB,
// under MaxResultBytes) are rejected by their element count before
// go-sdk decodes them, over io (requests on goroutines of their own) and over HTTP (JSON
// and SSE): the code of the post-decode count, within Timeout + 50 ms,
// and no decoder left running (goleak).
func threatCountDense(t *testing.T) {
	tool := textTool(t)
	pageText := oneLetterTools(80_000)
	resultText := `{"content":[` + strings.TrimSuffix(strings.Repeat(`{},`, 20_000), ",") + `]}`
	// Over io go-sdk reads the whole line first (1 MB here: several seconds
	// under -race on a loaded 2-core machine), which the layer cannot end;
	// Timeout is generous there and the allocation bound adds that read
	// (the server's frame, the layer's and go-sdk's buffers: at most 8 × the frame).
	check := func(t *testing.T, h sessionHarness, wiring string, timeout time.Duration, read int) {
		var took time.Duration
		alloc := allocated(func() {
			start := time.Now()
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{Timeout: timeout}})
			took = time.Since(start)
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
				t.Errorf("T6 dense page over %s: got %q, want %q", wiring, got, purramcp.CodeCatalogLimitExceeded)
			}
		})
		if limit := timeout + 50*time.Millisecond; took >= limit {
			t.Errorf("T6 dense page over %s: within Timeout + 50 ms: got %v, want < %v", wiring, took, limit)
		}
		if limit := uint64(2*purramcp.DefaultLimits().MaxCatalogBytes + 1<<20 + read); alloc > limit {
			t.Errorf("T6 dense page over %s: allocation: got %v, want <= %v", wiring, alloc, limit)
		}
		t.Logf("T6 dense page over %s: %v, %.2f MiB allocated", wiring, took, float64(alloc)/(1<<20))
	}
	leakChecked(t, "io", func(t *testing.T) {
		check(t, (&byteServer{page: pageText}).start(t), "io", 10*time.Second, 8*len(pageText))
		h := (&byteServer{page: page("", tool), call: resultText}).start(t)
		runHostile(t, h, purramcp.Limits{Timeout: 10 * time.Second}, purramcp.DefaultLimits().MaxResultBytes, purramcp.CodeResultTooLarge, "T6 dense result over io")
	})
	leakChecked(t, "in_memory", func(t *testing.T) {
		srv := newSDKServer(t, nil, withField(t, loadMCPFixture(t).Tool, "outputSchema", nil))
		srv.MCP.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/call" {
					return &rawResult{raw: json.RawMessage(resultText)}, nil
				}
				return next(ctx, method, req)
			}
		})
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cs, err := monitor.Connect(t.Context(), client, serveInMemory(t, srv), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		h := sessionHarness{session: cs, monitor: monitor, counts: srv.counts}
		// The go-sdk server encodes the result in this process: the bound adds
		// those copies.
		runHostileReading(t, h, purramcp.Limits{Timeout: 10 * time.Second}, purramcp.DefaultLimits().MaxResultBytes, 12*len(resultText),
			purramcp.CodeResultTooLarge, "T6 dense result in memory")

		dense := newSDKServer(t, nil)
		dense.MCP.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					return &rawResult{raw: json.RawMessage(pageText)}, nil
				}
				return next(ctx, method, req)
			}
		})
		denseMonitor := purramcp.NewCatalogMonitor()
		denseClient := denseMonitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		denseSession, err := denseMonitor.Connect(t.Context(), denseClient, serveInMemory(t, dense), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = denseSession.Close() })
		// The go-sdk server encodes the page in this process (its result, its
		// frame and go-sdk's reading of it: several copies): the bound adds
		// them.
		// Timeout is generous as over io: the server's encoding and go-sdk's
		// reading of the 1 MB line take most of a second under -race on a
		// loaded machine.
		check(t, sessionHarness{session: denseSession, monitor: denseMonitor, counts: dense.counts}, "in-memory", 10*time.Second, 16*len(pageText))
	})
	for _, sse := range []bool{false, true} {
		leakChecked(t, fmt.Sprintf("http_sse=%v", sse), func(t *testing.T) {
			check(t, (&httpPeer{list: pageText, sseList: sse}).start(t), "HTTP", time.Second, 0)
			h := (&httpPeer{list: page("", tool), call: func(w http.ResponseWriter, _ *http.Request, id string) {
				if sse {
					writeSSEAnswer(w, id, resultText)
					return
				}
				writeJSONAnswer(w, id, resultText)
			}}).start(t)
			runHostile(t, h, purramcp.Limits{Timeout: time.Second}, purramcp.DefaultLimits().MaxResultBytes, purramcp.CodeResultTooLarge, "T6 dense result over HTTP")
		})
	}
}

// threatDrippedEvent (T6): an SSE answer dripped 4 KiB at a time is
// rejected as soon as its count passes the budget, with the code of the
// same bytes as a JSON body (mcp_result_too_large), long before Timeout.
func threatDrippedEvent(t *testing.T) {
	tool := textTool(t)
	leakChecked(t, "drip", func(t *testing.T) {
		chunk := strings.Repeat("x", 4<<10)
		h := (&httpPeer{list: page("", tool), call: func(w http.ResponseWriter, r *http.Request, id string) {
			writeSSE(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}}).start(t)
		timeout := 3 * time.Second
		reg := discoverWith(t, h, purramcp.Limits{Timeout: timeout}, nil)
		start := time.Now()
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeResultTooLarge {
			t.Errorf("T6 dripped SSE event: got %q, want %q", res.ErrorCode, purramcp.CodeResultTooLarge)
		}
		if limit := timeout / 2; took >= limit {
			t.Errorf("T6 dripped SSE event: rejected at the budget, not at Timeout: got %v, want < %v", took, limit)
		}
		t.Logf("T6 dripped SSE event: %s after %v (Timeout %v)", res.ErrorCode, took, timeout)
	})
}

// threatClientBuiltWithOtherOptions (T10): the wiring check is a property
// of the session's client, known by construction: only a client the
// monitor built (NewClient) is accepted. A host that has the monitor build
// a client and then connects another one (go-sdk would re-send tools/call
// for inputRequests and no list change would make a catalog stale) fails
// mcp_binding_invalid, through monitor.Connect (no session returned) and
// through Attach alike; so do a client built with exactly the options the
// monitor would apply, and another monitor's client.
func threatClientBuiltWithOtherOptions(t *testing.T) {
	f := loadMCPFixture(t)
	impl := &mcp.Implementation{Name: "host", Version: "1"}
	for _, tc := range []struct {
		id     string
		client func(m *purramcp.CatalogMonitor) *mcp.Client
		want   string
	}{
		{"other_options", func(m *purramcp.CatalogMonitor) *mcp.Client {
			_ = m.NewClient(impl, nil) // built, then not used
			return mcp.NewClient(impl, &mcp.ClientOptions{})
		}, purramcp.CodeBindingInvalid},
		{"nil_options", func(m *purramcp.CatalogMonitor) *mcp.Client {
			_ = m.NewClient(impl, nil)
			return mcp.NewClient(impl, nil)
		}, purramcp.CodeBindingInvalid},
		{"the_monitors_options_copied", func(m *purramcp.CatalogMonitor) *mcp.Client {
			return mcp.NewClient(impl, purramcp.ClientOptionsOf(m, nil))
		}, purramcp.CodeBindingInvalid},
		{"another_monitors_client", func(*purramcp.CatalogMonitor) *mcp.Client {
			return purramcp.NewCatalogMonitor().NewClient(impl, nil)
		}, purramcp.CodeBindingInvalid},
		{"wired", func(m *purramcp.CatalogMonitor) *mcp.Client { return m.NewClient(impl, nil) }, ""},
		{"wired_host_options", func(m *purramcp.CatalogMonitor) *mcp.Client {
			return m.NewClient(impl, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{}})
		}, ""},
		{"wired_second_client", func(m *purramcp.CatalogMonitor) *mcp.Client {
			_ = m.NewClient(impl, nil)
			return m.NewClient(impl, &mcp.ClientOptions{})
		}, ""},
	} {
		t.Run(tc.id+"/Connect", func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			t.Run("session", func(t *testing.T) {
				ct := serveInMemory(t, newSDKServer(t, nil, f.Tool))
				monitor := purramcp.NewCatalogMonitor()
				cs, err := monitor.Connect(t.Context(), tc.client(monitor), ct, nil)
				if cs != nil {
					t.Cleanup(func() { _ = cs.Close() })
				}
				if got := purramcp.CodeOf(err); got != tc.want {
					t.Errorf("T10 %s: Connect: got %q, want %q", tc.id, got, tc.want)
				}
				if tc.want != "" && cs != nil {
					t.Errorf("T10 %s: no mis-wired session is returned: got one, want nil", tc.id)
				}
			})
		})
		t.Run(tc.id+"/Attach", func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			t.Run("session", func(t *testing.T) {
				ct := serveInMemory(t, newSDKServer(t, nil, f.Tool))
				monitor := purramcp.NewCatalogMonitor()
				cs, err := tc.client(monitor).Connect(t.Context(), monitor.Transport(ct), nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				if got := purramcp.CodeOf(monitor.Attach(cs)); got != tc.want {
					t.Errorf("T10 %s: Attach: got %q, want %q", tc.id, got, tc.want)
				}
				if tc.want != "" {
					if got := purramcp.CodeOf(monitor.Check(0)); got != purramcp.CodeNotInitialized {
						t.Errorf("T10 %s: nothing accepted: got %q, want %q", tc.id, got, purramcp.CodeNotInitialized)
					}
				}
			})
		})
	}
}

// threatHTTPConnectionFailsInFlight (T11): a call in flight when go-sdk
// fails the HTTP connection (an event or body it cannot decode, before any
// result reached it) is mcp_transport_error: go-sdk retires the call with
// an error that carries no sentinel. A result that reached go-sdk and does
// not decode stays mcp_result_invalid.
func threatHTTPConnectionFailsInFlight(t *testing.T) {
	tool := textTool(t)
	for _, tc := range []struct {
		id   string
		call func(w http.ResponseWriter, r *http.Request, id string)
		want string
	}{
		{"undecodable_event", func(w http.ResponseWriter, _ *http.Request, _ string) {
			writeSSE(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"\n\n")
		}, purramcp.CodeTransportError},
		{"undecodable_event_after_a_wait", func(w http.ResponseWriter, _ *http.Request, _ string) {
			writeSSE(w, ": waiting\n")
			time.Sleep(50 * time.Millisecond)
			writeSSE(w, "event: message\ndata: not json\n\n")
		}, purramcp.CodeTransportError},
		{"undecodable_body", func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `not json`)
		}, purramcp.CodeTransportError},
		{"undecodable_result", func(w http.ResponseWriter, _ *http.Request, id string) {
			writeJSONAnswer(w, id, `{"content":[{"type":"text","text":1}]}`)
		}, purramcp.CodeResultInvalid},
	} {
		leakChecked(t, tc.id, func(t *testing.T) {
			h := (&httpPeer{list: page("", tool), call: tc.call}).start(t)
			reg := discoverWith(t, h, purramcp.Limits{Timeout: 5 * time.Second}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: tc.want}); !reflect.DeepEqual(res, want) {
				t.Errorf("T11 %s: got %v, want %v", tc.id, res, want)
			}
		})
	}
}

// threatHTTPSessionLost (T11): the HTTP server restarts and forgets the
// session. go-sdk fails the connection once its standalone stream cannot be
// resumed, with an error that carries no sentinel. A Run that meets the
// failed connection is mcp_transport_error (the bounding layer saw the
// connection lost), never mcp_result_invalid; once the session has ended,
// Runs are mcp_connection_closed; none reaches either server, and no
// goroutine of the session outlives the test.
func threatHTTPSessionLost(t *testing.T) {
	leakChecked(t, "restart", func(t *testing.T) {
		tool := json.RawMessage(textTool(t))
		first, restarted := newSDKServer(t, nil, tool), newSDKServer(t, nil, tool)
		var handler atomic.Pointer[http.Handler]
		serve := func(s *sdkServer) {
			h := http.Handler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP }, nil))
			handler.Store(&h)
		}
		serve(first)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			(*handler.Load()).ServeHTTP(w, r)
		}))
		defer ts.Close()
		// The first server's session outlives the client's (no DELETE reaches
		// a server that forgot it): it is closed at the end, so that its
		// reading goroutine does not outlive the test.
		defer func() {
			for ss := range first.MCP.Sessions() {
				_ = ss.Close()
			}
		}()
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cs, err := monitor.Connect(t.Context(), client,
			&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cs.Close() }()
		h := sessionHarness{session: cs, monitor: monitor, counts: first.counts, lastArguments: first.lastArguments}
		reg := discoverWith(t, h, purramcp.Limits{Timeout: 2 * time.Second}, nil)
		if res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{}); err != nil || res.ErrorCode != "" {
			t.Fatalf("before the restart: %v %q", err, res.ErrorCode)
		}

		serve(restarted)
		ts.CloseClientConnections() // ends the standalone stream; its resumption finds no session
		// The Run that meets the lost connection fails the transport, unless
		// the monitor saw the session end first. The monitor learns of the end
		// on its own goroutine (session.Wait, then Close), so a Run between
		// go-sdk failing the connection and that goroutine closing the monitor
		// is mcp_transport_error too: the test waits for the monitor to close
		// (the event), then every Run fails before sending anything.
		res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.ErrorCode; got != purramcp.CodeTransportError && got != purramcp.CodeConnectionClosed {
			t.Errorf("T11 the first Run after the restart: got %q, want %q or %q", got, purramcp.CodeTransportError, purramcp.CodeConnectionClosed)
		}
		closed := func() bool { return errors.Is(monitor.Check(monitor.Revision()), purramcp.ErrConnectionClosed) }
		if !eventually(closed, waitFor, tick) {
			t.Fatalf("T11: the monitor sees the session end: not met in time")
		}
		var codes []string
		for range 20 {
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			codes = append(codes, res.ErrorCode)
		}
		if want := slices.Repeat([]string{purramcp.CodeConnectionClosed}, len(codes)); !slices.Equal(codes, want) {
			t.Errorf("T11 Runs once the session ended: got %q, want %q", codes, want)
		}
		if _, calls := first.counts(); calls != 1 {
			t.Errorf("T11: the first server saw %d tools/call, want 1", calls)
		}
		if _, calls := restarted.counts(); calls != 0 {
			t.Errorf("T11: the restarted server saw %d tools/call, want 0", calls)
		}
	})
}

// startReference connects s with purra-mcp 1.0.0's reference wiring (the
// monitor's client, client.Connect without the monitor's Transport,
// Attach) in memory; everything closes at t's cleanup.
func startReference(t *testing.T, s *rawServer) sessionHarness {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.conn, s.done = conn, make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.serve()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cancel()
		_ = s.conn.Close() // unblocks the stalled client write first
		_ = cs.Close()
		<-s.done
	})
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: s.lastArguments}
}

// threatReferenceWiringOneAbandoned (T11): without the
// bounding layer nothing can end a write to a peer that stopped reading.
// The Run whose write blocks returns at its Timeout and leaves its goroutine
// blocked; while that goroutine runs, every later request of the session is
// refused at once with mcp_transport_error instead of queueing one more
// goroutine behind go-sdk's write lock: 200 Runs leave at most that one
// goroutine. Once the session closes, the write fails and nothing is left.
func threatReferenceWiringOneAbandoned(t *testing.T) {
	f := loadMCPFixture(t)
	leakChecked(t, "reference", func(t *testing.T) {
		h := startReference(t, &rawServer{stallCalls: true, pages: []string{page("", string(f.Tool))}})
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
		before := runtime.NumGoroutine()
		start := time.Now()
		res, err = reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorCode != purramcp.CodeTimeout {
			t.Errorf("T11: the write blocks: got %q, want %q", res.ErrorCode, purramcp.CodeTimeout)
		}
		if limit := timeout + 150*time.Millisecond; took >= limit {
			t.Errorf("T11: Run returns at its Timeout: got %v, want < %v", took, limit)
		}
		start = time.Now()
		for range 200 {
			res, err = reg.Run(t.Context(), bigArgs, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeTransportError {
				t.Fatalf("T11: later Runs are refused: got %q, want %q", res.ErrorCode, purramcp.CodeTransportError)
			}
		}
		refused := time.Since(start)
		after := runtime.NumGoroutine()
		if limit := before + 1; after > limit {
			t.Errorf("T11: one abandoned goroutine, none per later Run: got %v, want <= %v", after, limit)
		}
		if catalog.Stale() {
			t.Errorf("T11: nothing severs the reference wiring")
		}
		t.Logf("T11 reference wiring: blocked Run returned after %v (Timeout %v); 200 later Runs refused in %v; goroutines %d before, %d after",
			took, timeout, refused, before, after)
	})
}
