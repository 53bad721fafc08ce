package purramcp

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport wraps t, the host's transport, for client.Connect: the session
// it connects is bounded by this monitor, which Attach then requires.
//
//	session, err := client.Connect(ctx, monitor.Transport(transport), nil)
//
// Every incoming message is checked before go-sdk decodes it. The answer to a
// tools/list or tools/call request of DiscoverTools or Run whose JSON
// (counted as Limits counts it, before decoding; duplicate and unknown
// members count too) is over the request's limit plus 4 KiB never reaches
// go-sdk's decoder: the request fails mcp_catalog_limit_exceeded (against
// the MaxCatalogBytes still left in the discovery) or mcp_result_too_large
// (MaxResultBytes), whatever the answer held; so does an answer whose page
// holds more tools than MaxTools still allows, or whose result holds more
// content blocks than MaxContentBlocks, each plus 64 (counted before
// decoding too). Answers to other requests are checked against 1 MiB plus
// 4 KiB; params over 68 KiB of a request or notification from the server
// are dropped (a tools/list_changed still counts). Over streamable HTTP the
// session's HTTP client checks each answer (a JSON body, the SSE events of
// its POST and of the GET that resumes that stream) against the same
// budgets as its bytes arrive, every byte of an SSE data line however long
// or slow, and rejects it as soon as the count passes; an event of a stream
// that answers no request is dropped past 1 MiB plus 4 KiB. Over an
// mcp.IOTransport the host's Reader is read through the same count, one
// JSON value at a time, before go-sdk's decoder reads it: an answer over
// its cap is rejected whatever its bytes (invalid JSON, invalid UTF-8, NUL
// included).
//
// Over go-sdk's in-memory and command transports and streamable HTTP
// (through net/http's own transport, with no OAuthHandler), where the layer
// can end a blocked write (closing the connection ends it; an HTTP write
// ends with its ctx), every request runs on its caller's goroutine, with no
// handoff; over any other transport (an IOTransport on the host's streams, a
// host's own transport or RoundTripper, an OAuth flow) it runs on a
// goroutine of its own that the caller can abandon. When a request's deadline (Limits.Timeout)
// or its caller's ctx ends while the transport is still writing it (a peer
// that stopped reading), and the write is still in progress at the deadline,
// the session is severed: the monitor closes (later requests fail
// mcp_connection_closed at once, without a goroutine), the connection's
// reads end and the transport is closed once, in one goroutine that ends
// when the transport's Close returns (for mcp.CommandTransport: stdin
// closed, the child stopped within its TerminateDuration); the blocked write
// then fails and session.Close returns promptly. A request on its caller's
// goroutine returns then, at the deadline (a caller that gave up earlier
// gets ErrCanceled then, or as soon as a write that was about to finish
// does); one on a goroutine of its own returns at once and leaves that
// goroutine blocked until the write fails.
//
// The returned transport connects at most one session. An
// *mcp.StreamableClientTransport is copied (its HTTP client wrapped), never
// modified; so is an *mcp.IOTransport (its Reader wrapped). Over stdio and
// in-memory transports go-sdk still reads each line whole up to its own cap
// (mcp.DefaultMaxLineLength, 16 MiB; past it go-sdk ends the session)
// before the layer sees it.
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
