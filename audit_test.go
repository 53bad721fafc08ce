package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// eventLog collects events with their Duration and Start checked and
// zeroed: Start is a wall-clock time no later than the event, and Start
// plus Duration is no later either.
type eventLog struct {
	t      *testing.T
	mu     sync.Mutex
	events []purramcp.Event
}

func (l *eventLog) observe(_ context.Context, e purramcp.Event) {
	now := time.Now()
	if limit := time.Duration(0); e.Duration < limit {
		l.t.Errorf("e.Duration = %v, want >= %v", e.Duration, limit)
	}
	if e.Start.IsZero() {
		l.t.Errorf("Start is set")
	}
	if e.Start.Add(e.Duration).After(now) {
		l.t.Errorf("Start+Duration is not in the future")
	}
	e.Duration, e.Start = 0, time.Time{}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// take returns the events collected so far and forgets them.
func (l *eventLog) take() []purramcp.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// TestObserver_Discovery: one event per attempt, also for a call refused
// before any request, with the pages sent and the digest once computed.
func TestObserver_Discovery(t *testing.T) {
	f := loadMCPFixture(t)
	log := &eventLog{t: t}
	opts := func(h sessionHarness) purramcp.DiscoveryOptions {
		return purramcp.DiscoveryOptions{Monitor: h.monitor, Observer: log.observe}
	}
	h := rawHarness(t, &rawServer{pages: []string{page("p2", otherTool), page("", string(f.Tool))}})
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), opts(h))
	if err != nil {
		t.Fatal(err)
	}
	digest := catalog.Snapshot().RevisionDigest
	if got, want := log.take(), []purramcp.Event{{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", RevisionDigest: digest, Attempt: 1, Pages: 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("log.take() = %v, want %v", got, want)
	}

	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", map[string]purramcp.ToolBinding{}, opts(h))
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "bad id "+secret, searchBinding(), opts(h))
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	bad := opts(h)
	bad.Limits.MaxPages = -1
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), bad)
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	h = rawHarness(t, &rawServer{pages: []string{page("", otherTool)}})
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), opts(h))
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), opts(h))
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	unapproved := opts(h)
	unapproved.Approve = purramcp.PinDigests()
	h = rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool))}})
	unapproved.Monitor = h.monitor
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), unapproved)
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	if got, want := log.take(), []purramcp.Event{
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: purramcp.CodeBindingInvalid, Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "", Code: purramcp.CodeBindingInvalid, Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: purramcp.CodeBindingInvalid, Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: purramcp.CodeBindingMissing, Attempt: 1, Pages: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: "canceled", Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", RevisionDigest: catalog.Snapshot().RevisionDigest, Code: purramcp.CodeCatalogUnapproved,
			Attempt: 1, Pages: 1},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("an unapproved discovery carries its digest: got %v, want %v", got, want)
	}
}

// TestObserver_Calls: one event per Run with the call's identity, the
// request sent, the sizes received and the outcome code; no payload.
func TestObserver_Calls(t *testing.T) {
	f := loadMCPFixture(t)
	const okResult = `{"content":[{"type":"text","text":"found"}],"structuredContent":{"count":1}}`
	raw := &rawServer{pages: []string{page("", string(f.Tool))}, call: func(args json.RawMessage) (string, *jsonrpc.Error) {
		switch {
		case strings.Contains(string(args), `"e"`):
			return `{"content":[{"type":"text","text":"` + secret + `"}],"isError":true}`, nil
		case strings.Contains(string(args), `"p"`):
			return "", &jsonrpc.Error{Code: -32000, Message: secret}
		}
		return okResult, nil
	}}
	h := rawHarness(t, raw)
	log := &eventLog{t: t}
	hostErr := errors.New("host down " + secret)
	scope := func(_ context.Context, args map[string]any, _ purramcp.ToolContext) error {
		switch args["q"] {
		case "d":
			return purramcp.Deny("no " + secret)
		case "h":
			return hostErr
		}
		return nil
	}
	bindings := searchBinding()
	b := bindings["remote.search"]
	b.Scope = scope
	bindings["remote.search"] = b
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
		purramcp.DiscoveryOptions{Monitor: h.monitor, Observer: log.observe})
	if err != nil {
		t.Fatal(err)
	}
	digest := catalog.Snapshot().RevisionDigest
	log.take()
	reg, ok := catalog.Registration("search")
	if !ok {
		t.Fatalf("ok is false")
	}

	var decoded mcp.CallToolResult
	if err := json.Unmarshal([]byte(okResult), &decoded); err != nil {
		t.Fatalf("json.Unmarshal([]byte(okResult), &decoded): %v", err)
	}
	okBytes, err := purramcp.ResultSize(&decoded, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(okResult); okBytes != want {
		t.Errorf("the wire result is compact: got %v, want %v", okBytes, want)
	}

	tc := purramcp.ToolContext{CallID: "call-1", RunID: "run-1", ToolName: "search", AgentID: "agent"}
	call := func(args string) {
		t.Helper()
		res, err := reg.Run(t.Context(), json.RawMessage(args), tc)
		if err == nil {
			assertNoSecret(t, args, res, nil)
		}
	}
	for _, args := range []string{`{"q":"a"}`, `{"q":"ab"}`, `{"q":"d"}`, `{"q":"h"}`, `{"q":"e"}`, `{"q":"p"}`, ``} {
		call(args)
	}
	base := purramcp.Event{Kind: "call", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", RevisionDigest: digest, LocalName: "search", RemoteName: "remote.search",
		CallID: "call-1", RunID: "run-1"}
	with := func(code string, requests, argBytes, resultBytes int) purramcp.Event {
		e := base
		e.Code, e.Requests, e.ArgumentBytes, e.ResultBytes = code, requests, argBytes, resultBytes
		return e
	}
	var errResult mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"text","text":"`+secret+`"}],"isError":true}`), &errResult); err != nil {
		t.Fatal(err)
	}
	errBytes, err := purramcp.ResultSize(&errResult, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	events := log.take()
	if want := []purramcp.Event{
		with("", 1, 9, okBytes),
		with(purramcp.CodeInvalidArguments, 0, 10, 0),
		with(purramcp.CodeScopeDenied, 0, 9, 0),
		with("host_failure", 0, 9, 0),
		with(purramcp.CodeToolError, 1, 9, errBytes),
		with(purramcp.CodeProtocolError, 1, 9, 0),
		with(purramcp.CodeInvalidArguments, 0, 0, 0), // empty arguments are {}: q is required
	}; !reflect.DeepEqual(events, want) {
		t.Errorf("events = %v, want %v", events, want)
	}
	if strings.Contains(fmt.Sprintf("%+v", events), secret) {
		t.Errorf("no remote or host text: %q contains %q", fmt.Sprintf("%+v", events), secret)
	}

	// Canceled before the request, and a stale catalog.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = reg.Run(ctx, argsA, purramcp.ToolContext{})
	if !reflect.DeepEqual(err, purramcp.ErrCanceled) {
		t.Errorf("err = %v, want %v", err, purramcp.ErrCanceled)
	}
	h.monitor.OnNotification(listChanged)
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != purramcp.CodeCatalogStale {
		t.Errorf("res.ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeCatalogStale)
	}
	stale := with(purramcp.CodeCatalogStale, 0, 9, 0)
	stale.CallID, stale.RunID = "", ""
	canceled := stale
	canceled.Code = "canceled"
	if got, want := log.take(), []purramcp.Event{canceled, stale}; !reflect.DeepEqual(got, want) {
		t.Errorf("log.take() = %v, want %v", got, want)
	}

	// Registrations of a catalog without an Observer report nothing, and the
	// Observer of one discovery never sees another's calls.
	plain, err := discoverDefault(t, rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool))}}), purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if got := log.take(); len(got) != 0 {
		t.Errorf("log.take() = %v, want empty", got)
	}
}

// TestObserver_Panic: a panic in the Observer is not recovered; it reaches
// the caller of DiscoverTools or Run after the attempt or the call ended,
// and leaves nothing running.
func TestObserver_Panic(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := loadMCPFixture(t)
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
	defer func() {
		_ = cs.Close()
		_ = ss.Wait()
	}()

	type boom struct{ kind string }
	panicking := func(_ context.Context, e purramcp.Event) { panic(boom{e.Kind}) }
	recovered := func(f func()) (v any) {
		defer func() { v = recover() }()
		f()
		return nil
	}
	if got, want := recovered(func() {
		_, _ = purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor, Observer: panicking})
	}), (boom{"discover"}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	lists, _ := srv.counts()
	if lists != 1 {
		t.Errorf("the attempt ran to its end: got %v, want %v", lists, 1)
	}

	var reg purramcp.ToolDefinition
	calls := 0
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor,
		Observer: func(_ context.Context, e purramcp.Event) {
			if e.Kind == "call" {
				calls++
				panic(boom{e.Kind})
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ = catalog.Registration("search")
	if got, want := recovered(func() { _, _ = reg.Run(t.Context(), argsA, purramcp.ToolContext{}) }), (boom{"call"}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	_, sent := srv.counts()
	if sent != 1 {
		t.Errorf("the call ended before the Observer ran: got %v, want %v", sent, 1)
	}
	if calls != 1 {
		t.Errorf("calls = %v, want %v", calls, 1)
	}
}

// recordHandler is a slog.Handler that keeps every record.
type recordHandler struct {
	mu      *sync.Mutex
	records *[]slog.Record
}

func newRecordHandler() recordHandler {
	return recordHandler{mu: &sync.Mutex{}, records: &[]slog.Record{}}
}

func (recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	*h.records = append(*h.records, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// loggedRecord is a record's level, message and attributes as text.
type loggedRecord struct {
	Level slog.Level
	Msg   string
	Attrs []string
}

func (h recordHandler) logged() []loggedRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []loggedRecord
	for _, r := range *h.records {
		lr := loggedRecord{Level: r.Level, Msg: r.Message}
		r.Attrs(func(a slog.Attr) bool {
			lr.Attrs = append(lr.Attrs, a.Key+"="+a.Value.String())
			return true
		})
		out = append(out, lr)
	}
	return out
}

func TestSlogObserver(t *testing.T) {
	h := newRecordHandler()
	observe := purramcp.SlogObserver(slog.New(h))
	observe(t.Context(), purramcp.Event{Kind: "discover", ServerID: "docs", RevisionDigest: "abc", Attempt: 1, Pages: 2,
		Duration: 1500 * time.Microsecond})
	observe(t.Context(), purramcp.Event{Kind: "discover", ServerID: "docs", Code: purramcp.CodeCatalogStale, Attempt: 2, Pages: 1})
	observe(t.Context(), purramcp.Event{Kind: "call", ServerID: "docs", RevisionDigest: "abc", LocalName: "search",
		RemoteName: "docs.search", CallID: "c1", RunID: "r1", Requests: 1, ArgumentBytes: 9, ResultBytes: 46, Duration: time.Second})
	observe(t.Context(), purramcp.Event{Kind: "call", LocalName: "search", RemoteName: "docs.search", Code: "host_failure",
		ProtocolVersion: "2025-06-18", Transport: "stdio", Start: time.Unix(1, 0)})
	observe(t.Context(), purramcp.Event{Kind: "call"})
	if got, want := h.logged(), []loggedRecord{
		{slog.LevelInfo, "purramcp.discover", []string{"kind=discover", "serverId=docs", "revisionDigest=abc", "attempt=1", "pages=2", "duration=1.5ms"}},
		{slog.LevelWarn, "purramcp.discover", []string{"kind=discover", "serverId=docs", "code=mcp_catalog_stale", "attempt=2", "pages=1"}},
		{slog.LevelInfo, "purramcp.call", []string{"kind=call", "serverId=docs", "revisionDigest=abc", "localName=search",
			"remoteName=docs.search", "callId=c1", "runId=r1", "requests=1", "argumentBytes=9", "resultBytes=46", "duration=1s"}},
		{slog.LevelWarn, "purramcp.call", []string{"kind=call", "localName=search", "remoteName=docs.search", "code=host_failure",
			"protocolVersion=2025-06-18", "transport=stdio"}},
		{slog.LevelInfo, "purramcp.call", []string{"kind=call"}},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("h.logged() = %v, want %v", got, want)
	}

	// A nil logger writes to slog.Default() as it is at each event.
	before := slog.Default()
	t.Cleanup(func() { slog.SetDefault(before) })
	d := newRecordHandler()
	slog.SetDefault(slog.New(d))
	purramcp.SlogObserver(nil)(t.Context(), purramcp.Event{Kind: "call", Code: "canceled"})
	if got, want := d.logged(), []loggedRecord{{slog.LevelWarn, "purramcp.call", []string{"kind=call", "code=canceled"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("d.logged() = %v, want %v", got, want)
	}
}

// TestSlogObserver_Wired: a real discovery and call through SlogObserver.
func TestSlogObserver_Wired(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	rh := newRecordHandler()
	catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Observer: purramcp.SlogObserver(slog.New(rh))})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := catalog.Registration("search")
	_, err = reg.Run(t.Context(), json.RawMessage(`{"q":"toolong"}`), purramcp.ToolContext{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	logged := rh.logged()
	if got := len(logged); got != 2 {
		t.Fatalf("len(logged) = %d, want %d", got, 2)
	}
	for i := range logged { // durations vary; the two new attributes follow
		n := len(logged[i].Attrs)
		if !strings.HasPrefix(logged[i].Attrs[n-3], "duration=") {
			t.Fatalf("record %d: attribute %q, want duration=…", i, logged[i].Attrs[n-3])
		}
		logged[i].Attrs = append(logged[i].Attrs[:n-3], logged[i].Attrs[n-2:]...)
	}
	if want := []loggedRecord{
		{slog.LevelInfo, "purramcp.discover", []string{"kind=discover", "serverId=fixture", "revisionDigest=" + f.RevisionDigest, "attempt=1", "pages=1",
			"protocolVersion=2025-11-25", "transport=memory"}},
		{slog.LevelWarn, "purramcp.call", []string{"kind=call", "serverId=fixture", "revisionDigest=" + f.RevisionDigest, "localName=search",
			"remoteName=remote.search", "runId=r", "code=mcp_invalid_arguments", "argumentBytes=15", "protocolVersion=2025-11-25", "transport=memory"}},
	}; !reflect.DeepEqual(logged, want) {
		t.Errorf("logged = %v, want %v", logged, want)
	}
}
