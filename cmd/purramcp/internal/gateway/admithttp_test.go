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

// A tools/call of a tool hidden from its caller is never admitted: with
// the gateway full it gets what a call of a missing tool gets, not the 429
// a served tool gets, so the load tells nothing of the hidden tool.
func TestHTTP_HiddenToolNotAdmitted(t *testing.T) {
	_, u, _, _, base, end := busyGateway(t, gateway.Options{MaxCalls: 1, MaxWait: time.Millisecond,
		ToolScopes: map[string][]string{"search": {"docs:read"}}})
	post := func(name string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`","arguments":{"q":"x"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, strings.ReplaceAll(string(body), name, "NAME")
	}
	hiddenStatus, hiddenBody := post("search") // the static token grants no scope
	missingStatus, missingBody := post("nosuch")
	assert.Equal(t, missingStatus, hiddenStatus)
	assert.Equal(t, missingBody, hiddenBody)
	assert.NotEqual(t, http.StatusTooManyRequests, hiddenStatus)
	status, _ := post("fail")
	assert.Equal(t, http.StatusTooManyRequests, status, "a served tool the caller sees is refused by the load")
	assert.Equal(t, int32(1), u.calls.Load())
	end()
}

// With OAuth, a user at its cap waits while another user's calls are
// served at once: ann's second call waits for her first, bob's goes
// through meanwhile.
func TestHTTP_OAuthUserAtCapOthersServed(t *testing.T) {
	iss := newTestIssuer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	f := newFakeFleet(t)
	u := newUpstream("Search documents")
	f.connect(ctx, "docs", u, "", "")
	g := newGateway(t, f, gateway.Options{MaxUserCalls: 1})
	g.Refresh()
	v, err := gateway.NewJWTVerifier(ctx, gateway.JWTOptions{Issuer: iss.srv.URL, Resource: testResource})
	require.NoError(t, err)
	srv := serveHTTP(t, g, gateway.HTTPOptions{OAuth: &gateway.OAuthOptions{
		Resource: testResource, Issuer: iss.srv.URL, Verify: v.Verify}})
	now := time.Now()
	ann := iss.mint("k1", iss.valid(now, "ann", ""))
	bob := iss.mint("k1", iss.valid(now, "bob", ""))
	ann1, ann2 := connectHTTP(t, ctx, srv.URL+"/mcp", ann), connectHTTP(t, ctx, srv.URL+"/mcp", ann)
	bobCS := connectHTTP(t, ctx, srv.URL+"/mcp", bob)

	done := make(chan string, 1)
	go func() { done <- call(t, ctx, ann1, "block", `{}`) }()
	<-u.entered
	waited := make(chan string, 1)
	go func() { waited <- call(t, ctx, ann2, "search", `{"q":"a"}`) }()
	require.Eventually(t, func() bool { _, queued, _ := g.AdmissionHeld(); return queued == 1 },
		10*time.Second, time.Millisecond, "ann's second call waits: she is at her cap")
	for range 3 {
		assert.JSONEq(t, `{"content":[{"type":"text","text":"found b"}],"structuredContent":{"count":1}}`,
			call(t, ctx, bobCS, "search", `{"q":"b"}`), "bob is served meanwhile")
	}
	assert.Equal(t, int32(4), u.calls.Load(), "ann's waiting call sent nothing")
	close(u.release)
	<-done
	assert.JSONEq(t, `{"content":[{"type":"text","text":"found a"}],"structuredContent":{"count":1}}`, <-waited)
}
