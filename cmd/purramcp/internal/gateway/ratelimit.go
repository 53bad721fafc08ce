package gateway

import (
	"sync"
	"time"
)

// maxLimitedAddresses caps the client addresses a [rateLimiter] tracks;
// past it, the addresses whose budget is whole again are forgotten (a
// fresh one has the same), then every one.
const maxLimitedAddresses = 4096

// A rateLimiter is a token bucket per client address and one over every
// address: each refills at its rate per second up to one second's worth.
// It is safe for concurrent use.
type rateLimiter struct {
	perAddress, overall float64

	// mu guards the buckets.
	mu    sync.Mutex
	all   bucket
	addrs map[string]*bucket
}

// A bucket is a budget and when it was last refilled.
type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(perAddress, overall int) *rateLimiter {
	return &rateLimiter{perAddress: float64(perAddress), overall: float64(overall), addrs: map[string]*bucket{}}
}

// refill adds what rate earned since the last refill, up to rate.
func (b *bucket) refill(now time.Time, rate float64) {
	if b.at.IsZero() {
		b.tokens = rate
	} else if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = min(rate, b.tokens+rate*elapsed.Seconds())
	}
	b.at = now
}

// allow takes one from addr's budget and the overall one, or reports false
// (taking nothing) when either is spent.
func (l *rateLimiter) allow(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.addrs[addr]
	if b == nil {
		if len(l.addrs) >= maxLimitedAddresses {
			l.sweep(now)
		}
		b = &bucket{}
		l.addrs[addr] = b
	}
	b.refill(now, l.perAddress)
	l.all.refill(now, l.overall)
	if b.tokens < 1 || l.all.tokens < 1 {
		return false
	}
	b.tokens--
	l.all.tokens--
	return true
}

// sweep forgets the addresses whose budget is whole, and every address
// when none was. The caller holds mu.
func (l *rateLimiter) sweep(now time.Time) {
	for addr, b := range l.addrs {
		if b.refill(now, l.perAddress); b.tokens >= l.perAddress {
			delete(l.addrs, addr)
		}
	}
	if len(l.addrs) >= maxLimitedAddresses {
		clear(l.addrs)
	}
}
