package fleet

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// A State is where a supervised server stands.
type State string

// The states of a server. A server is connecting, then settles as ready,
// unapproved, backoff or unauthorized, and ends closed.
const (
	// StateConnecting: a session is being set up and its tools discovered.
	StateConnecting State = "connecting"
	// StateReady: the catalog is admitted; its tools are in Registrations.
	StateReady State = "ready"
	// StateUnapproved: the session is live but its catalog's digest is not
	// the locked one; see Pending and Approve.
	StateUnapproved State = "unapproved"
	// StateBackoff: the last attempt failed or the session ended; the
	// server is reconnected after a backoff.
	StateBackoff State = "backoff"
	// StateUnauthorized: an http server refused the fleet's OAuth
	// credentials, or there are none (ServerStatus.Code says which:
	// mcp_auth_required, mcp_auth_expired, mcp_auth_store_failed). It
	// registers nothing, never opens a browser, and looks in the token
	// store every second: once purramcp login (or the host) saves new
	// credentials there, it reconnects; once the background refresh
	// renews a token the server refused, it reconnects after its backoff.
	StateUnauthorized State = "unauthorized"
	// StateClosed: the fleet was closed.
	StateClosed State = "closed"
)

// Backoff spaces reconnections: the n-th consecutive failed attempt waits
// Initial·2^(n−1), at most Max, lengthened by a random jitter of at most
// 20% (jitter never shortens a wait).
type Backoff struct {
	// Initial is the first wait. Default (zero) 250ms.
	Initial time.Duration
	// Max is the longest wait before jitter. Default (zero) 30s; it must
	// not be below Initial.
	Max time.Duration
}

// Option defaults.
const (
	defaultBackoffInitial         = 250 * time.Millisecond
	defaultBackoffMax             = 30 * time.Second
	defaultMaxConsecutiveTimeouts = 3
	// stderrBytes is how much of each child's standard error is kept.
	stderrBytes = 4096
)

// Options configures a [Fleet]. The zero value supervises without a lock,
// with unscoped tools and the default backoff.
type Options struct {
	// Lock holds the approved catalogs; it is copied by New, so the
	// fleet's approvals never change it (see Fleet.Lock). nil admits every
	// catalog, as DiscoverTools without Approve does.
	Lock *Lock
	// Scope returns the scope of each bound tool, called once per tool by
	// New; a nil result is a config error. nil binds every tool with
	// purramcp.Unscoped, the explicit opt-out.
	Scope func(serverID, localName string) purramcp.ScopeFunc
	// Observer is given every purramcp event of every server (see
	// purramcp.DiscoveryOptions.Observer); it must be safe for concurrent
	// use.
	Observer func(context.Context, purramcp.Event)
	// CallStart is given the start of every call of every server (see
	// purramcp.DiscoveryOptions.CallStart), beside Observer; it must be
	// safe for concurrent use. nil calls nothing.
	CallStart func(context.Context, purramcp.Event) context.Context
	// TracePropagator puts the trace context of each call in its
	// tools/call's _meta (see purramcp.DiscoveryOptions.TracePropagator).
	// nil, the default, sends no _meta.
	TracePropagator purramcp.TracePropagator
	// TokenStore keeps the OAuth credentials of the http servers (see
	// oauth.Credentials): a server's requests carry its access token,
	// refreshed in the background. nil means no OAuth: no token is sent,
	// and a server that answers 401 is a failed connection. A command
	// passes oauth.FileStore in oauth.DefaultDir explicitly.
	// A server whose config sets an Authorization header never uses it.
	TokenStore oauth.Store
	// OnChange is called whenever the set of ready servers or a ready or
	// pending digest changes, from one goroutine, never concurrently with
	// itself; changes made while it runs are reported by one more call.
	// It must not block for long: it delays later reports, nothing else.
	OnChange func()
	// Backoff spaces reconnections.
	Backoff Backoff
	// MaxConsecutiveTimeouts is how many calls in a row on one session may
	// end mcp_timeout before the session is severed and reconnected.
	// Default (zero) 3; negative is an error.
	MaxConsecutiveTimeouts int
}

// ServerStatus is the state of one server, for the host (never for a
// model: Stderr is the server's own text).
type ServerStatus struct {
	// ID is the server id.
	ID string
	// State is where the server stands.
	State State
	// Digest is the admitted revision digest of a ready server and the
	// pending one of an unapproved server; "" otherwise.
	Digest string
	// Code is the mcp_* code of the last failure ("" when ready):
	// mcp_catalog_unapproved when unapproved.
	Code string
	// Attempts counts the connection attempts since the server was last
	// ready or unapproved (the current one included).
	Attempts int
	// Since is when State last changed.
	Since time.Time
	// Protocol is the protocol version of the server's last handshake:
	// the negotiated one, or after mcp_protocol_unsupported the one the
	// server offered (see ServerConfig.LegacyProtocols); "" before any.
	Protocol string
	// Failure names the bound tool that made the last discovery fail, and
	// why, when one did (a copy; nil otherwise). Its Path may hold the
	// server's property names: it is for the host's logs.
	Failure *purramcp.DiscoveryError
	// Stderr is the last 4 KiB of a stdio server's standard error, every
	// value substituted for ${env:NAME} replaced by ***.
	Stderr string
}

// A Fleet supervises one session per server of a [Config]. It is safe for
// concurrent use. Start it once; Close it once done (Close is idempotent).
type Fleet struct {
	servers []*server // sorted by id
	byID    map[string]*server
	opts    Options
	backoff Backoff
	tools   int         // how many tools the config binds: Registrations' capacity
	store   oauth.Store // Options.TokenStore; nil: no OAuth

	ctx    context.Context // ends when the fleet closes; supervisors run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the supervisors and the OnChange notifier

	// mu guards started, closed and lock.
	mu      sync.Mutex
	started bool
	closed  bool
	lock    *Lock // nil without Options.Lock

	changed chan struct{} // one pending OnChange report
}

// New checks cfg and opts and returns a fleet that has not started: no
// I/O happens until Start. cfg is copied. Every failure is a
// [*ConfigError] naming the path (servers.ID... for the config, or the
// option's name), which wraps purramcp.ErrBindingInvalid.
func New(cfg *Config, opts Options) (*Fleet, error) {
	if cfg == nil {
		return nil, errAt(path{"servers"}, "no servers")
	}
	if err := cfg.validate("servers"); err != nil {
		return nil, err
	}
	b := opts.Backoff
	b.Initial = cmpOr(b.Initial, defaultBackoffInitial)
	b.Max = cmpOr(b.Max, defaultBackoffMax)
	switch {
	case b.Initial < 0 || b.Max < b.Initial:
		return nil, errAt(path{"Backoff"}, "out of range")
	case opts.MaxConsecutiveTimeouts < 0:
		return nil, errAt(path{"MaxConsecutiveTimeouts"}, "out of range")
	}
	opts.MaxConsecutiveTimeouts = cmpOr(opts.MaxConsecutiveTimeouts, defaultMaxConsecutiveTimeouts)
	f := &Fleet{byID: map[string]*server{}, opts: opts, backoff: b, lock: opts.Lock.clone(),
		changed: make(chan struct{}, 1)}
	f.opts.Lock = nil // the fleet reads only its own copy
	f.store = opts.TokenStore
	for _, id := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s, err := newServer(f, id, cfg.Servers[id], cfg.secrets[id])
		if err != nil {
			return nil, err
		}
		f.servers = append(f.servers, s)
		f.byID[id] = s
		f.tools += len(cfg.Servers[id].Tools)
	}
	return f, nil
}

// cmpOr returns v, or def when v is zero.
func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Start connects every server concurrently, each through the bounding
// layer (purramcp.CatalogMonitor.Connect), and discovers its tools. It
// returns nil once each server has settled once (ready, unapproved or
// backoff), or ctx's error when ctx ends first; either way the servers go
// on (those not settled keep connecting) until Close, and a wedged one never
// holds back the others: each connection attempt is bounded by its
// server's Limits.Timeout, and Status shows where each stands. ctx bounds
// only the wait. It fails with a fresh purramcp.ErrBindingInvalid when
// called twice and purramcp.ErrConnectionClosed after Close (or when Close
// ends the wait).
func (f *Fleet) Start(ctx context.Context) error {
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		return &purramcp.Error{Code: purramcp.CodeConnectionClosed}
	case f.started:
		f.mu.Unlock()
		return &purramcp.Error{Code: purramcp.CodeBindingInvalid}
	}
	f.started = true
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.wg.Add(1 + len(f.servers)) // before Close can Wait
	f.mu.Unlock()
	go f.notify()
	for _, s := range f.servers {
		go func() {
			defer f.wg.Done()
			s.supervise(f.ctx)
		}()
	}
	for _, s := range f.servers {
		select {
		case <-s.settled:
		case <-ctx.Done():
			return ctx.Err()
		case <-f.ctx.Done(): // closed meanwhile
			return &purramcp.Error{Code: purramcp.CodeConnectionClosed}
		}
	}
	return nil
}

// notify runs OnChange once per pending report until the fleet closes.
func (f *Fleet) notify() {
	defer f.wg.Done()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.changed:
			if f.opts.OnChange != nil {
				f.opts.OnChange()
			}
		}
	}
}

// change records that the set of ready servers or a digest changed.
func (f *Fleet) change() {
	select {
	case f.changed <- struct{}{}:
	default: // a report is already pending; it covers this change
	}
}

// Registrations returns the tools of every ready server, merged and sorted
// by name, in a fresh slice. It is cheap enough to call before every model
// turn: the definitions of one admitted catalog are made once, and their
// InputSchema maps are shared by every caller, so they must not be
// modified (ArgumentContract.Schema returns a copy the caller owns, and
// every integration copies before it adapts a schema). Arguments are
// validated by ArgumentContract, never by InputSchema. Each keeps working across a recovery that
// brings its server back with the same digest; while its server is down it
// answers mcp_connection_closed without sending anything; once its server
// came back with a different digest (approved or not) it answers
// mcp_catalog_stale for good (call Registrations again). Run also counts
// timeouts toward MaxConsecutiveTimeouts and takes a server whose
// transport failed out at once. A call whose catalog a tool list change
// made stale waits (at most the server's Limits.Timeout, nothing sent
// meanwhile) for the rediscovery and runs on its catalog when the digest
// stayed the same. Run never retries: a call in flight when its session
// fails returns its code.
func (f *Fleet) Registrations() []purramcp.ToolDefinition {
	defs := make([]purramcp.ToolDefinition, 0, f.tools)
	for _, s := range f.servers {
		defs = s.registrations(defs)
	}
	slices.SortFunc(defs, func(a, b purramcp.ToolDefinition) int { return strings.Compare(a.Name, b.Name) })
	return defs
}

// Status returns the status of every server, sorted by id.
func (f *Fleet) Status() []ServerStatus {
	out := make([]ServerStatus, len(f.servers))
	for i, s := range f.servers {
		out[i] = s.status()
	}
	return out
}

// Snapshot returns the snapshot of the catalog server id was admitted
// with while it is ready: the one whose tools Registrations lists and
// whose RevisionDigest its status reports, read together under the
// server's lock, so the two always agree. ok is false for an unknown id
// or a server that is not ready (connecting, unapproved, in backoff or
// closed). The snapshot is a fresh deep copy the caller owns; it is safe
// to call concurrently with everything else, before Start and after Close
// (it then reports false).
func (f *Fleet) Snapshot(id string) (purramcp.Snapshot, bool) {
	s := f.byID[id]
	if s == nil {
		return purramcp.Snapshot{}, false
	}
	return s.snapshotIn(StateReady)
}

// Pending returns, for an unapproved server, the snapshot of its pending
// catalog and what changed from its locked snapshot (from an empty
// snapshot when the lock has none), as purramcp.DiffSnapshots reports it;
// ok is false for an unknown id or a server that is not unapproved. The
// snapshot is a fresh deep copy.
func (f *Fleet) Pending(id string) (purramcp.Snapshot, []purramcp.Change, bool) {
	s := f.byID[id]
	if s == nil {
		return purramcp.Snapshot{}, nil, false
	}
	pending, ok := s.snapshotIn(StateUnapproved)
	if !ok {
		return purramcp.Snapshot{}, nil, false
	}
	var locked purramcp.Snapshot
	if l := f.currentLock(); l != nil {
		locked, _ = l.Snapshot(id)
	}
	return pending, purramcp.DiffSnapshots(locked, pending), true
}

// Approve admits the pending catalog of an unapproved server when digest
// is exactly its pending digest: it records the snapshot in the fleet's
// lock (see Lock), rediscovers on the live session and returns once that
// discovery has settled (the server is then ready, unless its catalog
// changed meanwhile). It fails with a fresh purramcp.ErrBindingInvalid
// for an unknown id or a fleet without a lock, and
// purramcp.ErrCatalogUnapproved when the server is not unapproved or
// digest is not its pending digest.
func (f *Fleet) Approve(id, digest string) error {
	s := f.byID[id]
	if s == nil || f.currentLock() == nil {
		return &purramcp.Error{Code: purramcp.CodeBindingInvalid}
	}
	return s.approve(digest)
}

// currentLock returns the fleet's own lock, nil without Options.Lock.
func (f *Fleet) currentLock() *Lock {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lock
}

// admitted reports whether the lock admits digest for server id: always
// without a lock.
func (f *Fleet) admitted(id, digest string) bool {
	l := f.currentLock()
	if l == nil {
		return true
	}
	locked, ok := l.Digest(id)
	return ok && locked == digest
}

// Lock returns a fresh copy of the fleet's lock: Options.Lock with every
// approval since, ready to WriteFile. Without Options.Lock it is a lock of
// the catalogs currently admitted, one per ready server, which is how a
// first lock file is made.
func (f *Fleet) Lock() *Lock {
	if l := f.currentLock(); l != nil {
		return l.clone()
	}
	l := &Lock{}
	for _, s := range f.servers {
		if snap, ok := s.snapshotIn(StateReady); ok {
			l.Set(s.id, snap)
		}
	}
	return l
}

// Close stops every server: it ends every session and child process group
// and marks every status closed. It returns within the largest server
// Limits.Timeout plus one second, with no goroutine of the fleet left. It
// is idempotent and safe to call without Start.
func (f *Fleet) Close() error {
	f.mu.Lock()
	first := !f.closed
	f.closed = true
	started := f.started
	f.mu.Unlock()
	if first && started {
		f.cancel()
	}
	f.wg.Wait()
	for _, s := range f.servers {
		s.close()
	}
	return nil
}

// backoffWait is the wait before the attempt following the n-th
// consecutive failure (n ≥ 1).
func (f *Fleet) backoffWait(n int) time.Duration {
	d := f.backoff.Initial
	for i := 1; i < n && d < f.backoff.Max; i++ {
		d *= 2
	}
	d = min(d, f.backoff.Max)
	return d + time.Duration(rand.Int64N(int64(d)/5+1)) // jitter only lengthens, by at most 20%
}
