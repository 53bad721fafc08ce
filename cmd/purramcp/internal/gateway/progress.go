package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The progress rate: at most progressBurst notifications are passed on for
// one call in any progressWindow; what arrives meanwhile is coalesced into
// the latest value, sent once the window allows.
const (
	progressBurst  = 10
	progressWindow = time.Second
)

// forwardProgress makes a call's upstream progress reach its downstream
// client: it returns ctx under [purramcp.WithProgress] and a stop function.
// Each progress and total the registration reports is sent to session as
// notifications/progress under the client's own token (the upstream's
// message is remote text and never sent), at most progressBurst in any
// progressWindow. stop ends the forwarding and returns once nothing more
// can be sent, so the call's result is never preceded by a late
// notification; a value still waiting for the window is dropped.
//
// A token that is neither a string nor a number (the protocol allows only
// those) forwards nothing: ctx is returned unchanged.
func forwardProgress(ctx context.Context, session *mcp.ServerSession, token any) (context.Context, func()) {
	switch token.(type) {
	case string, float64, int, int64:
	default:
		return ctx, func() {}
	}
	sendCtx, cancel := context.WithCancel(ctx)
	f := &progressForwarder{session: session, token: token, wake: make(chan struct{}, 1), exited: make(chan struct{})}
	go f.loop(sendCtx)
	return purramcp.WithProgress(ctx, f.report), func() {
		cancel()
		<-f.exited
	}
}

// A progressForwarder is one call's forwarding: report (on the upstream's
// reading goroutine) keeps the latest value and wakes loop, which sends.
type progressForwarder struct {
	session *mcp.ServerSession
	token   any
	wake    chan struct{} // capacity 1: a pending value
	exited  chan struct{} // closed when loop returns

	mu              sync.Mutex // guards the latest value and its wake signal
	progress, total float64
}

// report is the call's purramcp.ProgressFunc: it never blocks.
func (f *progressForwarder) report(progress, total float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.progress, f.total = progress, total
	select {
	case f.wake <- struct{}{}:
	default: // already pending: the latest value is what will be sent
	}
}

// loop sends each pending value once the rate allows, until ctx ends.
func (f *progressForwarder) loop(ctx context.Context) {
	defer close(f.exited)
	var sent [progressBurst]time.Time // the last sends, oldest at next
	next := 0
	for {
		select {
		case <-f.wake:
		case <-ctx.Done():
			return
		}
		if oldest := sent[next]; !oldest.IsZero() {
			if wait := time.Until(oldest.Add(progressWindow)); wait > 0 {
				timer := time.NewTimer(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					timer.Stop()
					return
				}
			}
		}
		f.mu.Lock()
		select {
		case <-f.wake: // reported while waiting: the value taken here
		default:
		}
		params := &mcp.ProgressNotificationParams{ProgressToken: f.token, Progress: f.progress, Total: f.total}
		f.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		_ = f.session.NotifyProgress(ctx, params) // a failed send ends nothing: the call goes on
		sent[next] = time.Now()
		next = (next + 1) % progressBurst
	}
}
