package purramcp

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/bounding"
)

// Protocol versions the adapter accepts; a session that negotiated any
// other fails [ErrProtocolUnsupported]. purra-mcp 1.0.0 accepts the first
// two; 2026-07-28 is go-sdk's default. The two legacy versions are accepted
// only by a monitor on which [CatalogMonitor.AcceptLegacyProtocols] was
// called.
const (
	// ProtocolVersion20241105 is MCP 2024-11-05, a legacy version accepted
	// only after [CatalogMonitor.AcceptLegacyProtocols].
	ProtocolVersion20241105 = "2024-11-05"
	// ProtocolVersion20250326 is MCP 2025-03-26, a legacy version accepted
	// only after [CatalogMonitor.AcceptLegacyProtocols].
	ProtocolVersion20250326 = "2025-03-26"
	// ProtocolVersion20250618 is MCP 2025-06-18.
	ProtocolVersion20250618 = "2025-06-18"
	// ProtocolVersion20251125 is MCP 2025-11-25.
	ProtocolVersion20251125 = "2025-11-25"
	// ProtocolVersion20260728 is MCP 2026-07-28, go-sdk v1.8.0's default.
	ProtocolVersion20260728 = "2026-07-28"
)

// methodToolListChanged is the only notification the monitor counts.
const methodToolListChanged = "notifications/tools/list_changed"

// A CatalogMonitor follows one MCP session for the catalogs discovered over
// it: the negotiated protocol version, tool list changes (each one makes every
// earlier catalog stale for good) and the end of the session. A catalog checks
// it before and after every request.
//
// A host needs only two of its methods: [CatalogMonitor.NewClient], which
// builds the go-sdk client, and [CatalogMonitor.Connect], which connects
// that client through [CatalogMonitor.Transport] (the bounding layer) and
// attaches the session ([CatalogMonitor.Attach]); then it passes the
// monitor in [DiscoveryOptions]. Transport and Attach are Connect's parts,
// for hosts that connect themselves; Check and Revision are what catalogs
// read.
//
// A CatalogMonitor is safe for concurrent use. It serves exactly one
// session; it never closes the session, the client or the transport, which
// the host owns (Connect closes only a mis-wired session it has just made,
// which it never returns). It also keeps the contracts discovery compiled
// for the session's accepted schemas, so that a rediscovery compiles only
// schemas it has not seen: a schema equal to a kept one (under the same
// Limits and SchemaPolicy) gets the same immutable contract, anything else
// is compiled afresh. What it keeps is bounded (at most 2,048 schemas, 4 MiB
// of schema bytes) and dropped when the monitor closes.
type CatalogMonitor struct {
	// mu guards every field below.
	mu       sync.Mutex
	revision uint64
	closed   bool
	protocol string
	session  *mcp.ClientSession
	// legacy is set by AcceptLegacyProtocols; offered is the last version
	// given to acceptProtocolVersion, accepted or not.
	legacy  bool
	offered string
	// kind is the transport kind Transport saw (telemetry.go), for Events.
	kind string
	// strict is set by RequireTransport.
	strict bool
	// clients records the sessions of the clients NewClient built
	// (wiring.go); it has its own lock.
	clients sessionRecord
	// bounding is the request path and, once Transport's transport
	// connects, the bounding layer (internal/bounding); it has its own lock.
	bounding bounding.Session
	// schemas caches discovery's compiled schemas (schemacache.go); it
	// has its own lock and is emptied when the monitor closes.
	schemas schemaCache
	// digests remembers the last catalog's revision digest
	// (catalogdigest.go); emptied when the monitor closes.
	digests digestMemo
	// progress routes progress notifications to the calls made under
	// WithProgress (progress.go); it has its own lock.
	progress progressTable
}

// NewCatalogMonitor returns an open monitor with revision 0 and no protocol
// version.
func NewCatalogMonitor() *CatalogMonitor { return &CatalogMonitor{} }

// NewClient returns a go-sdk client announcing impl (non-nil, as for
// mcp.NewClient), built with a copy of opts (nil means empty options) wired
// to this monitor:
//
//   - its ToolListChangedHandler counts the change on the monitor and then
//     calls opts' own handler, if any. Setting it is also what makes go-sdk
//     subscribe to list changes under 2026-07-28;
//   - its ProgressNotificationHandler passes a notification for a call made
//     under [WithProgress] to that call's [ProgressFunc] and then calls
//     opts' own handler, if any;
//   - multi-round-trip retries are disabled, so one tools/call is one request
//     (go-sdk otherwise re-sends tools/call for inputRequests);
//   - when opts sets no Capabilities, the client advertises none: go-sdk's
//     default for nil Capabilities is {"roots":{"listChanged":true}}.
//     Sampling and elicitation are still advertised when opts sets their
//     handlers, and opts' own Capabilities are kept as they are.
//
// The sessions of the clients NewClient built are the only ones
// [CatalogMonitor.Attach] and [CatalogMonitor.Connect] accept: the client
// records each session it connects (through a sending middleware), so a
// client built otherwise, even with the same options, or by another
// monitor, is refused. Every list change the client receives counts, from
// any of its sessions: use one client per monitor. opts is not modified.
func (m *CatalogMonitor) NewClient(impl *mcp.Implementation, opts *mcp.ClientOptions) *mcp.Client {
	client := mcp.NewClient(impl, m.clientOptions(opts))
	client.AddSendingMiddleware(m.clients.middleware)
	return client
}

// clientOptions returns the copy of base NewClient builds its client with.
func (m *CatalogMonitor) clientOptions(base *mcp.ClientOptions) *mcp.ClientOptions {
	var opts mcp.ClientOptions
	if base != nil {
		opts = *base
	}
	host := opts.ToolListChangedHandler
	opts.ToolListChangedHandler = func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		m.onNotification(methodToolListChanged)
		if host != nil {
			host(ctx, req)
		}
	}
	hostProgress := opts.ProgressNotificationHandler
	opts.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		// Through the monitor's Transport, the bounding layer has passed
		// the notification on as it was read (monitorOwner.Progress).
		if p := req.Params; p != nil && m.bounding.Layer() == bounding.NoLayer {
			if token, ok := p.ProgressToken.(string); ok {
				m.progress.deliver(token, p.Progress, p.Total)
			}
		}
		if hostProgress != nil {
			hostProgress(ctx, req)
		}
	}
	mrt := mcp.MultiRoundTripOptions{}
	if opts.MultiRoundTrip != nil {
		mrt = *opts.MultiRoundTrip
	}
	mrt.Disabled = true
	opts.MultiRoundTrip = &mrt
	// Capability injection: advertise no roots, sampling or elicitation
	// capability unless the host asks for one. go-sdk clones Capabilities
	// and infers sampling and elicitation from their handlers on top.
	if opts.Capabilities == nil {
		opts.Capabilities = &mcp.ClientCapabilities{}
	}
	return &opts
}

// Attach binds the monitor to session: it accepts the version the handshake
// actually negotiated (session.InitializeResult().ProtocolVersion) and starts
// one goroutine that waits for the session to end (session.Wait) and then
// closes the monitor. Attaching the same session again does nothing more.
//
// It fails [ErrBindingInvalid] for a nil session and for a mis-wired one:
// when the session's client was not built by this monitor's
// [CatalogMonitor.NewClient] (a client built otherwise may re-send
// tools/call and miss list changes; one built by another monitor counts
// its changes there), or when the monitor's Transport was used but did not
// connect this session. Before a session is attached the monitor
// recognises the last four sessions its clients connected; a monitor
// serves one. It fails [ErrNotInitialized] when the session has no
// initialize result, [ErrProtocolConflict] when another session is
// attached (the monitor stays as it is), and otherwise as the negotiated
// version requires: [ErrProtocolUnsupported] for a version the monitor
// does not accept (see [CatalogMonitor.AcceptLegacyProtocols]), which
// closes the monitor. Attach never closes the session.
//
// A session connected without the monitor's [CatalogMonitor.Transport] is
// accepted, as purra-mcp 1.0.0's wiring is, unless
// [CatalogMonitor.RequireTransport] was called (then it fails
// [ErrBindingInvalid]); Transport's documentation says what the layer adds.
// Production hosts connect through [CatalogMonitor.Connect].
func (m *CatalogMonitor) Attach(session *mcp.ClientSession) error {
	if session == nil {
		return fail(CodeBindingInvalid)
	}
	init := session.InitializeResult()
	if init == nil {
		return fail(CodeNotInitialized)
	}
	m.mu.Lock()
	if m.session != nil && m.session != session {
		m.mu.Unlock()
		return fail(CodeProtocolConflict)
	}
	layer := m.bounding.Layer()
	wired := m.session == session || m.clients.has(session)
	if !wired || layer == bounding.LayerConnecting || layer == bounding.LayerConnected && !m.bounding.Carries(session) ||
		m.strict && layer == bounding.NoLayer {
		m.mu.Unlock()
		return fail(CodeBindingInvalid)
	}
	switch m.session {
	case nil:
		m.session = session
		m.clients.attach()
	case session:
		m.mu.Unlock()
		return m.acceptProtocolVersion(init.ProtocolVersion)
	default:
		m.mu.Unlock()
		return fail(CodeProtocolConflict)
	}
	m.mu.Unlock()
	if err := m.acceptProtocolVersion(init.ProtocolVersion); err != nil {
		return err
	}
	go func() {
		// Ends when the session does; the host owns and closes it.
		_ = session.Wait()
		m.close()
	}()
	return nil
}

// RequireTransport makes Attach fail [ErrBindingInvalid] for a session that
// was not connected through the monitor's [CatalogMonitor.Transport], so
// that no session is ever followed without the bounding layer. It is for
// hosts that connect themselves (Transport, client.Connect, Attach), as
// purramcptest does; Connect requires the layer on its own. Call it before
// Attach; it cannot be undone. Without it, Attach accepts such a session,
// as purra-mcp 1.0.0's wiring does.
func (m *CatalogMonitor) RequireTransport() {
	m.mu.Lock()
	m.strict = true
	m.mu.Unlock()
}

// Connect is the production wiring in one call: it connects client over
// the monitor's [CatalogMonitor.Transport] wrapping t (opts as for
// client.Connect), requires that layer (RequireTransport) and attaches the
// session. client must have been built by this monitor's
// [CatalogMonitor.NewClient]. When Attach fails, Connect closes the
// session and returns Attach's error, so no mis-wired session is ever
// returned. It fails [ErrBindingInvalid] for a nil client or transport and
// [ErrProtocolConflict] when the monitor already has a session, without
// connecting; a failed connection returns go-sdk's error unchanged (no
// session was made). The host owns and closes the returned session.
func (m *CatalogMonitor) Connect(ctx context.Context, client *mcp.Client, t mcp.Transport,
	opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	if client == nil || t == nil {
		return nil, fail(CodeBindingInvalid)
	}
	m.mu.Lock()
	used := m.session != nil || m.bounding.Layer() != bounding.NoLayer
	if !used {
		m.strict = true // RequireTransport, for this monitor's one session
	}
	m.mu.Unlock()
	if used {
		return nil, fail(CodeProtocolConflict) // one session per monitor; nothing changes
	}
	session, err := client.Connect(ctx, m.Transport(t), opts)
	if err != nil {
		return nil, err
	}
	if err := m.Attach(session); err != nil {
		_ = session.Close()
		return nil, err
	}
	return session, nil
}

// acceptProtocolVersion records the negotiated protocol version. It accepts
// [ProtocolVersion20250618], [ProtocolVersion20251125] and
// [ProtocolVersion20260728], and also [ProtocolVersion20241105] and
// [ProtocolVersion20250326] after [CatalogMonitor.AcceptLegacyProtocols];
// any other version fails [ErrProtocolUnsupported], and a version different
// from one accepted before fails [ErrProtocolConflict]. Both failures close
// the monitor. Every version given, accepted or not, is what
// [CatalogMonitor.OfferedVersion] then reports.
func (m *CatalogMonitor) acceptProtocolVersion(version string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offered = version
	switch version {
	case ProtocolVersion20250618, ProtocolVersion20251125, ProtocolVersion20260728:
	case ProtocolVersion20241105, ProtocolVersion20250326:
		if !m.legacy {
			m.closed = true
			return fail(CodeProtocolUnsupported)
		}
	default:
		m.closed = true
		return fail(CodeProtocolUnsupported)
	}
	if m.protocol != "" && m.protocol != version {
		m.closed = true
		return fail(CodeProtocolConflict)
	}
	m.protocol = version
	return nil
}

// AcceptLegacyProtocols makes this monitor also accept the legacy versions
// [ProtocolVersion20241105] and [ProtocolVersion20250326], which servers
// built before 2025-06-18 still negotiate (purra-mcp 1.0.0 refuses them).
// Call it before Attach or Connect; it cannot be undone and concerns this
// monitor only. Discovery and Run behave as under the other versions, and
// the negotiated version is part of every catalog's snapshot and digest.
func (m *CatalogMonitor) AcceptLegacyProtocols() {
	m.mu.Lock()
	m.legacy = true
	m.mu.Unlock()
}

// OfferedVersion returns the protocol version the session's handshake
// produced, as Attach (or Connect) last offered it to the monitor, whether
// or not it was accepted: after [ErrProtocolUnsupported] it names
// the version the server negotiated, so the host can tell which one it
// offered. It returns "" before any version was given. A version go-sdk
// itself refuses never reaches the monitor (client.Connect then fails with
// go-sdk's own error), so it is not reported here.
func (m *CatalogMonitor) OfferedVersion() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offered
}

// onNotification feeds a server notification by method name:
// "notifications/tools/list_changed" advances the revision, so every catalog
// discovered before it is stale; other methods are ignored. It never blocks.
func (m *CatalogMonitor) onNotification(method string) {
	if method != methodToolListChanged {
		return
	}
	m.mu.Lock()
	m.revision++
	m.mu.Unlock()
}

// close marks the session ended: every later Check fails
// [ErrConnectionClosed]. It is idempotent and does not close the session.
func (m *CatalogMonitor) close() { m.shutdown(false) }

// Revision returns the number of tool list changes seen so far.
func (m *CatalogMonitor) Revision() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revision
}

// ProtocolVersion returns the accepted protocol version, or "" when none.
func (m *CatalogMonitor) ProtocolVersion() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.protocol
}

// Check reports whether a catalog discovered at revision is still current. It
// fails, in this order, [ErrConnectionClosed] when the monitor is closed,
// [ErrNotInitialized] when no version was accepted and [ErrCatalogStale] when
// the tool list changed since revision.
func (m *CatalogMonitor) Check(revision uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return fail(CodeConnectionClosed)
	case m.protocol == "":
		return fail(CodeNotInitialized)
	case revision != m.revision:
		return fail(CodeCatalogStale)
	}
	return nil
}

// noteTransport records the kind of the transport Transport wraps, for
// Events; a later call (a refused second connection) changes nothing.
func (m *CatalogMonitor) noteTransport(t mcp.Transport) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kind == "" {
		m.kind = transportKind(t)
	}
}

// transport returns the transport kind for Events ("" when unknown).
func (m *CatalogMonitor) transport() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kind
}

// attachedElsewhere reports whether the monitor is attached to a session other than s.
func (m *CatalogMonitor) attachedElsewhere(s *mcp.ClientSession) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.session != nil && m.session != s
}

// sever closes the monitor and severs its session (see Transport): a
// request's write was abandoned.
func (m *CatalogMonitor) sever() { m.shutdown(true) }

// shutdown is the one way a monitor ends, for close and sever alike: the
// monitor is marked closed (every later Check fails, and so does every
// request), its caches are emptied and, with severSession, its bounding
// layer severs the session (the connection's reads end and its transport
// is closed once).
func (m *CatalogMonitor) shutdown(severSession bool) {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.schemas.Close()
	m.digests.Close()
	if severSession {
		m.bounding.Sever()
	}
}
