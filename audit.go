package purramcp

import (
	"context"
	"log/slog"
	"time"
)

// An Event is one audit record given to [DiscoveryOptions.Observer]: one per
// discovery attempt (Kind [EventDiscover]) and one per Run of a catalog's
// registrations (Kind [EventCall]). It never carries payloads or remote text: no
// arguments, results, descriptions, schemas, error messages or denial
// reasons. ServerID is the server id given to DiscoverTools ("" when it is
// not a valid one); RemoteName is the bound remote name; "host_failure" is
// [CodeHostFailure]; Duration is the wall time of the attempt or of the Run.
// Fields that do not apply to the Kind are zero.
//
// ProtocolVersion, Transport and Start serve tracing: the version the
// monitor accepted ("" before one), the transport kind ([TransportStdio], [TransportHTTP], [TransportMemory], or "" when
// unknown) and the wall-clock start of the attempt or the Run (Start plus
// Duration is its end).
type Event struct {
	Kind           string        // EventDiscover or EventCall
	ServerID       string        // the serverID given to DiscoverTools
	RevisionDigest string        // "" when a discovery failed before its digest (an unapproved one carries it)
	LocalName      string        // calls
	RemoteName     string        // calls
	CallID, RunID  string        // calls, from the ToolContext
	Code           string        // "" on success, else the mcp_* code, EventCodeCanceled, or CodeHostFailure (a ScopeFunc's own error)
	Attempt        int           // discovery: 1, 2, ... (see StaleRetries); calls: 0
	Pages          int           // discovery: tools/list requests sent
	Requests       int           // calls: tools/call requests sent (0 or 1)
	ArgumentBytes  int           // calls: length of the argument text received
	ResultBytes    int           // calls: the measured result size, 0 when none arrived
	Duration       time.Duration // wall time of the attempt or the Run

	ProtocolVersion string    // the monitor's accepted protocol version, "" when none
	Transport       string    // TransportStdio, TransportHTTP, TransportMemory, or "" when unknown
	Start           time.Time // when the attempt or the Run started
}

// The values of [Event.Kind]. The field stays a plain string (an event
// compares equal to its logged text); compare it with these.
const (
	EventDiscover  = "discover"   // one discovery attempt
	EventCall      = "call"       // one Run of a registration
	EventCallStart = "call_start" // the start of a Run, given to DiscoveryOptions.CallStart only
)

// observeRefusal reports a DiscoverTools call refused before any request as
// its attempt 1.
func observeRefusal(ctx context.Context, observer func(context.Context, Event), m *CatalogMonitor,
	serverID string, err error, start time.Time) {
	if observer == nil {
		return
	}
	if !remoteNamePattern.MatchString(serverID) {
		serverID = ""
	}
	e := Event{Kind: EventDiscover, ServerID: serverID, Code: OutcomeCode(ToolResult{}, err), Attempt: 1,
		Duration: time.Since(start), Start: start}
	if m != nil {
		e.ProtocolVersion, e.Transport = m.ProtocolVersion(), m.transport()
	}
	observer(ctx, e)
}

// SlogObserver returns an Observer for [DiscoveryOptions.Observer] that
// writes one record per Event to logger (slog.Default() at each event when
// logger is nil): message "purramcp.discover" or "purramcp.call"
// ("purramcp." followed by the Kind), level Info when Code is "" and Warn
// otherwise, and one attribute per non-zero field, in field order, named
// kind, serverId, revisionDigest, localName, remoteName, callId, runId,
// code, attempt, pages, requests, argumentBytes, resultBytes, duration,
// protocolVersion and transport. Start is not an attribute: the record
// carries its own time.
func SlogObserver(logger *slog.Logger) func(context.Context, Event) {
	return func(ctx context.Context, e Event) {
		l := logger
		if l == nil {
			l = slog.Default()
		}
		level := slog.LevelInfo
		if e.Code != "" {
			level = slog.LevelWarn
		}
		attrs := make([]slog.Attr, 0, 16)
		for _, s := range []struct{ key, value string }{
			{"kind", e.Kind}, {"serverId", e.ServerID}, {"revisionDigest", e.RevisionDigest},
			{"localName", e.LocalName}, {"remoteName", e.RemoteName}, {"callId", e.CallID}, {"runId", e.RunID},
			{"code", e.Code},
		} {
			if s.value != "" {
				attrs = append(attrs, slog.String(s.key, s.value))
			}
		}
		for _, n := range []struct {
			key   string
			value int
		}{
			{"attempt", e.Attempt}, {"pages", e.Pages}, {"requests", e.Requests},
			{"argumentBytes", e.ArgumentBytes}, {"resultBytes", e.ResultBytes},
		} {
			if n.value != 0 {
				attrs = append(attrs, slog.Int(n.key, n.value))
			}
		}
		if e.Duration != 0 {
			attrs = append(attrs, slog.Duration("duration", e.Duration))
		}
		if e.ProtocolVersion != "" {
			attrs = append(attrs, slog.String("protocolVersion", e.ProtocolVersion))
		}
		if e.Transport != "" {
			attrs = append(attrs, slog.String("transport", e.Transport))
		}
		l.LogAttrs(ctx, level, "purramcp."+e.Kind, attrs...)
	}
}
