package fleet

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// clientInfo is the implementation the fleet's clients announce.
var clientInfo = mcp.Implementation{Name: "purramcp-fleet", Version: "1"}

// server supervises one server of the fleet: one session at a time, each
// with its own CatalogMonitor and mcp.Client, reconnected after a backoff.
type server struct {
	f        *Fleet
	id       string
	cfg      ServerConfig
	bindings map[string]purramcp.ToolBinding
	timeout  time.Duration // the resolved Limits.Timeout; also bounds connecting
	stderr   *stderrRing   // nil unless stdio
	keeper   *oauth.Keeper // nil unless http with a TokenStore and without a configured Authorization header
	settled  chan struct{} // closed when the server first settles
	wake     chan struct{} // one pending rediscovery (a list change or an approval)

	// mu guards every field below.
	mu       sync.Mutex
	state    State
	code     string
	attempts int
	fresh    bool // the next attempt restarts Attempts (the server was ready or unapproved)
	since    time.Time
	digest   string
	protocol string                             // of the last handshake
	failure  *purramcp.DiscoveryError           // of the last discovery; nil when it had none
	conn     *conn                              // the session of the admitted catalog
	catalog  *purramcp.Catalog                  // admitted; nil unless ready
	snapshot purramcp.Snapshot                  // of catalog, or the pending one
	defs     map[string]purramcp.ToolDefinition // catalog's registrations by name
	regs     []purramcp.ToolDefinition          // the fleet-level registrations of catalog (registration.go)
	swap     chan struct{}                      // closed when catalog is replaced or dropped
	lineage  uint64                             // advances with every catalog whose digest differs from lineDigest
	line     string                             // the digest of the current lineage
	settle1  bool                               // settled was closed
	waiters  []chan struct{}                    // Approve calls waiting for the next settle
}

// newServer copies sc and resolves the bindings (calling Options.Scope).
func newServer(f *Fleet, id string, sc ServerConfig, secrets []string) (*server, error) {
	sc = sc.clone()
	s := &server{f: f, id: id, cfg: sc, bindings: sc.Bindings(),
		timeout: cmpOr(sc.Limits.Timeout, purramcp.DefaultLimits().Timeout),
		settled: make(chan struct{}), wake: make(chan struct{}, 1), state: StateConnecting, since: time.Now()}
	if sc.Command != "" {
		s.stderr = newStderrRing(secrets)
	}
	if f.store != nil && sc.URL != "" && !hasHeader(sc.Headers, "Authorization") {
		s.keeper = oauth.NewKeeper(f.store, sc.URL, clientIDOf(sc.OAuth))
	}
	for _, remote := range slices.Sorted(maps.Keys(s.bindings)) {
		b := s.bindings[remote]
		if f.opts.Scope != nil {
			if b.Scope = f.opts.Scope(id, b.LocalName); b.Scope == nil {
				return nil, errAt(path{"servers", id, "tools", remote}, "Options.Scope returned nil")
			}
		}
		b.Scope = requireScopes(sc.Tools[remote].Scopes, b.Scope)
		s.bindings[remote] = b
	}
	return s, nil
}

// conn is one session of a server and what it runs on.
type conn struct {
	session  *mcp.ClientSession
	monitor  *purramcp.CatalogMonitor
	proc     *process // nil unless stdio
	release  func()   // frees what the transport holds besides the session
	timeouts atomic.Int32
	renewals uint64        // the keeper's Renewals before the last discovery began (0 without a keeper)
	cut      chan struct{} // closed by sever
	once     sync.Once
	reason   string // the code sever was given; read after cut is closed
}

// sever asks the supervisor to end the session, with code as the reason.
func (c *conn) sever(code string) {
	c.once.Do(func() {
		c.reason = code
		close(c.cut)
	})
}

// observe accounts for a call's outcome on the session: a transport
// failure or a closed session severs it at once, MaxConsecutiveTimeouts
// timeouts in a row sever it, and an answer resets the count.
func (c *conn) observe(code string, maxTimeouts int) {
	switch code {
	case purramcp.CodeTimeout:
		if int(c.timeouts.Add(1)) >= maxTimeouts {
			c.sever(purramcp.CodeTimeout)
		}
	case purramcp.CodeTransportError, purramcp.CodeConnectionClosed:
		c.sever(code)
	case purramcp.CodeInvalidArguments, purramcp.CodeScopeDenied, purramcp.CodeCatalogStale:
		// nothing was answered on the wire: the count stands
	default:
		c.timeouts.Store(0)
	}
}

// close ends the session and its process group.
func (c *conn) close() {
	if c.proc != nil {
		c.proc.stop() // closes stdin first: the graceful shutdown stdio asks for
	}
	_ = c.session.Close()
	c.release()
}

// supervise runs the server until ctx ends: connect, serve, take out,
// back off, and again.
func (s *server) supervise(ctx context.Context) {
	if s.keeper != nil {
		_, _ = s.keeper.Load(ctx)
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			s.keeper.Keep(ctx, s.sever)
		}()
	}
	failures := 0
	for ctx.Err() == nil {
		s.connecting()
		var renewals uint64 // the keeper's, before the handshake
		if k := s.keeper; k != nil {
			if at := k.Due(); !at.IsZero() && !time.Now().Before(at) {
				_ = k.Refresh(ctx) // an expired token is renewed before the handshake; a refusal shows below
			}
			renewals = k.Renewals()
		}
		c, err := s.connect(ctx)
		code := connectCode(err)
		if code == purramcp.CodeUnauthorized && s.keeper != nil {
			if !s.reauthorize(ctx, renewals, &failures) {
				return
			}
			continue
		}
		if err == nil {
			var admitted bool
			code, admitted = s.serve(ctx, c)
			s.out(code)
			c.close()
			if admitted {
				failures = 0
			}
			if s.keeper != nil && ctx.Err() == nil && (code == purramcp.CodeUnauthorized || s.keeperGaveUp(code)) {
				// discovery met a 401 (the same as a refused handshake), or the
				// keeper ended the session because only a login helps now (its
				// refresh was refused): unauthorized at once, not a reconnect
				// with a token that cannot be renewed
				renewals := c.renewals // a 401 to the last discovery
				if code != purramcp.CodeUnauthorized {
					renewals = s.keeper.Renewals() // refused: only a login renews
				}
				if !s.reauthorize(ctx, renewals, &failures) {
					return
				}
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		failures++
		s.backoff(code)
		t := time.NewTimer(s.f.backoffWait(failures))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// keeperGaveUp reports whether code, the reason a session ended, is the
// keeper's: a refresh refused (or a store or egress failure) after which
// only new credentials help.
func (s *server) keeperGaveUp(code string) bool {
	switch code {
	case purramcp.CodeAuthExpired, purramcp.CodeAuthRequired, purramcp.CodeAuthStoreFailed, purramcp.CodeEgressRefused:
		return s.keeper.Reason() == code
	}
	return false
}

// connectCode is the status code of a failed connection: the adapter's
// code when it has one, mcp_timeout when the server's Timeout passed, else
// mcp_transport_error (a dial, spawn or handshake failure).
func connectCode(err error) string {
	if err == nil {
		return ""
	}
	if code := purramcp.CodeOf(err); code != "" {
		return code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return purramcp.CodeTimeout
	}
	return purramcp.CodeTransportError
}

// connect sets up one session through the bounding layer, bounded by the
// server's Timeout, at the protocol version the lock approved for the
// server when it still speaks it (dialAt).
func (s *server) connect(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c, err := dialAt(ctx, s.cfg, s.stderr, s.timeout, &clientInfo, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.rediscover() },
	}, s.keeper, s.f.currentLock().ProtocolVersion(s.id))
	var de *dialError
	switch {
	case err == nil:
		s.handshook(c.monitor.OfferedVersion())
	case errors.As(err, &de):
		s.handshook(de.offered)
	}
	return c, err
}

// handshook records the protocol version of the last handshake, accepted
// or not.
func (s *server) handshook(protocol string) {
	s.mu.Lock()
	s.protocol = protocol
	s.mu.Unlock()
}

// rediscover asks the supervisor to rediscover on the live session.
func (s *server) rediscover() {
	select {
	case s.wake <- struct{}{}:
	default: // one is already pending
	}
}

// serve discovers on c, and again after every list change or approval,
// until the session ends, is severed, or ctx ends. It returns the code
// that ended it and whether a catalog was ever ready or pending on it.
func (s *server) serve(ctx context.Context, c *conn) (string, bool) {
	ended := make(chan struct{})
	go func() { // ends when the session does; supervise closes it after serve
		_ = c.session.Wait()
		close(ended)
	}()
	var exited <-chan struct{}
	if c.proc != nil {
		exited = c.proc.exited
	}
	settled := false
	for {
		if s.keeper != nil {
			c.renewals = s.keeper.Renewals()
		}
		code := s.discover(ctx, c)
		if code != "" && code != purramcp.CodeCatalogUnapproved {
			return code, settled
		}
		settled = true
		select {
		case <-ended:
			return purramcp.CodeConnectionClosed, settled
		case <-exited:
			return purramcp.CodeConnectionClosed, settled
		case <-c.cut:
			return c.reason, settled
		case <-ctx.Done():
			return "", settled
		case <-s.wake:
		}
	}
}

// discover runs one DiscoverTools on c and records its outcome: "" when
// the catalog was admitted, mcp_catalog_unapproved when it is pending,
// else the code of the failure.
func (s *server) discover(ctx context.Context, c *conn) string {
	opts := s.cfg.DiscoveryOptions()
	opts.Monitor, opts.Observer = c.monitor, s.f.opts.Observer
	opts.CallStart, opts.TracePropagator = s.f.opts.CallStart, s.f.opts.TracePropagator
	var candidate *purramcp.Snapshot
	if s.f.currentLock() != nil {
		opts.Approve = func(_ context.Context, snap purramcp.Snapshot) error {
			candidate = &snap
			if s.f.admitted(s.id, snap.RevisionDigest) {
				return nil
			}
			return purramcp.ErrCatalogUnapproved
		}
	}
	catalog, err := purramcp.DiscoverTools(ctx, c.session, s.id, s.bindings, opts)
	var failure *purramcp.DiscoveryError
	if d := (*purramcp.DiscoveryError)(nil); errors.As(err, &d) && d != nil && d.RemoteName != "" { // a tool, not a catalog-wide limit
		failure = &purramcp.DiscoveryError{Code: d.Code, RemoteName: d.RemoteName, Schema: d.Schema, Path: d.Path,
			Keyword: d.Keyword}
	}
	s.mu.Lock()
	s.failure = failure
	s.mu.Unlock()
	switch code := purramcp.CodeOf(err); {
	case err == nil:
		s.admit(c, catalog)
		return ""
	case code == purramcp.CodeCatalogUnapproved && candidate != nil:
		s.hold(*candidate)
		return code
	case code == "":
		return purramcp.CodeConnectionClosed // ErrCanceled: the fleet is closing
	default:
		return code
	}
}

// admit makes catalog the server's ready catalog.
func (s *server) admit(c *conn, catalog *purramcp.Catalog) {
	snap := catalog.Snapshot()
	defs := map[string]purramcp.ToolDefinition{}
	for _, d := range catalog.Registrations() {
		defs[d.Name] = d
	}
	s.mu.Lock()
	changed := s.state != StateReady || s.digest != snap.RevisionDigest
	s.follow(snap.RevisionDigest)
	s.conn, s.catalog, s.defs, s.snapshot = c, catalog, defs, snap
	s.regs = s.wrap(catalog, s.lineage, snap.RevisionDigest)
	s.swapped()
	s.become(StateReady, snap.RevisionDigest, "")
	s.settleLocked()
	s.mu.Unlock()
	if changed {
		s.f.change()
	}
}

// hold records snap as the server's pending, unapproved catalog.
func (s *server) hold(snap purramcp.Snapshot) {
	s.mu.Lock()
	changed := s.state != StateUnapproved || s.digest != snap.RevisionDigest
	s.follow(snap.RevisionDigest)
	s.conn, s.catalog, s.defs, s.regs, s.snapshot = nil, nil, nil, nil, snap
	s.swapped()
	s.become(StateUnapproved, snap.RevisionDigest, purramcp.CodeCatalogUnapproved)
	s.settleLocked()
	s.mu.Unlock()
	if changed {
		s.f.change()
	}
}

// follow advances the lineage when digest differs from its digest: every
// registration handed out before then answers mcp_catalog_stale for good.
// s.mu is held.
func (s *server) follow(digest string) {
	if digest != s.line {
		s.lineage++
		s.line = digest
	}
}

// swapped wakes the calls waiting for the catalog to be replaced; s.mu is
// held.
func (s *server) swapped() {
	if s.swap != nil {
		close(s.swap)
	}
	s.swap = make(chan struct{})
}

// become sets the state; s.mu is held.
func (s *server) become(state State, digest, code string) {
	if s.state != state {
		s.since = time.Now()
	}
	s.state, s.digest, s.code = state, digest, code
}

// settleLocked records a settled attempt: Start's wait and Approve's wait
// end, and the next attempt restarts Attempts. s.mu is held.
func (s *server) settleLocked() {
	if !s.settle1 {
		s.settle1 = true
		close(s.settled)
	}
	for _, w := range s.waiters {
		close(w)
	}
	s.waiters = nil
	if s.state != StateBackoff {
		s.fresh = true
	}
}

// connecting records the start of a connection attempt.
func (s *server) connecting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh {
		s.attempts, s.fresh = 0, false
	}
	s.attempts++
	s.failure = nil
	s.become(StateConnecting, "", s.code)
}

// out takes the server out at once: its registrations answer
// mcp_connection_closed from now on, until it comes back.
func (s *server) out(code string) {
	s.mu.Lock()
	wasSet := s.dropLocked(StateBackoff, code)
	for _, w := range s.waiters {
		close(w)
	}
	s.waiters = nil
	s.mu.Unlock()
	if wasSet {
		s.f.change()
	}
}

// dropLocked takes the server's session, catalog and registrations away
// and moves it to state, with no digest and code. It reports whether the
// server had been ready or unapproved. The caller holds mu.
func (s *server) dropLocked(state State, code string) (wasSet bool) {
	wasSet = s.state == StateReady || s.state == StateUnapproved
	s.conn, s.catalog, s.defs, s.regs = nil, nil, nil, nil
	s.swapped()
	s.become(state, "", code)
	return wasSet
}

// backoff records a failed attempt and settles.
func (s *server) backoff(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(StateBackoff, code)
	s.settleLocked()
}

// loginPoll is how often an unauthorized server looks in the token store
// for the credentials a login saves.
const loginPoll = time.Second

// unauthorized records that the server refused the fleet's credentials
// (or that there are none) and settles: it registers nothing until a
// login.
func (s *server) unauthorized(code string) {
	s.mu.Lock()
	wasSet := s.dropLocked(StateUnauthorized, code)
	s.settleLocked()
	s.mu.Unlock()
	if wasSet {
		s.f.change()
	}
}

// reauthorize makes the server unauthorized and waits until it may be
// tried again (awaitLogin). After a login the next attempt is a first one
// (*failures is reset); after the keeper's own renewal it is one more
// consecutive failure and waits out the backoff first, so that a server
// refusing every refreshed token costs at most one attempt and one
// refresh per backoff wait. It reports false when ctx ended first.
func (s *server) reauthorize(ctx context.Context, renewals uint64, failures *int) bool {
	s.unauthorized(s.keeper.Reason())
	login, ok := s.awaitLogin(ctx, renewals)
	if !ok {
		return false
	}
	if login {
		*failures = 0
		return true
	}
	*failures++
	t := time.NewTimer(s.f.backoffWait(*failures))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// awaitLogin waits until the server may be tried again: the token store
// holds new credentials for it (a login: login is true), or the keeper
// took up credentials since its Renewals was renewals (its own refresh
// after the server refused a token, which no store change announces). ok
// is false when ctx ended first. It never opens a browser: purramcp login
// (or the host) puts the credentials there.
func (s *server) awaitLogin(ctx context.Context, renewals uint64) (login, ok bool) {
	t := time.NewTicker(loginPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, false
		case <-t.C:
		}
		if changed, err := s.keeper.Load(ctx); err == nil && changed {
			return true, true
		}
		if s.keeper.Renewals() != renewals {
			return false, true
		}
		if code := s.keeper.Reason(); code != s.statusCode() {
			s.unauthorized(code) // a store that failed, or answers again
		}
	}
}

// statusCode is the server's current status code.
func (s *server) statusCode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code
}

// sever ends the current session, if any, with code as the reason.
func (s *server) sever(code string) {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.sever(code)
	}
}

// close marks the server closed; the supervisor has returned.
func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(StateClosed, s.code)
	for _, w := range s.waiters {
		close(w)
	}
	s.waiters = nil
}

// status returns the server's status.
func (s *server) status() ServerStatus {
	s.mu.Lock()
	st := ServerStatus{ID: s.id, State: s.state, Digest: s.digest, Code: s.code, Attempts: s.attempts, Since: s.since,
		Protocol: s.protocol}
	if s.failure != nil {
		f := *s.failure
		st.Failure = &f
	}
	s.mu.Unlock()
	if s.stderr != nil {
		st.Stderr = s.stderr.String()
	}
	return st
}

// snapshotIn returns a copy of the server's snapshot while it is in state:
// the pending one when unapproved, the admitted one when ready.
func (s *server) snapshotIn(state State) (purramcp.Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != state {
		return purramcp.Snapshot{}, false
	}
	return s.snapshot.Clone(), true
}

// approve admits the pending digest: it records it in the fleet's lock,
// asks for a rediscovery and waits until it settled (or the fleet closed).
func (s *server) approve(digest string) error {
	s.mu.Lock()
	if s.state != StateUnapproved || s.digest != digest {
		s.mu.Unlock()
		return &purramcp.Error{Code: purramcp.CodeCatalogUnapproved}
	}
	s.f.currentLock().Set(s.id, s.snapshot)
	w := make(chan struct{})
	s.waiters = append(s.waiters, w)
	s.mu.Unlock()
	s.rediscover()
	<-w
	return nil
}
