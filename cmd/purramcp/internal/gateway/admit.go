package gateway

import (
	"context"
	"slices"
	"sync"
	"time"
)

// An admitKey names what a call counts against: its verified user ("" when
// none), its session (nil when it has none that outlives the request), and
// the upstream that serves its tool.
type admitKey struct {
	user     string
	session  any
	upstream string
}

// class is the key of the call's turn in the queue: its user when it has
// one, else its session, else the call alone.
func (k admitKey) class(self *waiter) any {
	switch {
	case k.user != "":
		return "user\x00" + k.user
	case k.session != nil:
		return k.session
	}
	return self
}

// admitCaps are the caps an [admission] enforces; each is positive.
type admitCaps struct {
	total, user, session, queue int
	upstream                    func(id string) int // the cap of upstream id
	wait                        time.Duration
}

// An admission decides when a call may start: at once while every cap it
// counts against has room, else in the queue, in fair turn across classes
// (round robin: one call per class per turn), for at most caps.wait. Only a
// full queue and an expired wait refuse. Its maps hold only keys with calls
// in flight or waiting, so closed sessions leave nothing behind.
type admission struct {
	caps admitCaps

	// mu guards everything below.
	mu        sync.Mutex
	total     int
	users     map[string]int
	sessions  map[any]int
	upstreams map[string]int
	queued    int
	classes   map[any]*turn // classes with waiters
	ring      []*turn       // the same classes, in turn order
	next      int           // the index in ring whose turn is next
}

// A turn is one class's waiters, oldest first.
type turn struct {
	key     any
	waiting []*waiter
}

// A waiter is one queued call; ready is closed once it is granted.
type waiter struct {
	key     admitKey
	ready   chan struct{}
	granted bool
}

func newAdmission(caps admitCaps) *admission {
	return &admission{
		caps:      caps,
		users:     map[string]int{},
		sessions:  map[any]int{},
		upstreams: map[string]int{},
		classes:   map[any]*turn{},
	}
}

// acquire admits a call of k: it returns the function that ends the call's
// slot and "", or nil and the refusal's code: [CodeBusy] when the queue is
// full or k's class already has caps.user calls waiting, [CodeWaitExpired] when the wait passed caps.wait, [CodeCanceled]
// when ctx ended first. A refused call holds nothing.
func (a *admission) acquire(ctx context.Context, k admitKey) (func(), string) {
	a.mu.Lock()
	// Every waiter that fits has been granted (dispatch runs on each
	// release), so a call that fits now takes no waiter's slot.
	if a.fits(k) {
		a.take(k)
		a.mu.Unlock()
		return a.releaser(k), ""
	}
	w := &waiter{key: k, ready: make(chan struct{})}
	// A class (a user, a session) may fill at most caps.user of the queue,
	// so one client's burst cannot refuse everyone else at arrival.
	if t := a.classes[k.class(w)]; a.queued >= a.caps.queue || (t != nil && len(t.waiting) >= a.caps.user) {
		a.mu.Unlock()
		return nil, CodeBusy
	}
	a.enqueue(w)
	a.mu.Unlock()

	timer := time.NewTimer(a.caps.wait)
	defer timer.Stop()
	code := CodeWaitExpired
	select {
	case <-w.ready:
		return a.releaser(k), ""
	case <-ctx.Done():
		code = CodeCanceled
	case <-timer.C:
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.granted { // granted as the wait ended: give the slot on
		a.give(k)
		a.dispatch()
		return nil, code
	}
	a.dequeue(w)
	return nil, code
}

// fits reports whether a call of k may start now; a.mu is held.
func (a *admission) fits(k admitKey) bool {
	return a.total < a.caps.total &&
		(k.user == "" || a.users[k.user] < a.caps.user) &&
		(k.session == nil || a.sessions[k.session] < a.caps.session) &&
		a.upstreams[k.upstream] < a.caps.upstream(k.upstream)
}

// take counts a call of k in; a.mu is held.
func (a *admission) take(k admitKey) {
	a.total++
	if k.user != "" {
		a.users[k.user]++
	}
	if k.session != nil {
		a.sessions[k.session]++
	}
	a.upstreams[k.upstream]++
}

// give counts a call of k out, dropping keys left at zero; a.mu is held.
func (a *admission) give(k admitKey) {
	a.total--
	if k.user != "" {
		if a.users[k.user]--; a.users[k.user] == 0 {
			delete(a.users, k.user)
		}
	}
	if k.session != nil {
		if a.sessions[k.session]--; a.sessions[k.session] == 0 {
			delete(a.sessions, k.session)
		}
	}
	if a.upstreams[k.upstream]--; a.upstreams[k.upstream] == 0 {
		delete(a.upstreams, k.upstream)
	}
}

// releaser returns the function that ends a granted call of k, once.
func (a *admission) releaser(k admitKey) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.give(k)
			a.dispatch()
		})
	}
}

// enqueue puts w at the end of its class's waiters; a.mu is held.
func (a *admission) enqueue(w *waiter) {
	key := w.key.class(w)
	t := a.classes[key]
	if t == nil {
		t = &turn{key: key}
		a.classes[key] = t
		// A new class takes its turn last in the current round.
		a.ring = slices.Insert(a.ring, a.next, t)
		a.next++
		if a.next == len(a.ring) {
			a.next = 0
		}
	}
	t.waiting = append(t.waiting, w)
	a.queued++
}

// dequeue takes w, not granted, out of the queue; a.mu is held.
func (a *admission) dequeue(w *waiter) {
	t := a.classes[w.key.class(w)]
	if i := slices.Index(t.waiting, w); i >= 0 {
		t.waiting = slices.Delete(t.waiting, i, i+1)
		a.queued--
	}
	if len(t.waiting) == 0 {
		a.drop(t)
	}
}

// drop removes the empty class t from the ring; a.mu is held.
func (a *admission) drop(t *turn) {
	delete(a.classes, t.key)
	i := slices.Index(a.ring, t)
	a.ring = slices.Delete(a.ring, i, i+1)
	if i < a.next {
		a.next--
	}
	if a.next >= len(a.ring) {
		a.next = 0
	}
}

// dispatch grants waiters while any fits, one per class per turn, in ring
// order from next; a.mu is held.
func (a *admission) dispatch() {
	for a.queued > 0 && a.total < a.caps.total {
		granted := false
		for n := len(a.ring); n > 0 && a.total < a.caps.total; n-- {
			t := a.ring[a.next]
			i := slices.IndexFunc(t.waiting, func(w *waiter) bool { return a.fits(w.key) })
			if i < 0 {
				a.next = (a.next + 1) % len(a.ring)
				continue
			}
			w := t.waiting[i]
			t.waiting = slices.Delete(t.waiting, i, i+1)
			a.queued--
			a.take(w.key)
			w.granted = true
			close(w.ready)
			granted = true
			if len(t.waiting) == 0 {
				a.drop(t) // next now names the class after t
			} else {
				a.next = (a.next + 1) % len(a.ring)
			}
			if len(a.ring) == 0 {
				return
			}
		}
		if !granted {
			return
		}
	}
}
