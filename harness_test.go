package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
	"purra.dev/purramcp/purramcptest"
)

// The session harness: connecting and discovering helpers, versions, leak
// checks, and the small assertions the tests share. The servers, fixtures,
// generators, fuzz checks and workloads are each in a file of their own.

// connectSDK connects a client wired to a fresh, attached monitor; version ""
// negotiates go-sdk's default (2026-07-28). The session closes at cleanup.
func connectSDK(t testing.TB, server *mcp.Server, version string) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
	t.Helper()
	return purramcptest.Connect(t, server, purramcptest.Options{ProtocolVersion: version})
}

// searchBinding is the reference's default binding: remote.search as the
// read tool search, unscoped, concurrency-safe.
func searchBinding() map[string]purramcp.ToolBinding {
	return map[string]purramcp.ToolBinding{"remote.search": {LocalName: "search",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search"}, Scope: purramcp.Unscoped, ConcurrencySafe: true}}
}

// emptyEnvelope is the content of every failed result.
var emptyEnvelope = purramcp.Envelope{Text: []string{}}

// decodeObject decodes JSON into a map for value comparison.
func decodeObject(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("json.Unmarshal(raw, &m): %v", err)
	}
	return m
}

// sessionHarness is a connected, monitored session and its server's counts.
type sessionHarness struct {
	session       *mcp.ClientSession
	monitor       *purramcp.CatalogMonitor
	counts        func() (lists, calls int)
	lastArguments func() json.RawMessage
}

// sdkHarness connects to a go-sdk server at version ("" = default).
func sdkHarness(t testing.TB, s *sdkServer, version string) sessionHarness {
	t.Helper()
	cs, monitor := connectSDK(t, s.MCP, version)
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: s.lastArguments}
}

// rawHarness connects to a scripted raw server.
func rawHarness(t testing.TB, s *rawServer) sessionHarness {
	t.Helper()
	cs, monitor := s.start(t)
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: s.lastArguments}
}

// Polling bounds for the few asynchronous effects no synctest bubble can
// hold (a real child process, real sockets, a write queued on go-sdk's
// mutex); every other wait settles a bubble with synctest.Wait.
const (
	waitFor = 5 * time.Second
	tick    = 5 * time.Millisecond
)

var errContextCanceled = context.Canceled

func contextWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

// forEachVersion runs f as one subtest per negotiated version in
// testVersions, so a single version can be selected with -run.
func forEachVersion(t *testing.T, f func(t *testing.T, version string)) {
	t.Helper()
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) { f(t, version) })
	}
}

// leakChecked runs body as a subtest and then checks that no goroutine it
// started outlives it (its sessions close at its cleanup).
func leakChecked(t *testing.T, name string, body func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		t.Run("session", body)
	})
}

// serverNotifyDelay is how long a go-sdk server debounces a list change
// before it notifies its sessions (go-sdk v1.8.0 mcp/server.go
// notificationDelay, 10ms), plus a millisecond so the notification's timer
// fires before the waiting test goroutine wakes.
const serverNotifyDelay = 10*time.Millisecond + time.Millisecond

// awaitServerNotify, inside a synctest bubble, lets a go-sdk server's
// debounced list change go out and reach the client: fake time passes the
// debounce, then every goroutine of the bubble settles. The caller then
// asserts the effect directly.
func awaitServerNotify() {
	time.Sleep(serverNotifyDelay)
	synctest.Wait()
}

// discoverDefault runs the reference's default discovery.
func discoverDefault(t testing.TB, h sessionHarness, limits purramcp.Limits) (*purramcp.Catalog, error) {
	t.Helper()
	return purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
}

// modernities are both raw-server handshakes: initialize (2025-11-25) and
// server/discover (2026-07-28).
var modernities = []bool{false, true}

// catalogLimitCase runs one catalog-limit case: pages [tool + "next", other] under
// limits fail mcp_catalog_limit_exceeded after wantLists requests.
func catalogLimitCase(t *testing.T, id string, limits purramcp.Limits, wantLists int) {
	f := loadMCPFixture(t)
	other := json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "next", f.Tool), toolsPage(t, "", other)}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, limits)
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
			t.Errorf("%s modern=%v: got %q, want %q", id, modern, got, purramcp.CodeCatalogLimitExceeded)
		}
		lists, calls := h.counts()
		if lists != wantLists {
			t.Errorf("%s modern=%v: tools/list requests: got %v, want %v", id, modern, lists, wantLists)
		}
		if calls != 0 {
			t.Errorf("%s modern=%v: got %v, want 0", id, modern, calls)
		}
	}
}

// listChanged is the notification the monitor counts.
const listChanged = "notifications/tools/list_changed"

// approving discovers the default binding with opts completed by the
// harness's monitor.
func approving(t testing.TB, ctx context.Context, h sessionHarness, opts purramcp.DiscoveryOptions) (*purramcp.Catalog, error) {
	t.Helper()
	opts.Monitor = h.monitor
	return purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), opts)
}

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
	if err != nil {
		t.Fatal(err)
	}
	return catalog.Registrations()[0]
}

// ran is what one Run returned and when.
type ran struct {
	res     purramcp.ToolResult
	err     error
	elapsed time.Duration
}

// runAsync starts reg.Run in a goroutine.
func runAsync(ctx context.Context, reg purramcp.ToolDefinition) <-chan ran {
	done := make(chan ran, 1)
	start := time.Now()
	go func() {
		res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
		done <- ran{res, err, time.Since(start)}
	}()
	return done
}

// page is a one-page tools/list result from raw tool JSON texts, sent byte
// for byte (toolsPage re-encodes).
func page(nextCursor string, tools ...string) string {
	p := `{"tools":[` + strings.Join(tools, ",") + `]`
	if nextCursor != "" {
		p += `,"nextCursor":` + fmt.Sprintf("%q", nextCursor)
	}
	return p + `}`
}

// jsonEqual reports whether got and want are equal JSON values (object
// member order and spacing aside); t fails at once when either is not JSON.
func jsonEqual(t testing.TB, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("not JSON: %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// eventually polls cond every tick until it holds (true) or waitFor has
// passed (false).
func eventually(cond func() bool, waitFor, tick time.Duration) bool {
	deadline := time.Now().Add(waitFor)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
}

// recovered runs f and returns the value it panicked with, nil when it
// returned.
func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}
