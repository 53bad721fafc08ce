package purramcp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A ProgressFunc receives the progress a server reports for one call
// (notifications/progress): progress so far and the total, 0 when the
// server gave none. The notification's message is remote text and never
// reaches it.
//
// On a session connected through [CatalogMonitor.Transport] it is called
// on the session's reading goroutine as each notification is read, so
// every notification the server sent before the call's answer reaches it
// before Run returns; it must therefore return quickly and must not call
// into the session (hand the values to another goroutine to do anything
// slow). Without that transport it is called from go-sdk's notification
// handler, which may run after the answer has been read, so the last
// notifications before the answer can be missed. For one call it is never called
// concurrently with itself, never with a progress value that does not
// exceed the previous one (the protocol requires progress to increase),
// and never after the call's Run has returned.
type ProgressFunc func(progress, total float64)

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a copy of ctx under which a registration's Run asks
// the server for progress: the tools/call it sends carries a progress token
// (in _meta.progressToken) that is unique within the session, and fn gets
// every notifications/progress the server sends for that token until Run
// returns (see [ProgressFunc]). A Run under a ctx without it sends no
// token and the request is byte for byte as before. A nil fn returns ctx
// unchanged.
//
// Progress reaches fn only on sessions whose client was built by
// [CatalogMonitor.NewClient], which every session a catalog accepts is.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, fn)
}

// progressFrom returns the ProgressFunc WithProgress put in ctx, or nil.
func progressFrom(ctx context.Context) ProgressFunc {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return fn
}

// progressTokenPrefix starts every progress token a monitor hands out.
const progressTokenPrefix = "purramcp-"

// A progressTable routes one session's progress notifications to the
// calls that asked for them, by token. Its zero value is empty and ready.
type progressTable struct {
	// mu guards next and calls.
	mu    sync.Mutex
	next  uint64
	calls map[string]*progressCall
}

// A progressCall is one call's subscription. Its mutex is held while fn
// runs, so that end, which takes it too, returns only once no fn call is
// under way and none can start.
type progressCall struct {
	mu    sync.Mutex
	fn    ProgressFunc
	last  float64
	seen  bool
	ended bool
}

// register subscribes fn under a new token; the returned function ends the
// subscription (after it returns fn is never called again).
func (t *progressTable) register(fn ProgressFunc) (string, func()) {
	c := &progressCall{fn: fn}
	t.mu.Lock()
	t.next++
	token := progressTokenPrefix + strconv.FormatUint(t.next, 10)
	if t.calls == nil {
		t.calls = map[string]*progressCall{}
	}
	t.calls[token] = c
	t.mu.Unlock()
	return token, func() {
		t.mu.Lock()
		delete(t.calls, token)
		t.mu.Unlock()
		c.mu.Lock()
		c.ended = true
		c.mu.Unlock()
	}
}

// deliverParams passes the progress and total of one notification's params,
// as the server sent them, to the call its token names (see deliver).
// Nothing is decoded while no call is subscribed; params that are not an
// object with a string progressToken and numeric progress (and total, when
// present) are dropped.
func (t *progressTable) deliverParams(params json.RawMessage) {
	t.mu.Lock()
	idle := len(t.calls) == 0
	t.mu.Unlock()
	if idle {
		return
	}
	var fields map[string]json.RawMessage
	var token string
	if json.Unmarshal(params, &fields) != nil || json.Unmarshal(fields["progressToken"], &token) != nil ||
		!isJSONString(fields["progressToken"]) {
		return
	}
	progress, ok := progressNumber(fields["progress"])
	if !ok {
		return
	}
	var total float64
	if raw, present := fields["total"]; present {
		if total, ok = progressNumber(raw); !ok {
			return
		}
	}
	t.deliver(token, progress, total)
}

// isJSONString reports whether raw is a JSON string (not null).
func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// progressNumber decodes raw as a finite JSON number; null, a string or a
// number out of float64's range is not one.
func progressNumber(raw json.RawMessage) (float64, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	var v float64
	return v, json.Unmarshal(raw, &v) == nil
}

// deliver passes progress and total to the call token names. A token this
// table did not hand out, one whose call has ended, and a progress that
// does not exceed the call's previous one are dropped.
func (t *progressTable) deliver(token string, progress, total float64) {
	t.mu.Lock()
	c := t.calls[token]
	t.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.seen && !(progress > c.last) {
		return
	}
	c.seen, c.last = true, progress
	c.fn(progress, total)
}

// withProgressToken returns meta with the progress token added, leaving
// meta itself unmodified.
func withProgressToken(meta mcp.Meta, token string) mcp.Meta {
	out := make(mcp.Meta, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out["progressToken"] = token
	return out
}
