// Package bounding is the bounding layer of a CatalogMonitor's session and
// its request path.
//
// The layer wraps the host's transport (Session.Transport) so that no
// incoming message larger than the limits in force reaches go-sdk's
// decoders, and so that a session whose write to a peer that stopped
// reading was abandoned at a deadline is severed instead of wedging the
// host. The request path (Request) runs each tools/list page and
// tools/call under the adapter's deadline with the answer's cap in its
// ctx, and states the goroutine contract.
//
// A Session's failures are *Failure values carrying the root package's
// error codes, and ErrCanceled; the root package translates them into its
// own errors in one place.
package bounding

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/codes"
)

// The codes the layer and the request path fail with, from the adapter's
// one table of codes.
const (
	CodeCatalogLimitExceeded = codes.CatalogLimitExceeded
	CodeResultTooLarge       = codes.ResultTooLarge
	CodeTimeout              = codes.Timeout
	CodeTransportError       = codes.TransportError
	CodeProtocolError        = codes.ProtocolError
	CodeResultInvalid        = codes.ResultInvalid
	CodeUnauthorized         = codes.Unauthorized
)

// unauthorized is a host transport's error that its Owner recognized as
// a request the server refused for want of a valid token (the public
// ErrUnauthorized): it is the layer's mcp_unauthorized failure and keeps
// the host's error in its chain. MapError passes its code on, and the
// session is neither lost nor severed by it. It is the only failure a
// transport can hand up; any other error keeps its usual mapping.
type unauthorized struct{ host error }

func (e *unauthorized) Error() string   { return e.host.Error() }
func (e *unauthorized) Unwrap() []error { return []error{fail(CodeUnauthorized), e.host} }

// isUnauthorized reports whether err carries the layer's unauthorized
// failure.
func isUnauthorized(err error) bool {
	var f *Failure
	return errors.As(err, &f) && f.Code == CodeUnauthorized
}

// MaxCatalogBytes and MaxResultBytes are the largest values a host may set
// for Limits.MaxCatalogBytes and Limits.MaxResultBytes (their defaults):
// they bound the frames no adapter request budgets.
const (
	MaxCatalogBytes = 1_048_576
	MaxResultBytes  = 65_536
)

// Failure is a request's failure with one of the codes above.
type Failure struct {
	Code string
	// Items is set when the bounding layer rejected the answer for holding
	// more elements than its cap's items (tools for a tools/list page)
	// rather than for its size.
	Items bool
}

func (f *Failure) Error() string { return "purramcp: " + f.Code }

// Is reports whether target is a *Failure with the same code.
func (f *Failure) Is(target error) bool {
	t, ok := target.(*Failure)
	return ok && t.Code == f.Code
}

// ErrCanceled is a request's failure when its caller's ctx ended first.
var ErrCanceled = errors.New("purramcp: canceled")

// fail returns the failure with code.
func fail(code string) error { return &Failure{Code: code} }

// An Owner is the monitor a Session belongs to.
type Owner interface {
	// Sever closes the monitor, then severs the session (Session.Sever): a
	// request's write was abandoned at the adapter's deadline.
	Sever()
	// Progress receives the params of every notifications/progress the
	// server sends (within the params bound; larger ones are dropped), on
	// the session's reading goroutine, in the order the messages arrive:
	// before the answer of any request the notification preceded is seen.
	// It must return quickly.
	Progress(params json.RawMessage)
	// Unauthorized reports whether err, returned by the host's HTTP
	// transport below the layer, reports a request the server refused
	// for want of a valid token.
	Unauthorized(err error) bool
}

// A Session is one monitor's request path and, once the monitor's
// Transport connects, its bounding layer. Its zero value is ready: no layer,
// no abandoned request.
type Session struct {
	mu    sync.Mutex
	layer *layer // set when Transport's transport starts connecting
	// abandoned are the requests whose callers gave up while they still
	// ran on a goroutine of their own (Request).
	abandoned abandonedRequests
}

// LayerState is where a Session's bounding layer is.
type LayerState int

const (
	// NoLayer: the monitor's Transport connected no session (the session,
	// if any, was connected without the layer).
	NoLayer LayerState = iota
	// LayerConnecting: Transport's transport is connecting, or its
	// connection failed.
	LayerConnecting
	// LayerConnected: the session is connected through the layer.
	LayerConnected
)

// Layer reports where the session's bounding layer is.
func (s *Session) Layer() LayerState {
	l := s.current()
	switch {
	case l == nil:
		return NoLayer
	case l.connected.Load():
		return LayerConnected
	default:
		return LayerConnecting
	}
}

// sessionMarkKey is the context key of WithSession.
type sessionMarkKey struct{}

// WithSession returns ctx marked with cs, the session sending a request
// under ctx. The first marked request a layer carries names the session
// the layer connected (Carries); the layer reads the mark from the ctx
// go-sdk writes the request with.
func WithSession(ctx context.Context, cs *mcp.ClientSession) context.Context {
	return context.WithValue(ctx, sessionMarkKey{}, cs)
}

// Carries reports whether cs is the session the layer connected: the
// session of the first marked request it carried. It is false without a
// layer and for a nil cs.
func (s *Session) Carries(cs *mcp.ClientSession) bool {
	l := s.current()
	return cs != nil && l != nil && l.carried.Load() == cs
}

// current returns the session's layer, nil when none.
func (s *Session) current() *layer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.layer
}

// claim records l as the session's layer; false when it already has one
// (a monitor's transport connects one session).
func (s *Session) claim(l *layer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.layer != nil {
		return false
	}
	s.layer = l
	return true
}

// lost reports whether the layer knows the session's HTTP connection to be
// gone (see layerRoundTripper).
func (s *Session) lost() bool {
	l := s.current()
	return l != nil && l.lost.Load()
}

// Inline reports whether requests run on their caller's goroutine: the
// session is connected through the layer and its blocked writes can be
// ended (see Request).
func (s *Session) Inline() bool {
	l := s.current()
	return l != nil && l.inline.Load()
}

// Sever ends a session whose write was abandoned: the connection's reads
// end and its transport is closed once, on a goroutine of its own that
// ends when the transport's Close returns. It does nothing without a layer
// or over streamable HTTP (where a write ends with its ctx).
func (s *Session) Sever() {
	if l := s.current(); l != nil && l.conn != nil {
		l.conn.sever()
	}
}
