package fleet_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func TestBackoff_DiesAfterInitialize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemServer(t)
		m.dieAfterInit = true
		f, err := fleet.New(&fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
			fleet.Options{Backoff: fleet.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}})
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, f.Start(context.Background()))
		st := statusOf(t, f, "u")
		assert.Equal(t, fleet.StateBackoff, st.State)
		assert.Contains(t, []string{purramcp.CodeConnectionClosed, purramcp.CodeTransportError}, st.Code)
		time.Sleep(10*time.Second - time.Since(start))
		attempts := m.dials.Load()
		// Waits 0.1, 0.2, 0.4, 0.8, then 1s each (each at most 20% longer):
		// 13 attempts in 10 s without jitter, at least 11 with the most.
		assert.LessOrEqual(t, attempts, int32(15))
		assert.GreaterOrEqual(t, attempts, int32(11))
		assert.Equal(t, int(attempts), statusOf(t, f, "u").Attempts)
		require.NoError(t, f.Close())
		m.Kill()
	})
}

func TestBackoff_Waits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemServer(t)
		m.set("", true)
		f, err := fleet.New(&fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
			fleet.Options{})
		require.NoError(t, err)
		require.NoError(t, f.Start(context.Background()))
		// Default backoff 250ms doubling to 30s: attempts at 0, then after
		// 0.25, 0.5, 1, 2, 4, 8, 16, 30... (each up to 20% longer).
		var at []time.Duration
		start := time.Now()
		last := m.dials.Load()
		for time.Since(start) < 70*time.Second {
			time.Sleep(10 * time.Millisecond)
			if n := m.dials.Load(); n != last {
				at = append(at, time.Since(start))
				last = n
			}
		}
		require.GreaterOrEqual(t, len(at), 7)
		prev := time.Duration(0)
		want := 250 * time.Millisecond
		for i, a := range at {
			gap := a - prev
			assert.GreaterOrEqual(t, gap, want, "wait %d", i)
			assert.LessOrEqual(t, gap, want*6/5+20*time.Millisecond, "wait %d", i)
			prev, want = a, min(2*want, 30*time.Second)
		}
		require.NoError(t, f.Close())
	})
}
