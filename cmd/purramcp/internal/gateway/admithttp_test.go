package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// busyGateway serves a docs gateway over HTTP with opts and one block call
// in flight on its own session; the returned function ends that call.
func busyGateway(t *testing.T, opts gateway.Options) (context.Context, *upstream, *gateway.Gateway, *recorder, string, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	t.Cleanup(cancel)
	f := newFakeFleet(t)
	u := newUpstream("Search documents")
	f.connect(ctx, "docs", u, "", "")
	rec := &recorder{}
	opts.Observer = rec.observe
	g := newGateway(t, f, opts)
	g.Refresh()
	srv := serveHTTP(t, g, gateway.HTTPOptions{Token: testToken})
	cs := connectHTTP(t, ctx, srv.URL+"/mcp", testToken)
	done := make(chan string, 1)
	go func() { done <- call(t, ctx, cs, "block", `{}`) }()
	<-u.entered
	var once sync.Once
	end := func() { once.Do(func() { close(u.release); <-done }) }
	t.Cleanup(end)
	return ctx, u, g, rec, srv.URL, end
}

// postCall POSTs one tools/call of search to /mcp and returns the status
// and the Retry-After header.
func postCall(t *testing.T, base string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Purramcp-Admitted", "forged") // never trusted
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// Over HTTP a call refused at a full queue is 429 with Retry-After, audited
// gateway_busy, and nothing is sent upstream.
func TestHTTP_FullQueueIs429(t *testing.T) {
	ctx, u, g, rec, base, end := busyGateway(t, gateway.Options{MaxCalls: 1, MaxQueue: 1, MaxWait: time.Minute})
	cs := connectHTTP(t, ctx, base+"/mcp", testToken)
	waited := make(chan string, 1)
	go func() { waited <- call(t, ctx, cs, "search", `{"q":"w"}`) }()
	require.Eventually(t, func() bool { _, queued, _ := g.AdmissionHeld(); return queued == 1 },
		10*time.Second, time.Millisecond, "the second call waits")

	status, retry := postCall(t, base)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "1", retry)
	assert.Equal(t, []string{gateway.CodeBusy}, rec.codes())
	assert.Equal(t, int32(1), u.calls.Load(), "nothing refused was sent upstream")

	end()
	assert.JSONEq(t, `{"content":[{"type":"text","text":"found w"}],"structuredContent":{"count":1}}`, <-waited)
	assert.Equal(t, int32(2), u.calls.Load())
}

// Over HTTP a call whose wait expires is 429 with Retry-After, audited
// gateway_wait_expired, and nothing is sent upstream.
func TestHTTP_ExpiredWaitIs429(t *testing.T) {
	_, u, g, rec, base, end := busyGateway(t, gateway.Options{MaxCalls: 1, MaxWait: time.Millisecond})
	status, retry := postCall(t, base)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "1", retry)
	assert.Equal(t, []string{gateway.CodeWaitExpired}, rec.codes())
	assert.Equal(t, int32(1), u.calls.Load(), "nothing refused was sent upstream")
	end()
	inFlight, queued, keys := g.AdmissionHeld()
	assert.Zero(t, inFlight+queued+keys)
}

// 1,000 HTTP sessions, 16 at a time, each opened, called and closed,
// leave no call, key or ticket in the admission and (TestMain) no
// goroutine.
func TestHTTP_ThousandSessionsLeaveNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	u := newUpstream("Search documents")
	f.connect(ctx, "docs", u, "", "")
	g := newGateway(t, f, gateway.Options{})
	g.Refresh()
	srv := serveHTTP(t, g, gateway.HTTPOptions{Token: testToken})
	const sessions, parallel = 1000, 16
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for range work {
				cs := connectHTTP(t, ctx, srv.URL+"/mcp", testToken)
				assert.JSONEq(t, `{"content":[{"type":"text","text":"found s"}],"structuredContent":{"count":1}}`,
					call(t, ctx, cs, "search", `{"q":"s"}`))
				assert.NoError(t, cs.Close())
			}
		})
	}
	for i := range sessions {
		work <- i
	}
	close(work)
	wg.Wait()
	assert.Equal(t, int32(sessions), u.calls.Load())
	inFlight, queued, keys := g.AdmissionHeld()
	assert.Zero(t, inFlight+queued+keys)
	srv.CloseClientConnections()
}
