package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// ConnectOptions configures [Connect]. The zero value announces the
// fleet's client, waits the server's Limits.Timeout for the handshake and
// redacts nothing beyond the config's own secrets.
type ConnectOptions struct {
	// Client is the implementation announced in the handshake. Default
	// (nil) is the fleet's own, "purramcp-fleet".
	Client *mcp.Implementation
	// Timeout bounds starting or reaching the server and the handshake.
	// Default (zero) the server's Limits.Timeout, or purramcp's default;
	// negative is an error.
	Timeout time.Duration
	// Secrets are values shown as *** in the child's Stderr, besides the
	// ${env:NAME} values [Config.Secrets] returns (pass those here for a
	// ServerConfig taken from a Config).
	Secrets []string
	// TokenStore, when set, holds the OAuth credentials of an http server
	// (see [oauth.Credentials]): the session's requests to the server carry its
	// access token, renewed first when it has expired and can be
	// refreshed. nil sends no token. A config that sets an Authorization
	// header never uses it.
	TokenStore oauth.Store
	// ProtocolVersion is the protocol version to connect at, normally the
	// one a lock approved for the server (the locked snapshot's
	// ProtocolVersion). When the server still speaks it, the session is at
	// it, even when the server also speaks a newer one; when the server
	// refuses it or answers another version, Connect connects again as
	// without it, so that a discovery shows the change as drift. "" (or a
	// version go-sdk does not speak) negotiates the newest version both
	// speak.
	ProtocolVersion string
}

// A Session is one session with one server, set up by [Connect] outside
// any Fleet: the same transport (a stdio child in a process group of its
// own, its standard error kept redacted; streamable HTTP with the
// config's headers; or Dial), through the bounding layer
// (purramcp.CatalogMonitor.Connect). Its methods are safe for concurrent
// use; the caller closes it.
type Session struct {
	sc     ServerConfig // as Connect was given it
	c      *conn
	stderr *stderrRing   // nil unless stdio
	keeper *oauth.Keeper // nil without ConnectOptions.TokenStore
}

// RequiredScopes returns the scopes the server last asked for when it
// refused a request for insufficient scope (HTTP 403 with
// error="insufficient_scope"), nil when it never did: a host signs in
// again with them ([oauth.LoginOptions].OAuth.Scopes) to step up.
func (s *Session) RequiredScopes() []string {
	if s.keeper == nil {
		return nil
	}
	return s.keeper.RequiredScopes()
}

// ClientSession returns the live session, for purramcp.DiscoverTools or
// any request. Session owns it: close the Session, not it.
func (s *Session) ClientSession() *mcp.ClientSession { return s.c.session }

// Monitor returns the session's CatalogMonitor, to give to
// purramcp.DiscoveryOptions.Monitor.
func (s *Session) Monitor() *purramcp.CatalogMonitor { return s.c.monitor }

// Discover discovers the tools of the ServerConfig the session was
// connected with, as the fleet does: [ServerConfig.Bindings] (every scope
// purramcp.Unscoped, since a one-shot discovery never calls a tool) and
// [ServerConfig.DiscoveryOptions], with the session's monitor and observer
// (which may be nil). It returns the catalog's snapshot, which the caller
// owns, or purramcp.DiscoverTools' error (the server's own text never in
// it; see [Session.Stderr] for a child's). It may be called more than once.
func (s *Session) Discover(ctx context.Context, id string, observer func(context.Context, purramcp.Event)) (purramcp.Snapshot, error) {
	opts := s.sc.DiscoveryOptions()
	opts.Monitor, opts.Observer = s.c.monitor, observer
	catalog, err := purramcp.DiscoverTools(ctx, s.c.session, id, s.sc.Bindings(), opts)
	if err != nil {
		return purramcp.Snapshot{}, err
	}
	return catalog.Snapshot(), nil
}

// Stderr returns the last 4 KiB of a stdio child's standard error, every
// secret replaced by ***; "" for other transports.
func (s *Session) Stderr() string { return s.stderr.text() }

// Close ends the session, the child's whole process group (closing its
// standard input first, then SIGTERM, then SIGKILL, within a second) and
// what the transport holds. It is idempotent.
func (s *Session) Close() { s.c.close() }

// A ConnectError is a failed [Connect]. Err is the transport's or the
// handshake's own error (its text may hold the server's words, or a
// secret of the config: redact it before showing it).
type ConnectError struct {
	// Err is what failed.
	Err error
	// TimedOut is set when ConnectOptions.Timeout passed before the
	// handshake finished (and the caller's ctx had not ended).
	TimedOut bool
	// ExitCode is a stdio child's exit status when it exited on its own
	// with an error before the handshake finished; 0 otherwise.
	ExitCode int
	// Offered is the protocol version the server offered when the
	// handshake failed mcp_protocol_unsupported; "" otherwise.
	Offered string
	// Stderr is as [Session.Stderr] at the failure.
	Stderr string
	// Unauthorized is set when an http server refused the connection for
	// want of a usable OAuth token in ConnectOptions.TokenStore:
	// [purramcp.CodeAuthRequired] when none is stored, [purramcp.CodeAuthExpired] when the
	// stored one was refused and could not be refreshed; `purramcp login`
	// (or [oauth.Login]) is the remedy.
	Unauthorized string
}

// Error returns "fleet: connect: " and Err's text.
func (e *ConnectError) Error() string { return "fleet: connect: " + e.Err.Error() }

// Unwrap returns Err.
func (e *ConnectError) Unwrap() error { return e.Err }

// Connect starts or reaches the server sc describes and sets up one
// session through the bounding layer, as the fleet does for each of its
// sessions, bounded by opts.Timeout. sc is copied and checked as [New]
// checks it (not its tools); a bad sc fails with a [*ConfigError], a failed
// connection with a [*ConnectError]. The caller closes the Session.
func Connect(ctx context.Context, sc ServerConfig, opts ConnectOptions) (*Session, error) {
	if err := sc.validateReach(path{}); err != nil {
		return nil, err
	}
	if opts.Timeout < 0 {
		return nil, errAt(path{"Timeout"}, "negative")
	}
	info := cmpOr(opts.Client, &clientInfo)
	timeout := cmpOr(opts.Timeout, cmpOr(sc.Limits.Timeout, purramcp.DefaultLimits().Timeout))
	sc = sc.clone()
	s := &Session{sc: sc}
	if sc.Command != "" {
		s.stderr = newStderrRing(opts.Secrets)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if opts.TokenStore != nil && sc.URL != "" && !hasHeader(sc.Headers, "Authorization") {
		s.keeper = oauth.NewKeeper(opts.TokenStore, sc.URL, clientIDOf(sc.OAuth))
		if _, err := s.keeper.Load(cctx); err != nil {
			return nil, &ConnectError{Err: err}
		}
		if at := s.keeper.Due(); !at.IsZero() && !time.Now().Before(at) {
			_ = s.keeper.Refresh(cctx) // a refusal shows as the handshake's 401
		}
	}
	c, err := dialAt(cctx, sc, s.stderr, timeout, info, nil, s.keeper, opts.ProtocolVersion)
	if err != nil {
		ce := &ConnectError{Err: err, Stderr: s.stderr.text()}
		var de *dialError
		if errors.As(err, &de) {
			ce.Err, ce.ExitCode = de.err, max(de.exit, 0)
			if purramcp.CodeOf(de.err) == purramcp.CodeProtocolUnsupported {
				ce.Offered = de.offered
			}
		}
		ce.TimedOut = ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded)
		if s.keeper != nil {
			ce.Unauthorized = s.keeper.Unauthorized()
		}
		return nil, ce
	}
	s.c = c
	return s, nil
}

// dialError is a failed dial with what the failure left to know.
type dialError struct {
	err     error
	exit    int    // the child's exit status, when it exited on its own with one
	offered string // the version the handshake produced, accepted or not
}

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// dial sets up one session with the server sc describes through the
// bounding layer, within ctx: the transport (transport.go), a fresh
// CatalogMonitor (accepting legacy protocols when sc asks) and a client
// announcing info with copts, asking for protocol version pin ("" the
// newest). A stdio child's standard error goes to ring.
// On failure everything started is stopped; the error is the
// connection's, wrapped in a *dialError once the handshake was tried.
func dial(ctx context.Context, sc ServerConfig, ring *stderrRing, timeout time.Duration,
	info *mcp.Implementation, copts *mcp.ClientOptions, k *oauth.Keeper, pin string) (*conn, error) {
	t, proc, release, err := newTransport(ctx, sc, ring, timeout, k)
	if err != nil {
		return nil, err
	}
	c := &conn{monitor: purramcp.NewCatalogMonitor(), proc: proc, release: release, cut: make(chan struct{})}
	if sc.LegacyProtocols {
		c.monitor.AcceptLegacyProtocols()
	}
	client := c.monitor.NewClient(info, copts)
	session, err := c.monitor.Connect(ctx, client, t, &mcp.ClientSessionOptions{ProtocolVersion: pin})
	if err != nil {
		de := &dialError{err: err, offered: c.monitor.OfferedVersion()}
		if proc != nil {
			proc.stop()
			de.exit = proc.exitCode()
		}
		release()
		return nil, de
	}
	c.session = session
	return c, nil
}
