package gateway

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testCaps(total, user, session, queue int) admitCaps {
	return admitCaps{total: total, user: user, session: session, queue: queue,
		upstream: func(string) int { return total }, wait: time.Minute}
}

// queue starts a call of k that must wait, and returns the channel its
// outcome arrives on once it is queued.
type outcome struct {
	release func()
	code    string
}

func queue(t *testing.T, ctx context.Context, a *admission, k admitKey, label string, got chan<- string) chan outcome {
	t.Helper()
	out := make(chan outcome, 1)
	go func() {
		release, code := a.acquire(ctx, k)
		if code == "" {
			got <- label
		}
		out <- outcome{release, code}
	}()
	synctest.Wait() // queued, in this order
	return out
}

// With one slot, three calls of user A queued before three of user B are
// served A, B, A, B, A, B: one per user per turn, each user's in order.
func TestAdmission_FairAcrossUsers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a := newAdmission(testCaps(1, 10, 10, 10))
		first, code := a.acquire(ctx, admitKey{user: "A", upstream: "docs"})
		require.Empty(t, code)
		got := make(chan string, 6)
		var outs []chan outcome
		for _, w := range []struct{ user, label string }{
			{"A", "A1"}, {"A", "A2"}, {"A", "A3"}, {"B", "B1"}, {"B", "B2"}, {"B", "B3"},
		} {
			outs = append(outs, queue(t, ctx, a, admitKey{user: w.user, upstream: "docs"}, w.label, got))
		}
		byLabel := map[string]chan outcome{"A1": outs[0], "A2": outs[1], "A3": outs[2], "B1": outs[3], "B2": outs[4], "B3": outs[5]}
		var order []string
		release := first
		for range 6 {
			release()
			label := <-got
			order = append(order, label)
			o := <-byLabel[label]
			require.Empty(t, o.code)
			release = o.release
			synctest.Wait()
			assert.Empty(t, got, "one slot, one call at a time")
		}
		release()
		assert.Equal(t, []string{"A1", "B1", "A2", "B2", "A3", "B3"}, order)
		assertEmpty(t, a)
	})
}

// Without users, sessions take the turns: a session's calls do not hold
// back another's.
func TestAdmission_FairAcrossSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a := newAdmission(testCaps(1, 10, 10, 10))
		s1, s2 := new(byte), new(byte)
		release, code := a.acquire(ctx, admitKey{session: s1})
		require.Empty(t, code)
		got := make(chan string, 4)
		outs := map[string]chan outcome{}
		for _, w := range []struct {
			s     any
			label string
		}{{s1, "1a"}, {s1, "1b"}, {s2, "2a"}, {s2, "2b"}} {
			outs[w.label] = queue(t, ctx, a, admitKey{session: w.s}, w.label, got)
		}
		var order []string
		for range 4 {
			release()
			label := <-got
			order = append(order, label)
			release = (<-outs[label]).release
		}
		release()
		assert.Equal(t, []string{"1a", "2a", "1b", "2b"}, order)
		assertEmpty(t, a)
	})
}

// A user at its cap waits; another user's call starts at once, and every
// other cap holds the same way.
func TestAdmission_OneUserAtItsCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a := newAdmission(testCaps(10, 2, 10, 10))
		var held []func()
		for range 2 {
			release, code := a.acquire(ctx, admitKey{user: "A", upstream: "docs"})
			require.Empty(t, code)
			held = append(held, release)
		}
		got := make(chan string, 1)
		waiting := queue(t, ctx, a, admitKey{user: "A", upstream: "docs"}, "A3", got)
		for range 5 {
			release, code := a.acquire(ctx, admitKey{user: "B", upstream: "docs"})
			require.Empty(t, code, "B is served while A is at its cap")
			release()
		}
		assert.Empty(t, got, "A still waits")
		held[0]()
		assert.Equal(t, "A3", <-got)
		(<-waiting).release()
		held[1]()
		assertEmpty(t, a)
	})
}

func TestAdmission_UpstreamAndSessionCaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a := newAdmission(testCaps(10, 10, 1, 10))
		a.caps.upstream = func(id string) int {
			if id == "slow" {
				return 1
			}
			return 10
		}
		slow, code := a.acquire(ctx, admitKey{upstream: "slow"})
		require.Empty(t, code)
		got := make(chan string, 2)
		waitSlow := queue(t, ctx, a, admitKey{upstream: "slow"}, "slow2", got)
		s := new(byte)
		first, code := a.acquire(ctx, admitKey{session: s, upstream: "fast"})
		require.Empty(t, code, "another upstream is not held back")
		waitSession := queue(t, ctx, a, admitKey{session: s, upstream: "fast"}, "session2", got)
		assert.Empty(t, got)
		first()
		assert.Equal(t, "session2", <-got)
		slow()
		assert.Equal(t, "slow2", <-got)
		(<-waitSlow).release()
		(<-waitSession).release()
		assertEmpty(t, a)
	})
}

// A full queue refuses at once with gateway_busy; a wait past the bound
// refuses with gateway_wait_expired; a canceled wait leaves the queue.
// None of them holds anything afterwards.
func TestAdmission_Refusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a := newAdmission(testCaps(1, 10, 10, 2))
		release, code := a.acquire(ctx, admitKey{upstream: "docs"})
		require.Empty(t, code)
		got := make(chan string, 2)
		expiring := queue(t, ctx, a, admitKey{user: "A"}, "A", got)
		cctx, cancel := context.WithCancel(ctx)
		canceled := queue(t, cctx, a, admitKey{user: "B"}, "B", got)

		start := time.Now()
		r, code := a.acquire(ctx, admitKey{user: "C"})
		assert.Nil(t, r)
		assert.Equal(t, CodeBusy, code)
		assert.Equal(t, start, time.Now(), "a full queue refuses at once")

		cancel()
		o := <-canceled
		assert.Equal(t, CodeCanceled, o.code)
		assert.Nil(t, o.release)

		o = <-expiring
		assert.Equal(t, CodeWaitExpired, o.code)
		assert.Equal(t, time.Minute, time.Since(start), "the wait is bounded by caps.wait")
		assert.Empty(t, got)
		release()
		assertEmpty(t, a)
	})
}

// assertEmpty checks that a holds no call and no key.
func assertEmpty(t *testing.T, a *admission) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	assert.Zero(t, a.total)
	assert.Zero(t, a.queued)
	assert.Empty(t, a.users)
	assert.Empty(t, a.sessions)
	assert.Empty(t, a.upstreams)
	assert.Empty(t, a.classes)
	assert.Empty(t, a.ring)
}

func TestCallsFor(t *testing.T) {
	for _, tc := range []struct {
		mem  uint64
		want int
	}{{0, 64}, {512 << 20, 64}, {4 << 30, 512}, {24 << 30, 3072}, {64 << 30, 4096}} {
		assert.Equal(t, tc.want, callsFor(tc.mem), "%d bytes", tc.mem)
	}
}

// One user's burst fills at most its share of the queue (the per-user
// cap): past it its calls are refused, another user's still wait.
func TestAdmission_OneUserCannotFillTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a := newAdmission(testCaps(1, 2, 10, 10))
		release, code := a.acquire(ctx, admitKey{user: "A"})
		require.Empty(t, code)
		got := make(chan string, 3)
		first := queue(t, ctx, a, admitKey{user: "A"}, "A2", got)
		second := queue(t, ctx, a, admitKey{user: "A"}, "A3", got)
		r, code := a.acquire(ctx, admitKey{user: "A"})
		assert.Nil(t, r)
		assert.Equal(t, CodeBusy, code, "A has 2 waiting, its cap")
		other := queue(t, ctx, a, admitKey{user: "B"}, "B1", got)
		release()
		assert.Equal(t, "A2", <-got)
		(<-first).release()
		assert.Equal(t, "B1", <-got)
		(<-other).release()
		assert.Equal(t, "A3", <-got)
		(<-second).release()
		assertEmpty(t, a)
	})
}

// A session named by another user's request is another key: a request
// with a stolen session ID never counts against the session it names.
func TestAdmitKeyOf(t *testing.T) {
	alice, bob := &auth.TokenInfo{UserID: "alice"}, &auth.TokenInfo{UserID: "bob"}
	self := new(byte)
	assert.Equal(t, admitKeyOf(alice, "s1", nil, "docs"), admitKeyOf(alice, "s1", self, "docs"))
	assert.NotEqual(t, admitKeyOf(alice, "s1", nil, "docs").session, admitKeyOf(bob, "s1", nil, "docs").session)
	assert.NotEqual(t, admitKeyOf(nil, "s1", nil, "docs").session, admitKeyOf(alice, "s1", nil, "docs").session)
	assert.Equal(t, admitKey{user: "alice", session: any(self), upstream: "docs"}, admitKeyOf(alice, "", self, "docs"))
}
