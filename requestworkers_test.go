package purramcp

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// jobFunc is a func as a worker's job.
type jobFunc func()

func (f jobFunc) run() { f() }

// goroutineID returns the calling goroutine's id, read from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// TestRequestWorkers_Reuse: sequential requests run on one worker; a
// request that is still running (an abandoned write) never gets a second
// one, which runs on another goroutine; at most maxIdleWorkers wait; close
// ends the waiting ones and a late request's worker ends with its request.
func TestRequestWorkers_Reuse(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var p requestWorkers
	run := func() string {
		ids := make(chan string, 1)
		p.start(jobFunc(func() { ids <- goroutineID() }))
		id := <-ids
		// Wait until the worker is back (it parks right after the job).
		for range 1000 {
			p.mu.Lock()
			n := len(p.idle)
			p.mu.Unlock()
			if n > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		return id
	}
	first := run()
	if second := run(); second != first {
		t.Errorf("sequential requests on goroutines %s and %s: no reuse", first, second)
	}
	// A blocked request keeps its worker: the next one runs elsewhere, at
	// the same time.
	release := make(chan struct{})
	blocked := make(chan string, 1)
	p.start(jobFunc(func() { blocked <- goroutineID(); <-release }))
	blockedID := <-blocked
	if other := run(); other == blockedID {
		t.Fatal("a request ran on the worker of a running request")
	}
	// Many concurrent requests: each on its own goroutine, at most
	// maxIdleWorkers wait afterwards.
	var wg sync.WaitGroup
	gate := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]bool{}
	for range 10 {
		wg.Add(1)
		p.start(jobFunc(func() {
			defer wg.Done()
			id := goroutineID()
			mu.Lock()
			if seen[id] {
				t.Error("two requests at once on one goroutine")
			}
			seen[id] = true
			mu.Unlock()
			<-gate
		}))
	}
	close(gate)
	wg.Wait()
	time.Sleep(10 * time.Millisecond)
	p.mu.Lock()
	if n := len(p.idle); n > maxIdleWorkers {
		t.Errorf("%d idle workers", n)
	}
	p.mu.Unlock()
	p.close()
	close(release) // the abandoned request returns after close: its worker ends
	done := make(chan struct{})
	p.start(jobFunc(func() { close(done) })) // after close: a goroutine of its own
	<-done
}

// TestRequestWorkers_IdleInBubble: inside a synctest bubble a waiting
// worker ends after workerIdle of the bubble's time, so the bubble ends with
// no goroutine left, and a monitor's close ends it at once.
func TestRequestWorkers_IdleInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p requestWorkers
		done := make(chan struct{})
		p.start(jobFunc(func() { close(done) }))
		<-done
		synctest.Wait()
		p.mu.Lock()
		if len(p.idle) != 1 {
			t.Fatalf("%d idle workers after one request", len(p.idle))
		}
		p.mu.Unlock()
		time.Sleep(workerIdle + time.Millisecond)
		synctest.Wait()
		p.mu.Lock()
		if len(p.idle) != 0 {
			t.Fatalf("%d idle workers after workerIdle", len(p.idle))
		}
		p.mu.Unlock()

		m := NewCatalogMonitor()
		done = make(chan struct{})
		m.workers.start(jobFunc(func() { close(done) }))
		<-done
		synctest.Wait()
		m.Close()
		synctest.Wait() // the waiting worker ended without time passing
		m.workers.mu.Lock()
		defer m.workers.mu.Unlock()
		if len(m.workers.idle) != 0 || !m.workers.closed {
			t.Fatal("close left a waiting worker")
		}
	})
}
