package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// makeRoom leaves a cache below the cap alone; a full one loses its expired
// entries, and every entry when none had expired.
func TestMakeRoom(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	until := func(e time.Time) time.Time { return e }
	full := func(expired int) map[[32]byte]time.Time {
		m := make(map[[32]byte]time.Time, maxCachedTokens)
		for i := range maxCachedTokens {
			var k [32]byte
			k[0], k[1] = byte(i), byte(i>>8)
			m[k] = now.Add(time.Minute)
			if i < expired {
				m[k] = now // expires at now: expired
			}
		}
		return m
	}

	m := full(0)
	delete(m, [32]byte{})
	makeRoom(m, now, until)
	assert.Len(t, m, maxCachedTokens-1, "below the cap: nothing dropped")

	m = full(10)
	makeRoom(m, now, until)
	assert.Len(t, m, maxCachedTokens-10, "full: the expired entries dropped")
	for _, e := range m {
		assert.True(t, now.Before(e))
	}

	m = full(0)
	makeRoom(m, now, until)
	assert.Empty(t, m, "full with nothing expired: emptied")
}
