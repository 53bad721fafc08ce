package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.GreaterOrEqual(l.t, e.Duration, time.Duration(0))
	assert.False(l.t, e.Start.IsZero(), "Start is set")
	assert.False(l.t, e.Start.Add(e.Duration).After(now), "Start+Duration is not in the future")
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
	require.NoError(t, err)
	digest := catalog.Snapshot().RevisionDigest
	assert.Equal(t, []purramcp.Event{{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", RevisionDigest: digest, Attempt: 1, Pages: 2}}, log.take())

	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", map[string]purramcp.ToolBinding{}, opts(h))
	require.Error(t, err)
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "bad id "+secret, searchBinding(), opts(h))
	require.Error(t, err)
	bad := opts(h)
	bad.Limits.MaxPages = -1
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), bad)
	require.Error(t, err)
	h = rawHarness(t, &rawServer{pages: []string{page("", otherTool)}})
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), opts(h))
	require.Error(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = purramcp.DiscoverTools(ctx, h.session, "fixture", searchBinding(), opts(h))
	require.Error(t, err)
	unapproved := opts(h)
	unapproved.Approve = purramcp.PinDigests()
	h = rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool))}})
	unapproved.Monitor = h.monitor
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), unapproved)
	require.Error(t, err)
	assert.Equal(t, []purramcp.Event{
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: purramcp.CodeBindingInvalid, Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "", Code: purramcp.CodeBindingInvalid, Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: purramcp.CodeBindingInvalid, Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: purramcp.CodeBindingMissing, Attempt: 1, Pages: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", Code: "canceled", Attempt: 1},
		{Kind: "discover", ProtocolVersion: "2025-11-25", Transport: "memory", ServerID: "fixture", RevisionDigest: catalog.Snapshot().RevisionDigest, Code: purramcp.CodeCatalogUnapproved,
			Attempt: 1, Pages: 1},
	}, log.take(), "an unapproved discovery carries its digest")
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
	require.NoError(t, err)
	digest := catalog.Snapshot().RevisionDigest
	log.take()
	reg, ok := catalog.Registration("search")
	require.True(t, ok)

	var decoded mcp.CallToolResult
	require.NoError(t, json.Unmarshal([]byte(okResult), &decoded))
	okBytes, err := purramcp.ResultSize(&decoded, math.MaxInt)
	require.NoError(t, err)
	assert.Equal(t, len(okResult), okBytes, "the wire result is compact")

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
	require.NoError(t, json.Unmarshal([]byte(`{"content":[{"type":"text","text":"`+secret+`"}],"isError":true}`), &errResult))
	errBytes, err := purramcp.ResultSize(&errResult, math.MaxInt)
	require.NoError(t, err)
	events := log.take()
	assert.Equal(t, []purramcp.Event{
		with("", 1, 9, okBytes),
		with(purramcp.CodeInvalidArguments, 0, 10, 0),
		with(purramcp.CodeScopeDenied, 0, 9, 0),
		with("host_failure", 0, 9, 0),
		with(purramcp.CodeToolError, 1, 9, errBytes),
		with(purramcp.CodeProtocolError, 1, 9, 0),
		with(purramcp.CodeInvalidArguments, 0, 0, 0), // empty arguments are {}: q is required
	}, events)
	assert.NotContains(t, fmt.Sprintf("%+v", events), secret, "no remote or host text")

	// Canceled before the request, and a stale catalog.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = reg.Run(ctx, argsA, purramcp.ToolContext{})
	assert.Equal(t, purramcp.ErrCanceled, err)
	h.monitor.OnNotification(listChanged)
	res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.CodeCatalogStale, res.ErrorCode)
	stale := with(purramcp.CodeCatalogStale, 0, 9, 0)
	stale.CallID, stale.RunID = "", ""
	canceled := stale
	canceled.Code = "canceled"
	assert.Equal(t, []purramcp.Event{canceled, stale}, log.take())

	// Registrations of a catalog without an Observer report nothing, and the
	// Observer of one discovery never sees another's calls.
	plain, err := discoverDefault(t, rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool))}}), purramcp.Limits{})
	require.NoError(t, err)
	_, err = plain.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, log.take())
}

// TestObserver_Panic: a panic in the Observer is not recovered; it reaches
// the caller of DiscoverTools or Run after the attempt or the call ended,
// and leaves nothing running.
func TestObserver_Panic(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := loadMCPFixture(t)
	srv := newSDKServer(t, nil, f.Tool)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	monitor := purramcp.NewCatalogMonitor()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, monitor.ClientOptions(nil)).Connect(t.Context(), monitor.Transport(ct), nil)
	require.NoError(t, err)
	require.NoError(t, monitor.Attach(cs))
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
	assert.Equal(t, boom{"discover"}, recovered(func() {
		_, _ = purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor, Observer: panicking})
	}))
	lists, _ := srv.counts()
	assert.Equal(t, 1, lists, "the attempt ran to its end")

	var reg purramcp.ToolDefinition
	calls := 0
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor,
		Observer: func(_ context.Context, e purramcp.Event) {
			if e.Kind == "call" {
				calls++
				panic(boom{e.Kind})
			}
		}})
	require.NoError(t, err)
	reg, _ = catalog.Registration("search")
	assert.Equal(t, boom{"call"}, recovered(func() { _, _ = reg.Run(t.Context(), argsA, purramcp.ToolContext{}) }))
	_, sent := srv.counts()
	assert.Equal(t, 1, sent, "the call ended before the Observer ran")
	assert.Equal(t, 1, calls)
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
	assert.Equal(t, []loggedRecord{
		{slog.LevelInfo, "purramcp.discover", []string{"kind=discover", "serverId=docs", "revisionDigest=abc", "attempt=1", "pages=2", "duration=1.5ms"}},
		{slog.LevelWarn, "purramcp.discover", []string{"kind=discover", "serverId=docs", "code=mcp_catalog_stale", "attempt=2", "pages=1"}},
		{slog.LevelInfo, "purramcp.call", []string{"kind=call", "serverId=docs", "revisionDigest=abc", "localName=search",
			"remoteName=docs.search", "callId=c1", "runId=r1", "requests=1", "argumentBytes=9", "resultBytes=46", "duration=1s"}},
		{slog.LevelWarn, "purramcp.call", []string{"kind=call", "localName=search", "remoteName=docs.search", "code=host_failure",
			"protocolVersion=2025-06-18", "transport=stdio"}},
		{slog.LevelInfo, "purramcp.call", []string{"kind=call"}},
	}, h.logged())

	// A nil logger writes to slog.Default() as it is at each event.
	before := slog.Default()
	t.Cleanup(func() { slog.SetDefault(before) })
	d := newRecordHandler()
	slog.SetDefault(slog.New(d))
	purramcp.SlogObserver(nil)(t.Context(), purramcp.Event{Kind: "call", Code: "canceled"})
	assert.Equal(t, []loggedRecord{{slog.LevelWarn, "purramcp.call", []string{"kind=call", "code=canceled"}}}, d.logged())
}

// TestSlogObserver_Wired: a real discovery and call through SlogObserver.
func TestSlogObserver_Wired(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	rh := newRecordHandler()
	catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Observer: purramcp.SlogObserver(slog.New(rh))})
	require.NoError(t, err)
	reg, _ := catalog.Registration("search")
	_, err = reg.Run(t.Context(), json.RawMessage(`{"q":"toolong"}`), purramcp.ToolContext{RunID: "r"})
	require.NoError(t, err)
	logged := rh.logged()
	require.Len(t, logged, 2)
	for i := range logged { // durations vary; the two new attributes follow
		n := len(logged[i].Attrs)
		require.True(t, strings.HasPrefix(logged[i].Attrs[n-3], "duration="))
		logged[i].Attrs = append(logged[i].Attrs[:n-3], logged[i].Attrs[n-2:]...)
	}
	assert.Equal(t, []loggedRecord{
		{slog.LevelInfo, "purramcp.discover", []string{"kind=discover", "serverId=fixture", "revisionDigest=" + f.RevisionDigest, "attempt=1", "pages=1",
			"protocolVersion=2025-11-25", "transport=memory"}},
		{slog.LevelWarn, "purramcp.call", []string{"kind=call", "serverId=fixture", "revisionDigest=" + f.RevisionDigest, "localName=search",
			"remoteName=remote.search", "runId=r", "code=mcp_invalid_arguments", "argumentBytes=15", "protocolVersion=2025-11-25", "transport=memory"}},
	}, logged)
}
