package purramcp

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport wraps t, the host's transport, for client.Connect: the session
// it connects is bounded by this monitor, which Attach then requires.
//
//	session, err := client.Connect(ctx, monitor.Transport(transport), nil)
//
// Every incoming message is counted (as Limits counts it; duplicate and
// unknown members count too) before go-sdk decodes it. An answer to a
// tools/list or tools/call of DiscoverTools or Run over its request's limit
// plus 4 KiB never reaches go-sdk's decoder: the request fails
// mcp_catalog_limit_exceeded (the MaxCatalogBytes left in the discovery) or
// mcp_result_too_large (MaxResultBytes), whatever the answer held; so does
// a page with more tools than MaxTools still allows, or a result with more
// content blocks than MaxContentBlocks, each plus 64. Answers to other
// requests are capped at 1 MiB plus 4 KiB; params over 68 KiB of a request
// or notification from the server are dropped (a tools/list_changed still
// counts). Over streamable HTTP the count runs on the bytes as they arrive
// (a JSON body, the SSE events of its POST and of the GET that resumes
// it, every byte of a data line) and rejects the answer once it passes; an
// event that answers no request is dropped past 1 MiB plus 4 KiB. Over an
// mcp.IOTransport the host's Reader is counted one JSON value at a time,
// whatever its bytes. Over stdio and in-memory transports go-sdk still reads
// each line whole up to mcp.DefaultMaxLineLength (16 MiB) first.
//
// The goroutine contract of every request of DiscoverTools and Run: over
// go-sdk's in-memory and command transports and streamable HTTP through
// net/http's own transport (no OAuthHandler), where the layer can end a
// blocked write, a request runs on its caller's goroutine; over any other
// transport, or without this layer, on a goroutine of its own that the
// caller abandons at its deadline (Limits.Timeout) or when its ctx ends.
// Through this layer, a write still in progress at the deadline severs the
// session: the monitor closes (later requests fail mcp_connection_closed
// at once), reads end and the transport is closed once, by one goroutine
// that ends when its Close returns (mcp.CommandTransport: stdin closed, the
// child stopped within its TerminateDuration); the blocked write then fails
// and session.Close returns promptly. A request on its caller's goroutine
// returns at the deadline (ErrCanceled for a caller that gave up earlier);
// an abandoned one leaves its goroutine blocked until the write fails (without
// this layer, at the latest when the session closes). While a request
// abandoned more than 20 ms ago still runs, every new request of the
// session fails mcp_transport_error at once, without a goroutine, so a
// session has at most one abandoned goroutine. No other goroutine outlives
// a call.
//
// The returned transport connects at most one session. An
// *mcp.StreamableClientTransport or *mcp.IOTransport is copied (its HTTP
// client or Reader wrapped), never modified.
func (m *CatalogMonitor) Transport(t mcp.Transport) mcp.Transport {
	m.noteTransport(t)
	return m.bounding.Transport(t, (*monitorOwner)(m))
}

// monitorOwner is a monitor as its bounding layer's owner: the layer
// severs it when a write outlives its request.
type monitorOwner CatalogMonitor

// Sever closes the monitor and severs its session.
func (o *monitorOwner) Sever() { (*CatalogMonitor)(o).sever() }

// Progress passes a progress notification, as it is read, to the call
// under WithProgress whose token it names (progress.go).
func (o *monitorOwner) Progress(params json.RawMessage) { o.progress.deliverParams(params) }

// Unauthorized reports whether a host transport's error is
// [ErrUnauthorized]: the request was refused for want of a valid token,
// is not resent, and the session stands.
func (o *monitorOwner) Unauthorized(err error) bool { return errors.Is(err, ErrUnauthorized) }
