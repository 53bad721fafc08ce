package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/purramcptest"
)

func TestFleet_StartRegistrationsRun(t *testing.T) {
	a, b := newMemServer(t), newMemServer(t)
	var events atomic.Int32
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{
		"b": memConfig(b, "b_", 0), "a": memConfig(a, "a_", 0)}},
		fleet.Options{Observer: func(context.Context, purramcp.Event) { events.Add(1) }})
	st := f.Status()
	require.Len(t, st, 2)
	want := prefixedSnapshot(t, "a", "a_").RevisionDigest
	assert.Equal(t, "a", st[0].ID)
	assert.Equal(t, fleet.StateReady, st[0].State)
	assert.Equal(t, want, st[0].Digest)
	assert.Equal(t, "", st[0].Code)
	assert.Equal(t, 1, st[0].Attempts)
	assert.Equal(t, fleet.StateReady, st[1].State)

	var names []string
	for _, d := range f.Registrations() {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"a_convert_units", "a_list_units", "b_convert_units", "b_list_units"}, names)
	assert.Equal(t, "", run(t, registration(t, f, "b_convert_units"), convertArgs))
	assert.Equal(t, int32(1), b.calls.Load())
	assert.Equal(t, int32(0), a.calls.Load())
	assert.Equal(t, int32(3), events.Load(), "two discoveries and one call observed")

	lock := f.Lock()
	digest, ok := lock.Digest("a")
	assert.True(t, ok, "without a lock, Lock holds every ready catalog")
	assert.Equal(t, want, digest)

	require.NoError(t, f.Close())
	for _, s := range f.Status() {
		assert.Equal(t, fleet.StateClosed, s.State, s.ID)
	}
	assert.Empty(t, f.Registrations())
	assert.ErrorIs(t, f.Start(context.Background()), purramcp.ErrConnectionClosed)
}

func TestFleet_RestartSameCatalogKeepsRegistrations(t *testing.T) {
	m := newMemServer(t)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Backoff: fastBackoff})
	convert := registration(t, f, "convert_units")
	digest := statusOf(t, f, "u").Digest
	assert.Equal(t, "", run(t, convert, convertArgs))

	m.set("", true)
	m.Kill()
	waitState(t, f, "u", fleet.StateBackoff, "")
	calls := m.calls.Load()
	assert.Equal(t, purramcp.CodeConnectionClosed, run(t, convert, convertArgs))
	assert.Equal(t, calls, m.calls.Load(), "nothing is sent while the server is down")
	assert.Empty(t, f.Registrations())

	m.set("", false)
	st := waitState(t, f, "u", fleet.StateReady, digest)
	assert.GreaterOrEqual(t, st.Attempts, 1)
	assert.Equal(t, "", run(t, convert, convertArgs), "the same digest: the old registration works again")
	assert.Equal(t, calls+1, m.calls.Load())
}

func TestFleet_RestartChangedCatalogIsStaleForGood(t *testing.T) {
	m := newMemServer(t)
	var changes atomic.Int32
	var inside atomic.Int32
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Backoff: fastBackoff, OnChange: func() {
			if inside.Add(1) != 1 {
				t.Error("OnChange ran concurrently with itself")
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			changes.Add(1)
		}})
	waitFor(t, "the first OnChange", func() bool { return changes.Load() >= 1 })
	old := registration(t, f, "convert_units")
	first := statusOf(t, f, "u").Digest

	m.set(" v2", false)
	m.Kill()
	waitFor(t, "a new digest", func() bool {
		st := statusOf(t, f, "u")
		return st.State == fleet.StateReady && st.Digest != first
	})
	calls := m.calls.Load()
	assert.Equal(t, purramcp.CodeCatalogStale, run(t, old, convertArgs))
	assert.Equal(t, "", run(t, registration(t, f, "convert_units"), convertArgs))

	m.set("", false) // the first catalog again
	m.Kill()
	waitState(t, f, "u", fleet.StateReady, first)
	assert.Equal(t, purramcp.CodeCatalogStale, run(t, old, convertArgs), "stale for good")
	assert.Equal(t, calls+1, m.calls.Load())
	waitFor(t, "OnChange for every digest change", func() bool { return changes.Load() >= 3 })
}

func TestFleet_ListChangeSameCatalogKeepsRegistrations(t *testing.T) {
	m := newMemServer(t)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Backoff: fastBackoff})
	defs := f.Registrations()
	require.Len(t, defs, 2)
	dials, lists := m.dials.Load(), m.lists.Load()
	gate := make(chan struct{})
	m.mu.Lock()
	m.gate = gate // the rediscovery waits until the test opens the gate
	m.mu.Unlock()
	m.addUnbound("extra")
	waitFor(t, "the rediscovery's tools/list", func() bool { return m.lists.Load() > lists })
	// The catalog is stale now; a call waits for the rediscovery instead of
	// failing, and runs on the new catalog, which has the same digest.
	time.AfterFunc(50*time.Millisecond, func() { close(gate) })
	assert.Equal(t, "", run(t, defs[0], convertArgs))
	assert.Equal(t, "", run(t, defs[1], `{}`))
	assert.Equal(t, int32(2), m.calls.Load())
	assert.Equal(t, dials, m.dials.Load(), "no reconnection")
	assert.Equal(t, fleet.StateReady, statusOf(t, f, "u").State)
}

func TestFleet_LockApprovePending(t *testing.T) {
	m := newMemServer(t)
	locked := unitsSnapshot(t, "u")
	lock := &fleet.Lock{}
	lock.Set("u", locked)
	m.set(" v2", false)
	var changes atomic.Int32
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Lock: lock, Backoff: fastBackoff, OnChange: func() { changes.Add(1) }})

	st := statusOf(t, f, "u")
	require.Equal(t, fleet.StateUnapproved, st.State)
	assert.Equal(t, purramcp.CodeCatalogUnapproved, st.Code)
	assert.NotEqual(t, locked.RevisionDigest, st.Digest)
	assert.Empty(t, f.Registrations())
	pending, changes2, ok := f.Pending("u")
	require.True(t, ok)
	assert.Equal(t, st.Digest, pending.RevisionDigest)
	assert.Equal(t, []purramcp.Change{{LocalName: "list_units", Kind: "changed", Fields: []string{"description"}}},
		changes2)
	_, _, ok = f.Pending("nope")
	assert.False(t, ok)

	err := f.Approve("u", locked.RevisionDigest)
	assert.ErrorIs(t, err, purramcp.ErrCatalogUnapproved, "only the pending digest")
	assert.ErrorIs(t, f.Approve("nope", st.Digest), purramcp.ErrBindingInvalid)
	require.NoError(t, f.Approve("u", st.Digest))
	ready := statusOf(t, f, "u")
	assert.Equal(t, fleet.StateReady, ready.State)
	assert.Equal(t, st.Digest, ready.Digest)
	assert.Equal(t, "", run(t, registration(t, f, "convert_units"), convertArgs))
	got, ok := f.Lock().Digest("u")
	require.True(t, ok)
	assert.Equal(t, st.Digest, got, "the approval is in the fleet's lock")
	was, _ := lock.Digest("u")
	assert.Equal(t, locked.RevisionDigest, was, "Options.Lock is not changed")
	_, _, ok = f.Pending("u")
	assert.False(t, ok)
	waitFor(t, "OnChange", func() bool { return changes.Load() >= 2 })
}

func TestFleet_MissingFromLockDiffsAgainstEmpty(t *testing.T) {
	m := newMemServer(t)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Lock: &fleet.Lock{}})
	require.Equal(t, fleet.StateUnapproved, statusOf(t, f, "u").State)
	pending, changes, ok := f.Pending("u")
	require.True(t, ok)
	assert.Equal(t, purramcp.DiffSnapshots(purramcp.Snapshot{}, pending), changes)
	assert.Equal(t, []purramcp.Change{{Kind: "changed", Fields: []string{"protocolVersion", "serverId"}},
		{LocalName: "convert_units", Kind: "added"}, {LocalName: "list_units", Kind: "added"}}, changes)
}

func TestFleet_ConsecutiveTimeoutsSever(t *testing.T) {
	m := newMemServer(t)
	block := make(chan struct{})
	defer close(block)
	m.mu.Lock()
	m.block = block
	m.mu.Unlock()
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 250*time.Millisecond)}},
		fleet.Options{Backoff: fastBackoff, MaxConsecutiveTimeouts: 2})
	waitState(t, f, "u", fleet.StateReady, "") // the Timeout also bounds connecting: a loaded machine may need a retry
	convert := registration(t, f, "convert_units")
	dials := m.dials.Load()
	assert.Equal(t, purramcp.CodeTimeout, run(t, convert, convertArgs))
	assert.Equal(t, dials, m.dials.Load(), "one timeout does not sever")
	assert.Equal(t, purramcp.CodeTimeout, run(t, convert, convertArgs))
	waitFor(t, "a reconnection", func() bool { return m.dials.Load() > dials })
	waitState(t, f, "u", fleet.StateReady, "")
	assert.Equal(t, int32(2), m.calls.Load(), "each call was sent once, never replayed")
}

func TestFleet_SixteenServersOneWedged(t *testing.T) {
	servers := map[string]fleet.ServerConfig{}
	for i := range 15 {
		m := newMemServer(t)
		servers[fmt.Sprintf("s%02d", i)] = memConfig(m, fmt.Sprintf("s%02d_", i), 0)
	}
	wedged := newWedged(t)
	cfg := memConfig(newMemServer(t), "wedged_", 0)
	cfg.Dial = wedged.dial
	servers["wedged"] = cfg
	f, err := fleet.New(&fleet.Config{Servers: servers}, fleet.Options{})
	require.NoError(t, err)
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	assert.ErrorIs(t, f.Start(ctx), context.DeadlineExceeded, "the wedged server has not settled")
	assert.Less(t, time.Since(start), 5*time.Second)
	ready := 0
	for _, s := range f.Status() {
		if s.State == fleet.StateReady {
			ready++
		}
	}
	assert.Equal(t, 15, ready)
	assert.Equal(t, fleet.StateConnecting, statusOf(t, f, "wedged").State)
	assert.Len(t, f.Registrations(), 30)
	closeStart := time.Now()
	require.NoError(t, f.Close())
	assert.Less(t, time.Since(closeStart), 31*time.Second, "Close within the largest Timeout + 1s")

	// With a short Timeout the wedged server settles in backoff, and Start
	// returns nil once it has.
	cfg.Limits.Timeout = 300 * time.Millisecond
	servers["wedged"] = cfg
	f, err = fleet.New(&fleet.Config{Servers: servers}, fleet.Options{Backoff: fleet.Backoff{Initial: time.Minute, Max: time.Minute}})
	require.NoError(t, err)
	defer f.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	require.NoError(t, f.Start(ctx2))
	st := statusOf(t, f, "wedged")
	assert.Equal(t, fleet.StateBackoff, st.State)
	assert.Equal(t, purramcp.CodeTimeout, st.Code)
	assert.Len(t, f.Registrations(), 30)
}

func TestFleet_NewErrors(t *testing.T) {
	m := newMemServer(t)
	good := memConfig(m, "", 0)
	cases := []struct {
		name string
		cfg  *fleet.Config
		opts fleet.Options
		path string
	}{
		{"nil config", nil, fleet.Options{}, "servers"},
		{"no servers", &fleet.Config{}, fleet.Options{}, "servers"},
		{"dial and command", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": func() fleet.ServerConfig {
			c := good
			c.Command = "x"
			return c
		}()}}, fleet.Options{}, "servers.u"},
		{"type with dial", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": func() fleet.ServerConfig {
			c := good
			c.Type = "stdio"
			return c
		}()}}, fleet.Options{}, "servers.u.type"},
		{"stale retries", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": func() fleet.ServerConfig {
			c := good
			c.StaleRetries = 9
			return c
		}()}}, fleet.Options{}, "servers.u.staleRetries"},
		{"timeout", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": func() fleet.ServerConfig {
			c := good
			c.Limits.Timeout = time.Hour
			return c
		}()}}, fleet.Options{}, "servers.u.limits.timeout"},
		{"nil scope", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": good}},
			fleet.Options{Scope: func(string, string) purramcp.ScopeFunc { return nil }}, `servers.u.tools["units.convert"]`},
		{"backoff", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": good}},
			fleet.Options{Backoff: fleet.Backoff{Initial: time.Second, Max: time.Millisecond}}, "Backoff"},
		{"timeouts", &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": good}},
			fleet.Options{MaxConsecutiveTimeouts: -1}, "MaxConsecutiveTimeouts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fleet.New(tc.cfg, tc.opts)
			assert.Nil(t, f)
			var ce *fleet.ConfigError
			require.True(t, errors.As(err, &ce), "case %s: %v", tc.name, err)
			assert.Equal(t, tc.path, ce.Path, "case %s", tc.name)
			assert.ErrorIs(t, err, purramcp.ErrBindingInvalid, "case %s", tc.name)
		})
	}
}

func TestFleet_ScopeIsTheHosts(t *testing.T) {
	m := newMemServer(t)
	var asked []string
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Scope: func(serverID, local string) purramcp.ScopeFunc {
			asked = append(asked, serverID+"/"+local)
			return func(context.Context, map[string]any, purramcp.ToolContext) error { return purramcp.Deny("no") }
		}})
	assert.Equal(t, []string{"u/convert_units", "u/list_units"}, asked)
	assert.Equal(t, purramcp.CodeScopeDenied, run(t, registration(t, f, "convert_units"), convertArgs))
	assert.Equal(t, int32(0), m.calls.Load())
}

func TestFleet_LegacyProtocols(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprint(legacy), func(t *testing.T) {
			m := newMemServer(t)
			m.versions = []string{purramcp.ProtocolVersion20241105}
			cfg := memConfig(m, "", 0)
			cfg.LegacyProtocols = legacy
			f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"old": cfg}},
				fleet.Options{Backoff: fleet.Backoff{Initial: time.Minute, Max: time.Minute}})
			st := statusOf(t, f, "old")
			assert.Equal(t, purramcp.ProtocolVersion20241105, st.Protocol, "the version the server offered")
			if !legacy {
				assert.Equal(t, fleet.StateBackoff, st.State)
				assert.Equal(t, purramcp.CodeProtocolUnsupported, st.Code)
				return
			}
			assert.Equal(t, fleet.StateReady, st.State)
			assert.Equal(t, "", run(t, registration(t, f, "convert_units"), convertArgs))
		})
	}
}

func TestFleet_RegistrationsShareReadOnlySchemas(t *testing.T) {
	m := newMemServer(t)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{})
	first := f.Registrations()
	first[0].Name, first[0].Description = "renamed", "changed"
	second := f.Registrations()
	assert.Equal(t, "convert_units", second[0].Name, "the slice and its values are the caller's")
	assert.Equal(t, "Convert <units> & more", second[0].Description)
	assert.Equal(t, second[0].ArgumentContract.Schema(), second[0].InputSchema)

	// The schema map is shared among callers and must not be modified. A
	// host that does so anyway changes only what later callers are shown:
	// arguments are still validated by the contract, and the snapshot and
	// the lock keep their own copies.
	before, _ := f.Snapshot("u")
	second[0].InputSchema["properties"].(map[string]any)["value"] = map[string]any{"type": "string"}
	assert.Equal(t, purramcp.CodeInvalidArguments, run(t, second[0], `{"value":"x"}`))
	assert.Equal(t, "", run(t, second[0], convertArgs))
	after, _ := f.Snapshot("u")
	assert.Equal(t, before, after)
}

func TestFleet_SnapshotOfReadyServersOnly(t *testing.T) {
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(newMemServer(t), "", 0)}},
		fleet.Options{Lock: &fleet.Lock{}, Backoff: fastBackoff}) // u is not in the lock: unapproved
	st := statusOf(t, f, "u")
	require.Equal(t, fleet.StateUnapproved, st.State)
	_, ok := f.Snapshot("u")
	assert.False(t, ok, "an unapproved server has no admitted snapshot")
	_, ok = f.Snapshot("nope")
	assert.False(t, ok)

	require.NoError(t, f.Approve("u", st.Digest))
	snap, ok := f.Snapshot("u")
	require.True(t, ok)
	assert.Equal(t, st.Digest, snap.RevisionDigest)
	assert.Equal(t, statusOf(t, f, "u").Digest, snap.RevisionDigest)
	pending, _ := f.Lock().Snapshot("u")
	assert.Equal(t, pending, snap, "the admitted snapshot is the approved one")
	snap.Entries[0].InputSchema["type"] = "changed"
	again, _ := f.Snapshot("u")
	assert.Equal(t, "object", again.Entries[0].InputSchema["type"], "each call returns a fresh copy")

	require.NoError(t, f.Close())
	_, ok = f.Snapshot("u")
	assert.False(t, ok, "a closed server is not ready")
}

func TestFleet_StatusNamesTheFailingTool(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bad", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "units.list", InputSchema: json.RawMessage(`{"type":"object","allOf":[{}]}`)},
		purramcptest.Text(nil, "x"))
	dial := serverDial(t, srv)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"bad": {Dial: dial,
		Tools: map[string]fleet.ToolConfig{"units.list": {As: "list_units"}}}}},
		fleet.Options{Backoff: fleet.Backoff{Initial: time.Minute, Max: time.Minute}})
	st := statusOf(t, f, "bad")
	assert.Equal(t, fleet.StateBackoff, st.State)
	assert.Equal(t, purramcp.CodeSchemaUnsupported, st.Code)
	assert.Equal(t, &purramcp.DiscoveryError{Code: purramcp.CodeSchemaUnsupported, RemoteName: "units.list",
		Schema: "inputSchema", Path: "$", Keyword: "allOf"}, st.Failure)
	require.NoError(t, f.Close())
}

// TestFleet_StatusNamesNoToolForACatalogLimit: a listing over a
// catalog-wide limit names no tool: Failure stays nil.
func TestFleet_StatusNamesNoToolForACatalogLimit(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "units.list", InputSchema: json.RawMessage(`{"type":"object"}`)}, purramcptest.Text(nil, "x"))
	dial := serverDial(t, srv)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"big": {Dial: dial,
		Limits: purramcp.Limits{MaxCatalogBytes: 10}, Tools: map[string]fleet.ToolConfig{"units.list": {As: "list_units"}}}}},
		fleet.Options{Backoff: fleet.Backoff{Initial: time.Minute, Max: time.Minute}})
	st := statusOf(t, f, "big")
	assert.Equal(t, fleet.StateBackoff, st.State)
	assert.Equal(t, purramcp.CodeCatalogLimitExceeded, st.Code)
	assert.Nil(t, st.Failure)
	require.NoError(t, f.Close())
}

func TestFleet_ConcurrentRunsAcrossRestarts(t *testing.T) {
	m := newMemServer(t)
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Backoff: fastBackoff})
	convert := registration(t, f, "convert_units")
	var ok, failed atomic.Int32
	done := make(chan struct{})
	for range 20 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 25 {
				res, err := convert.Run(context.Background(), []byte(convertArgs), purramcp.ToolContext{})
				switch {
				case err != nil:
					t.Errorf("run: %v", err)
				case res.ErrorCode == "":
					ok.Add(1)
				case res.ErrorCode == purramcp.CodeConnectionClosed || res.ErrorCode == purramcp.CodeTransportError:
					failed.Add(1)
				default:
					t.Errorf("unexpected code %s", res.ErrorCode)
				}
				_ = f.Status()
				_ = f.Registrations()
			}
		}()
	}
	for range 3 {
		time.Sleep(10 * time.Millisecond)
		m.Kill()
	}
	for range 20 {
		<-done
	}
	assert.Equal(t, int32(500), ok.Load()+failed.Load())
	assert.GreaterOrEqual(t, m.calls.Load(), ok.Load(), "every success reached the server")
	assert.LessOrEqual(t, m.calls.Load(), int32(500), "never more calls than Runs")
}

func TestFleet_CloseDuringStart(t *testing.T) {
	cfg := memConfig(newMemServer(t), "", 0)
	cfg.Dial = newWedged(t).dial
	f, err := fleet.New(&fleet.Config{Servers: map[string]fleet.ServerConfig{"w": cfg}}, fleet.Options{})
	require.NoError(t, err)
	started := make(chan error, 1)
	go func() { started <- f.Start(context.Background()) }()
	waitFor(t, "the connection attempt", func() bool { return statusOf(t, f, "w").Attempts == 1 })
	require.NoError(t, f.Close())
	assert.ErrorIs(t, <-started, purramcp.ErrConnectionClosed, "Start returns when the fleet closes")
	assert.Equal(t, fleet.StateClosed, statusOf(t, f, "w").State)
}

// ctxMark marks the ctx a CallStart returned.
type ctxMark struct{}

// markPropagator records the ctxMark value of each ctx it is given.
type markPropagator struct{ seen chan any }

func (p markPropagator) Inject(ctx context.Context, _ map[string]string) {
	p.seen <- ctx.Value(ctxMark{})
}

// TestFleet_CallStartAndPropagator: the fleet's CallStart is given the start
// of each call, with the server's id, and its TracePropagator reads the
// ctx CallStart returned.
func TestFleet_CallStartAndPropagator(t *testing.T) {
	m := newMemServer(t)
	var starts []purramcp.Event
	prop := markPropagator{seen: make(chan any, 4)}
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}},
		fleet.Options{Observer: func(context.Context, purramcp.Event) {}, TracePropagator: prop,
			CallStart: func(ctx context.Context, e purramcp.Event) context.Context {
				starts = append(starts, e)
				return context.WithValue(ctx, ctxMark{}, e.LocalName)
			}})
	assert.Equal(t, "", run(t, registration(t, f, "convert_units"), convertArgs))
	require.Len(t, starts, 1)
	assert.Equal(t, purramcp.EventCallStart, starts[0].Kind)
	assert.Equal(t, "u", starts[0].ServerID)
	assert.Equal(t, "convert_units", starts[0].LocalName)
	require.Len(t, prop.seen, 1)
	assert.Equal(t, "convert_units", <-prop.seen)
}
