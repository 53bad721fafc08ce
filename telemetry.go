package purramcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport kinds an [Event] reports in its Transport field: how the
// monitor's session reaches its server, as [CatalogMonitor.Transport] (or
// Connect) saw the go-sdk transport it wrapped. "" means unknown: a session
// connected without the monitor's Transport, or a transport of another type.
const (
	// TransportStdio is a child process's standard streams or another byte
	// stream: *mcp.CommandTransport, *mcp.StdioTransport, *mcp.IOTransport.
	TransportStdio = "stdio"
	// TransportHTTP is MCP over HTTP: *mcp.StreamableClientTransport or
	// *mcp.SSEClientTransport.
	TransportHTTP = "http"
	// TransportMemory is an in-process pipe: *mcp.InMemoryTransport.
	TransportMemory = "memory"
)

// transportKind classifies a go-sdk client transport for Event.Transport.
func transportKind(t mcp.Transport) string {
	switch t.(type) {
	case *mcp.CommandTransport, *mcp.StdioTransport, *mcp.IOTransport:
		return TransportStdio
	case *mcp.StreamableClientTransport, *mcp.SSEClientTransport:
		return TransportHTTP
	case *mcp.InMemoryTransport:
		return TransportMemory
	}
	return ""
}

// A TracePropagator writes the trace context of ctx into carrier, as W3C
// Trace Context headers ("traceparent", "tracestate"), for
// [DiscoveryOptions.TracePropagator]. It must not block, keep carrier or
// panic; it must be safe for concurrent use. purramcp stays free of any
// tracing library: an OpenTelemetry propagator is adapted to it in the
// purraotel integration.
type TracePropagator interface {
	Inject(ctx context.Context, carrier map[string]string)
}

// Bounds on what a TracePropagator may put on the wire (W3C Trace Context,
// level 1): traceparent is 55 bytes in its version 00 form and at most 512
// here for later versions; tracestate is at most 512 bytes.
const (
	maxTraceparentBytes = 512
	maxTracestateBytes  = 512
)

// traceMeta returns the _meta of one tools/call under p: the traceparent
// and tracestate p wrote for ctx, each only when it is well-formed and
// within its bound (tracestate only beside a traceparent), or nil when there
// is nothing to send, so the request is then byte for byte as without a
// propagator. Every other key p wrote is dropped.
func traceMeta(ctx context.Context, p TracePropagator) mcp.Meta {
	if p == nil {
		return nil
	}
	carrier := map[string]string{}
	p.Inject(ctx, carrier)
	parent := carrier["traceparent"]
	if !validTraceparent(parent) {
		return nil
	}
	meta := mcp.Meta{"traceparent": parent}
	if state := carrier["tracestate"]; state != "" && len(state) <= maxTracestateBytes && printableASCII(state) {
		meta["tracestate"] = state
	}
	return meta
}

// validTraceparent reports whether s has the W3C traceparent shape:
// version-traceid-parentid-flags, 2-32-16-2 lowercase hex digits, a
// version other than ff, a trace id and a parent id not all zero, and for a
// version other than 00 possibly more "-"-separated data (within
// maxTraceparentBytes).
func validTraceparent(s string) bool {
	if len(s) < 55 || len(s) > maxTraceparentBytes || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	if !isLowerHex(s[0:2]) || s[0:2] == "ff" || !isLowerHex(s[3:35]) || !isLowerHex(s[36:52]) || !isLowerHex(s[53:55]) {
		return false
	}
	if allZero(s[3:35]) || allZero(s[36:52]) {
		return false
	}
	if len(s) == 55 {
		return true
	}
	return s[0:2] != "00" && s[55] == '-' && printableASCII(s[55:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// printableASCII reports whether s is only bytes 0x20 to 0x7e.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
