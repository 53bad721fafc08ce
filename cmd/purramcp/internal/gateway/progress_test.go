package gateway_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// stepsUpstream serves remote.steps: {"n":N,"end":E} sends progress 1..N
// with total N, 10 ms apart from the call's start, each with a message (remote
// text), and answers E ms after the start. tokens records the progress
// token of each call it received.
type stepsUpstream struct {
	server *mcp.Server
	mu     sync.Mutex
	tokens []any
}

func newStepsUpstream() *stepsUpstream {
	u := &stepsUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)}
	u.server.AddTool(&mcp.Tool{Name: "remote.steps", Description: "Reports progress",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"end":{"type":"integer"}},` +
			`"required":["n","end"],"additionalProperties":false}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ N, End int }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		token := req.Params.GetProgressToken()
		u.mu.Lock()
		u.tokens = append(u.tokens, token)
		u.mu.Unlock()
		start := time.Now()
		for i := 1; i <= args.N && token != nil; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i-1) * 10 * time.Millisecond)))
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(i), Total: float64(args.N), Message: canary})
		}
		time.Sleep(time.Until(start.Add(time.Duration(args.End) * time.Millisecond)))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	return u
}

// wireEvent is one message a downstream client read, at its time since
// the call began.
type wireEvent struct {
	at    time.Duration
	what  string // "progress" or "result"
	token any
	value [2]float64
	extra []string // params members besides progressToken, progress, total
}

// recordingTransport records the progress notifications and responses its
// connection reads, in order.
type recordingTransport struct {
	mcp.Transport
	mu     sync.Mutex
	start  time.Time
	events []wireEvent
}

func (r *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return &recordingConn{Connection: c, r: r}, err
}

func (r *recordingTransport) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start, r.events = time.Now(), nil
}

func (r *recordingTransport) read() []wireEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

type recordingConn struct {
	mcp.Connection
	r *recordingTransport
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" {
			var params map[string]any
			_ = json.Unmarshal(m.Params, &params)
			e := wireEvent{at: time.Since(c.r.start), what: "progress", token: params["progressToken"]}
			e.value[0], _ = params["progress"].(float64)
			e.value[1], _ = params["total"].(float64)
			for k := range params {
				if k != "progressToken" && k != "progress" && k != "total" {
					e.extra = append(e.extra, k)
				}
			}
			c.r.events = append(c.r.events, e)
		}
	case *jsonrpc.Response:
		if m.Result != nil {
			var res map[string]any
			if json.Unmarshal(m.Result, &res) == nil && res["content"] != nil {
				c.r.events = append(c.r.events, wireEvent{at: time.Since(c.r.start), what: "result"})
			}
		}
	}
	return msg, err
}

// progressGateway serves remote.steps as steps through a gateway and
// connects a downstream client whose reads are recorded.
func progressGateway(t *testing.T, ctx context.Context) (*stepsUpstream, *mcp.ClientSession, *recordingTransport) {
	u := newStepsUpstream()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := u.server.Connect(ctx, st, nil)
	require.NoError(t, err)
	monitor := purramcp.NewCatalogMonitor()
	cs, err := monitor.Connect(ctx, monitor.NewClient(&mcp.Implementation{Name: "fleet", Version: "1"}, nil), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	catalog, err := purramcp.DiscoverTools(ctx, cs, "steps", map[string]purramcp.ToolBinding{"remote.steps": {
		LocalName: "steps", Policy: purramcp.ToolPolicy{Mode: "read", Title: "Steps"}, Scope: purramcp.Unscoped,
	}}, purramcp.DiscoveryOptions{Monitor: monitor})
	require.NoError(t, err)
	g, err := gateway.New(staticSource{defs: catalog.Registrations(), ups: []gateway.Upstream{{ID: "steps",
		State: gateway.StateReady, Digest: catalog.Snapshot().RevisionDigest, Snapshot: catalog.Snapshot()}}}, gateway.Options{})
	require.NoError(t, err)
	require.Empty(t, g.Refresh())

	gs, gc := mcp.NewInMemoryTransports()
	gss, err := g.Server().Connect(ctx, gs, nil)
	require.NoError(t, err)
	rec := &recordingTransport{Transport: gc}
	down, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, rec, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = down.Close(); _ = gss.Wait() })
	return u, down, rec
}

// callSteps calls steps with a progress token (nil: none) and returns
// what the downstream read during the call.
func callSteps(t *testing.T, ctx context.Context, down *mcp.ClientSession, rec *recordingTransport, token any, args string) []wireEvent {
	t.Helper()
	rec.reset()
	params := &mcp.CallToolParams{Name: "steps", Arguments: json.RawMessage(args)}
	if token != nil {
		params.SetProgressToken(token)
	}
	res, err := down.CallTool(ctx, params)
	require.NoError(t, err)
	require.Equal(t, []mcp.Content{&mcp.TextContent{Text: "done"}}, res.Content)
	return rec.read()
}

// progressEvents are n progress events of the given token, progress
// first..first+n-1 of total, 10 ms apart from start.
func progressEvents(token any, first, n int, total float64, start time.Duration) []wireEvent {
	var events []wireEvent
	for i := range n {
		events = append(events, wireEvent{at: start + time.Duration(i)*10*time.Millisecond, what: "progress",
			token: token, value: [2]float64{float64(first + i), total}})
	}
	return events
}

// The upstream's progress reaches the downstream client under the
// client's own token, with progress and total only, at most ten in any
// second (what arrives meanwhile is coalesced into the latest value), and
// never after the call's result: a value still waiting then is dropped.
func TestGateway_ProgressPassedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		u, down, rec := progressGateway(t, ctx)

		// Three notifications 10 ms apart, as the conformance server sends
		// them: all pass.
		want := append(progressEvents("client-1", 1, 3, 3, 0), wireEvent{at: 50 * time.Millisecond, what: "result"})
		assert.Equal(t, want, callSteps(t, ctx, down, rec, "client-1", `{"n":3,"end":50}`))

		// Fifteen in 140 ms, the answer at 150 ms: the first ten pass, the
		// latest of the rest is waiting for the window when the answer
		// comes, and is dropped.
		want = append(progressEvents("client-2", 1, 10, 15, 0), wireEvent{at: 150 * time.Millisecond, what: "result"})
		assert.Equal(t, want, callSteps(t, ctx, down, rec, "client-2", `{"n":15,"end":150}`))

		// Twelve in 110 ms, the answer at 1.2 s: ten pass, then the window
		// reopens at 1 s and the latest value (12; 11 was coalesced) goes.
		want = append(progressEvents(float64(7), 1, 10, 12, 0),
			wireEvent{at: time.Second, what: "progress", token: float64(7), value: [2]float64{12, 12}},
			wireEvent{at: 1200 * time.Millisecond, what: "result"})
		assert.Equal(t, want, callSteps(t, ctx, down, rec, 7, `{"n":12,"end":1200}`))

		// No token downstream: none upstream, nothing passed on.
		assert.Equal(t, []wireEvent{{at: 0, what: "result"}}, callSteps(t, ctx, down, rec, nil, `{"n":3,"end":0}`))

		// The upstream saw the gateway's own tokens, never the client's.
		u.mu.Lock()
		defer u.mu.Unlock()
		assert.Equal(t, []any{"purramcp-1", "purramcp-2", "purramcp-3", nil}, u.tokens)
	})
}
