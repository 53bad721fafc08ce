package purramcp

import (
	"context"
	"slices"
	"sync"
	"time"
)

// requestWorkers runs one monitor's requests (bounded) on goroutines that
// are kept for its next requests, so that go-sdk's deep call chain runs on a
// stack that has already grown instead of growing a fresh one every time.
//
// A worker runs one request at a time. When a request returns, its worker
// waits for the next one for at most workerIdle, then ends; at most
// maxIdleWorkers wait at once, and none once the monitor closed: close ends
// every waiting worker and a worker whose request returns after it ends
// too. A request abandoned at its deadline keeps its worker until the
// request returns (when the write fails, at the latest when the session is
// severed or closes), exactly as its own goroutine was kept before.
type requestWorkers struct {
	mu     sync.Mutex
	idle   []*requestWorker
	closed bool
	// abandoned holds the requests whose callers gave up while they still
	// ran (see await).
	abandoned []abandonedRequest
}

// abandonedRequest is a request its caller gave up at since, still running
// until done is closed.
type abandonedRequest struct {
	done  <-chan struct{}
	since time.Time
}

// abandonedGrace is how long after its caller gave up an abandoned request
// may still be running before the session's new requests are refused: a
// request abandoned while it awaited its answer ends at once (its ctx
// ended); one still running past this is blocked in its write.
const abandonedGrace = 20 * time.Millisecond

// abandon records that the caller of the request that closes done gave up
// while it still ran.
func (p *requestWorkers) abandon(done <-chan struct{}) {
	p.mu.Lock()
	p.abandoned = append(p.abandoned, abandonedRequest{done: done, since: time.Now()})
	p.mu.Unlock()
}

// await lets a new request start only when no abandoned request of the
// session still runs: it waits for one abandoned less than abandonedGrace
// ago (or until ctx ends) and refuses at once (false) while an older one
// runs. A write to a peer that stopped reading holds go-sdk's write lock,
// so a new request would only queue behind it on one more goroutine
// (a session keeps at most one abandoned goroutine).
func (p *requestWorkers) await(ctx context.Context) bool {
	for {
		p.mu.Lock()
		p.abandoned = slices.DeleteFunc(p.abandoned, func(a abandonedRequest) bool {
			select {
			case <-a.done:
				return true
			default:
				return false
			}
		})
		var running abandonedRequest
		if len(p.abandoned) > 0 {
			running = p.abandoned[0]
		}
		p.mu.Unlock()
		if running.done == nil {
			return true
		}
		wait := abandonedGrace - time.Since(running.since)
		if wait <= 0 {
			return false
		}
		timer := time.NewTimer(wait)
		select {
		case <-running.done:
			timer.Stop()
		case <-timer.C:
			return false
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
}

// requestWorker is one waiting worker's mailbox.
type requestWorker struct {
	jobs  chan job // buffered: a handed job never blocks its sender; nil ends the worker
	timer *time.Timer
}

// A job is one request a worker runs.
type job interface{ run() }

const (
	maxIdleWorkers = 4
	workerIdle     = 50 * time.Millisecond
)

// start runs job on a waiting worker, or on a new goroutine that becomes a
// worker once job returns.
func (p *requestWorkers) start(j job) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.jobs <- j
		return
	}
	p.mu.Unlock()
	go p.work(j)
}

// work runs job, then the jobs handed to it, until it waited workerIdle in
// vain, the pool has enough waiting workers, or the monitor closed.
func (p *requestWorkers) work(j job) {
	w := &requestWorker{jobs: make(chan job, 1)}
	for j != nil {
		j.run()
		j = nil // the finished request is not kept while waiting
		if !p.park(w) {
			return
		}
		if w.timer == nil {
			w.timer = time.NewTimer(workerIdle)
		} else {
			w.timer.Reset(workerIdle)
		}
		select {
		case j = <-w.jobs:
			w.timer.Stop()
		case <-w.timer.C:
			if p.unpark(w) {
				return
			}
			j = <-w.jobs // start or close took w meanwhile: its job is on the way
		}
	}
}

// park adds w to the waiting workers; false when it must end instead.
func (p *requestWorkers) park(w *requestWorker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdleWorkers {
		return false
	}
	p.idle = append(p.idle, w)
	return true
}

// unpark removes w from the waiting workers; false when start or close
// already took it.
func (p *requestWorkers) unpark(w *requestWorker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.idle {
		if x == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return true
		}
	}
	return false
}

// close ends every waiting worker; later requests each get a goroutine of
// their own, which ends with the request.
func (p *requestWorkers) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		w.jobs <- nil
	}
}
