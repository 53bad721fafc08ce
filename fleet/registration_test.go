package fleet_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// A call the fleet answers itself while its server is down sends nothing
// and is still one call event, with its code, like a call that ran.
func TestFleet_CallWhileDownIsObserved(t *testing.T) {
	m := newMemServer(t)
	var mu sync.Mutex // guards calls
	var calls []purramcp.Event
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Backoff: fastBackoff, Observer: func(_ context.Context, e purramcp.Event) {
			if e.Kind == purramcp.EventCall {
				e.Duration, e.Start = 0, time.Time{}
				mu.Lock()
				calls = append(calls, e)
				mu.Unlock()
			}
		}})
	convert := registration(t, f, "convert_units")
	digest := statusOf(t, f, "u").Digest
	m.set("", true)
	m.Kill()
	waitState(t, f, "u", fleet.StateBackoff, "")
	sent := m.calls.Load()
	assert.Equal(t, purramcp.CodeConnectionClosed, run(t, convert, convertArgs))
	assert.Equal(t, sent, m.calls.Load(), "nothing is sent while the server is down")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []purramcp.Event{{Kind: purramcp.EventCall, ServerID: "u", RevisionDigest: digest,
		LocalName: "convert_units", RemoteName: "units.convert", Code: purramcp.CodeConnectionClosed,
		ArgumentBytes: len(convertArgs)}}, calls)
}
