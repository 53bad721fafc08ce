package purramcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// TestMonitor_AttachRequiresWiring: a session whose client the monitor did
// not build (NewClient) fails Attach with mcp_binding_invalid (and so can
// never be discovered over); one connected without the monitor's Transport
// is accepted, as the reference wiring is; a monitor's transport connects
// one session; a nil transport fails to connect.
func TestMonitor_AttachRequiresWiring(t *testing.T) {
	leakChecked(t, "wiring", attachRequiresWiring)
}

func attachRequiresWiring(t *testing.T) {
	f := loadMCPFixture(t)
	srv := newSDKServer(t, nil, f.Tool)
	impl := &mcp.Implementation{Name: "host", Version: "1"}
	connect := func(client func(*purramcp.CatalogMonitor) *mcp.Client, wrap bool) (*purramcp.CatalogMonitor, error) {
		ct := serveInMemory(t, srv)
		monitor := purramcp.NewCatalogMonitor()
		var transport mcp.Transport = ct
		if wrap {
			transport = monitor.Transport(ct)
		}
		cs, err := client(monitor).Connect(t.Context(), transport, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return monitor, monitor.Attach(cs)
	}
	own := func(*purramcp.CatalogMonitor) *mcp.Client { return mcp.NewClient(impl, &mcp.ClientOptions{}) }
	wired := func(m *purramcp.CatalogMonitor) *mcp.Client { return m.NewClient(impl, nil) }
	for id, tc := range map[string]struct {
		client func(*purramcp.CatalogMonitor) *mcp.Client
		wrap   bool
		want   string
	}{
		"no_client_options": {own, true, "mcp_binding_invalid"},
		"no_bounding_layer": {wired, false, ""},
		"neither":           {own, false, "mcp_binding_invalid"},
		"wired":             {wired, true, ""},
	} {
		monitor, err := connect(tc.client, tc.wrap)
		assert.Equal(t, tc.want, purramcp.CodeOf(err), id)
		if tc.want != "" {
			assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(monitor.Check(0)), "%s: the monitor accepted nothing", id)
		}
	}

	monitor := purramcp.NewCatalogMonitor()
	st, ct := mcp.NewInMemoryTransports()
	peer, err := st.Connect(t.Context())
	require.NoError(t, err)
	defer func() { _ = peer.Close() }()
	transport := monitor.Transport(ct)
	var conn mcp.Connection
	conn, err = transport.Connect(t.Context())
	require.NoError(t, err)
	_, err = transport.Connect(t.Context())
	assert.Error(t, err, "one session per monitor")
	_, err = monitor.Transport(ct).Connect(t.Context())
	assert.Error(t, err, "one session per monitor, whichever wrapper")
	require.NoError(t, conn.Close())
	_, err = purramcp.NewCatalogMonitor().Transport(nil).Connect(t.Context())
	assert.Error(t, err, "nil transport")
}

// TestMonitor_AttachAnotherMonitorsSession: the wiring is known by
// construction, per monitor. A session of a client monitor a built fails
// Attach on monitor b (mcp_binding_invalid; b accepts nothing and stays
// free), whether it was connected through b's Transport or not, and
// monitor a then attaches it; b then attaches a session of its own client.
func TestMonitor_AttachAnotherMonitorsSession(t *testing.T) {
	leakChecked(t, "another_monitor", func(t *testing.T) {
		f := loadMCPFixture(t)
		for _, throughB := range []bool{false, true} {
			a, b := purramcp.NewCatalogMonitor(), purramcp.NewCatalogMonitor()
			ct := serveInMemory(t, newSDKServer(t, nil, f.Tool))
			var transport mcp.Transport = ct
			if throughB {
				transport = b.Transport(ct)
			}
			cs, err := a.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), transport, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(b.Attach(cs)), "through b's Transport: %v", throughB)
			assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(b.Check(0)), "b accepted nothing")
			assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(b.Attach(cs)), "still refused")
			require.NoError(t, a.Attach(cs), "the monitor that built the client attaches its session")
			assert.NoError(t, a.Check(0))

			if throughB {
				continue // b's Transport is spent on a's session
			}
			// b is still free: its own client's session attaches.
			cs2, err := b.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).
				Connect(t.Context(), serveInMemory(t, newSDKServer(t, nil, f.Tool)), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs2.Close() })
			assert.NoError(t, b.Attach(cs2))
		}
	})
}

// TestMonitor_AttachRecognisesLastSessions: before one is attached, a
// monitor recognises the last four sessions its clients connected: of five,
// the first fails mcp_binding_invalid and the last attaches; then every
// other session fails mcp_protocol_conflict, and the attached one attaches
// again.
func TestMonitor_AttachRecognisesLastSessions(t *testing.T) {
	leakChecked(t, "last_sessions", func(t *testing.T) {
		srv := newSDKServer(t, nil, loadMCPFixture(t).Tool)
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		var sessions []*mcp.ClientSession
		for range 5 {
			cs, err := client.Connect(t.Context(), serveInMemory(t, srv), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			sessions = append(sessions, cs)
		}
		assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(monitor.Attach(sessions[0])), "forgotten")
		require.NoError(t, monitor.Attach(sessions[4]))
		for i, cs := range sessions[:4] {
			assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(monitor.Attach(cs)), "session %d", i)
		}
		assert.NoError(t, monitor.Attach(sessions[4]), "attached again")
	})
}

// TestMonitor_AttachOnlyTheTransportsSession: once the monitor's Transport
// connected a session, Attach accepts that session only: another session
// of the monitor's own client, connected without the layer (whose
// requests the layer would never see), fails mcp_binding_invalid, over
// in-memory and streamable HTTP transports alike, and the layer's session
// then attaches.
func TestMonitor_AttachOnlyTheTransportsSession(t *testing.T) {
	leakChecked(t, "layer_session", func(t *testing.T) {
		srv := newSDKServer(t, nil, loadMCPFixture(t).Tool)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, nil))
		tr := &http.Transport{}
		t.Cleanup(func() { hs.Close(); tr.CloseIdleConnections() })
		for id, bounded := range map[string]func() mcp.Transport{
			"memory": func() mcp.Transport { return serveInMemory(t, srv) },
			"http": func() mcp.Transport {
				return &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: tr}}
			},
		} {
			monitor := purramcp.NewCatalogMonitor()
			client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			viaLayer, err := client.Connect(t.Context(), monitor.Transport(bounded()), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = viaLayer.Close() })
			plain, err := client.Connect(t.Context(), serveInMemory(t, srv), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = plain.Close() })
			assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(monitor.Attach(plain)), "%s: a session the layer did not connect", id)
			assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(monitor.Check(0)), "%s: the monitor accepted nothing", id)
			assert.NoError(t, monitor.Attach(viaLayer), id)
		}
	})
}

// knownCodes are every code Run may give a fuzzed answer.
var knownCodes = map[string]bool{"": true, "mcp_result_too_large": true, "mcp_result_invalid": true,
	"mcp_result_unsupported": true, "mcp_tool_error": true, "mcp_timeout": true, "mcp_transport_error": true,
	"mcp_protocol_error": true, "mcp_connection_closed": true}

// Framings of FuzzBoundingLayer: the answer's frame over io, or over
// streamable HTTP as a JSON body or as an SSE event, written so.
const (
	framingIO         = iota
	framingJSONBody   // application/json
	framingSSELine    // one data line
	framingSSESplit   // CRLF, comments, the data on two data lines split at split
	framingSSEChunked // one data line written in two flushed pieces split at split
	framingSSEResumed // a priming event id, then the answer on the GET that resumes
	framings
)

// FuzzBoundingLayer writes a fuzzed tools/call answer byte for byte through
// the bounding layer under a fuzzed MaxResultBytes, over io or over
// streamable HTTP in one of the framings above (line splits, long lines,
// CRLF, comments, multi-line data, resumed streams). The answer is text
// with pad copies of unit inserted at split, so that an input of a few
// dozen bytes stands for a long line or a count-dense result and the
// fuzzer's minimizer, quadratic in the length of a string, stays quick.
// Run never panics and ends with a known code within Timeout: arguments
// over the argument contract's limits fail mcp_invalid_arguments before any
// request; an answer whose counted JSON is over the limit plus the layer's
// 4 KiB slack always fails mcp_result_too_large (over the cap first,
// whatever the bytes). Each input runs in a testing/synctest bubble, over
// io.Pipe or a memTransport: an answer go-sdk drops waits out the 300 ms
// Timeout on the bubble's fake clock, at no wall time, and the bubble's end
// proves that no goroutine of the session outlives it. The seeds, one set
// per framing, are in testdata/fuzz/FuzzBoundingLayer.
func FuzzBoundingLayer(f *testing.F) {
	tool := string(withField(f, loadMCPFixture(f).Tool, "outputSchema", nil))
	f.Fuzz(func(t *testing.T, text string, limit int, framing uint8, split uint16, unit string, pad uint16) {
		if limit < 1 || limit > 65536 || len(text) > 256 || len(unit) > 64 {
			return
		}
		k := int(split) % (len(text) + 1)
		answer := text[:k] + strings.Repeat(unit, int(pad)) + text[k:]
		if strings.ContainsAny(answer, "\n\r") {
			return
		}
		framing %= framings
		synctest.Test(t, func(t *testing.T) {
			var h sessionHarness
			if framing == framingIO {
				h = (&byteServer{page: page("", tool), call: answer}).start(t)
			} else {
				h = fuzzHTTPPeer(tool, answer, framing, int(split)).startInMemory(t)
			}
			timeout := 300 * time.Millisecond
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: purramcp.Limits{MaxResultBytes: limit, Timeout: timeout}})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			reg := catalog.Registrations()[0]
			start := time.Now()
			res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.LessOrEqual(t, time.Since(start), timeout, "Run ends at its Timeout")
			if _, err := reg.ArgumentContract.Parse(string(argsA)); err != nil {
				assert.Equal(t, "mcp_invalid_arguments", res.ErrorCode, "arguments over the contract's limits")
				return
			}
			assert.True(t, knownCodes[res.ErrorCode], "code %q", res.ErrorCode)
			if jssize.RawWithin([]byte(answer), limit+4096) > limit+4096 {
				assert.Equal(t, "mcp_result_too_large", res.ErrorCode, "an answer over the cap (framing %d)", framing)
			}
		})
	})
}

// fuzzHTTPPeer is an HTTP peer that answers tools/call with answer in
// framing, split at split (modulo the frame's length).
func fuzzHTTPPeer(tool, answer string, framing uint8, split int) *httpPeer {
	frame := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + answer + `}` }
	at := func(s string) int { return split % (len(s) + 1) }
	event := func(w http.ResponseWriter, id string) {
		fr := frame(id)
		switch framing {
		case framingSSESplit:
			k := at(fr)
			writeSSE(w, ": a comment\r\n", "event: message\r\ndata: "+fr[:k]+"\r\n", "data:"+fr[k:]+"\r\n", "\r\n")
		case framingSSEChunked:
			k := at(fr)
			writeSSE(w, "event: message\ndata: "+fr[:k], fr[k:]+"\n\n")
		default:
			writeSSE(w, "event: message\ndata: "+fr+"\n\n")
		}
	}
	p := &httpPeer{list: page("", tool)}
	switch framing {
	case framingJSONBody:
		p.call = func(w http.ResponseWriter, _ *http.Request, id string) { writeJSONAnswer(w, id, answer) }
	case framingSSEResumed:
		p.call = func(w http.ResponseWriter, _ *http.Request, _ string) { writeSSE(w, "retry: 1\nid: 1\ndata:\n\n") }
		p.resume = func(w http.ResponseWriter, id string) { writeSSE(w, "id: 2\n"); event(w, id) }
	default:
		p.call = func(w http.ResponseWriter, _ *http.Request, id string) { event(w, id) }
	}
	return p
}

// serveInMemory connects srv to the server end of an in-memory pair and
// returns the client end; the server session is waited for at t's cleanup,
// after the cleanups the test registers later (the client's close first).
func serveInMemory(t *testing.T, srv *sdkServer) mcp.Transport {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Wait() })
	return ct
}

// referenceWired connects a client to srv in memory with purra-mcp 1.0.0's
// wiring (the monitor's client, client.Connect without Transport, Attach);
// the session closes at t's cleanup.
func referenceWired(t *testing.T, srv *sdkServer) (*purramcp.CatalogMonitor, *mcp.Client, *mcp.ClientSession) {
	t.Helper()
	ct := serveInMemory(t, srv)
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.NoError(t, monitor.Attach(cs))
	return monitor, client, cs
}

// TestMonitor_ReferenceWiringWithoutTransport: the wiring of purra-mcp
// 1.0.0's contract (the monitor's client, Connect, Attach, no Transport) still
// discovers and calls, and every result limit still holds after decoding.
func TestMonitor_ReferenceWiringWithoutTransport(t *testing.T) {
	f := loadMCPFixture(t)
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("<", 70_000) + `"}],"structuredContent":{"count":1}}`
	for _, tc := range []struct{ id, result, want string }{
		{"fits", "", ""},
		{"over_MaxResultBytes", big, "mcp_result_too_large"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			var result json.RawMessage
			if tc.result != "" {
				result = json.RawMessage(tc.result)
			}
			srv := newSDKServer(t, result, f.Tool)
			monitor, _, cs := referenceWired(t, srv)
			catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(),
				purramcp.DiscoveryOptions{Monitor: monitor})
			require.NoError(t, err)
			res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.ErrorCode)
			_, calls := srv.counts()
			assert.Equal(t, 1, calls, "one tools/call")
		})
	}
}

// TestMonitor_RequireTransport: once RequireTransport is called, Attach
// fails mcp_binding_invalid for a session connected without the monitor's
// Transport and accepts one connected through it.
func TestMonitor_RequireTransport(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		name    string
		bounded bool
		want    string
	}{{"without_Transport", false, "mcp_binding_invalid"}, {"through_Transport", true, ""}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSDKServer(t, nil, f.Tool)
			ct := serveInMemory(t, srv)
			monitor := purramcp.NewCatalogMonitor()
			monitor.RequireTransport()
			client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			var transport mcp.Transport = ct
			if tc.bounded {
				transport = monitor.Transport(ct)
			}
			cs, err := client.Connect(t.Context(), transport, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			assert.Equal(t, tc.want, purramcp.CodeOf(monitor.Attach(cs)))
		})
	}
}

// TestMonitor_Connect: Connect wires the bounding layer and attaches; a
// client the monitor did not build (the host's own, or another monitor's)
// fails mcp_binding_invalid and its session is closed (the server sees it
// end); a second Connect fails
// mcp_protocol_conflict; a nil client or transport
// fails mcp_binding_invalid without connecting; a connection that fails
// returns go-sdk's error, not a code.
func TestMonitor_Connect(t *testing.T) {
	f := loadMCPFixture(t)
	t.Run("wired", func(t *testing.T) {
		srv := newSDKServer(t, nil, f.Tool)
		ct := serveInMemory(t, srv)
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cs, err := monitor.Connect(t.Context(), client, ct, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		assert.Equal(t, purramcp.ProtocolVersion20260728, monitor.ProtocolVersion(), "attached")
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
		require.NoError(t, err)
		res, err := catalog.Registrations()[0].Run(t.Context(), json.RawMessage(`{"q":"a"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		assert.Equal(t, "", res.ErrorCode)
		_, err = monitor.Connect(t.Context(), client, ct, nil)
		assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err), "one session per monitor")
		require.NoError(t, monitor.Attach(cs), "the attached session is still attached")
	})
	t.Run("after_reference_wiring", func(t *testing.T) {
		monitor, client, cs := referenceWired(t, newSDKServer(t, nil, f.Tool))
		_, err := monitor.Connect(t.Context(), client, &mcp.InMemoryTransport{}, nil)
		assert.Equal(t, "mcp_protocol_conflict", purramcp.CodeOf(err))
		assert.NoError(t, monitor.Attach(cs), "a refused Connect leaves the monitor as it was")
	})
	for id, client := range map[string]func() *mcp.Client{
		"client_without_NewClient": func() *mcp.Client {
			return mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		},
		"another_monitors_client": func() *mcp.Client {
			return purramcp.NewCatalogMonitor().NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		},
	} {
		t.Run(id, func(t *testing.T) {
			srv := newSDKServer(t, nil, f.Tool)
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.MCP.Connect(t.Context(), st, nil)
			require.NoError(t, err)
			monitor := purramcp.NewCatalogMonitor()
			cs, err := monitor.Connect(t.Context(), client(), ct, nil)
			assert.Nil(t, cs)
			assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err))
			assert.Equal(t, "mcp_not_initialized", purramcp.CodeOf(monitor.Check(0)), "the monitor accepted nothing")
			done := make(chan error, 1)
			go func() { done <- ss.Wait() }()
			select {
			case <-done: // Connect closed the mis-wired session
			case <-time.After(waitFor):
				t.Fatal("the mis-wired session was left open")
			}
		})
	}
	t.Run("nil_arguments", func(t *testing.T) {
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		_, err := monitor.Connect(t.Context(), nil, &mcp.InMemoryTransport{}, nil)
		assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err))
		_, err = monitor.Connect(t.Context(), client, nil, nil)
		assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err))
	})
	t.Run("connection_fails", func(t *testing.T) {
		monitor := purramcp.NewCatalogMonitor()
		client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cmd := exec.Command("/nonexistent/purramcp-server")
		_, err := monitor.Connect(t.Context(), client, &mcp.CommandTransport{Command: cmd}, nil)
		require.Error(t, err)
		assert.Equal(t, "", purramcp.CodeOf(err), "go-sdk's own error")
	})
}
