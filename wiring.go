package purramcp

import (
	"context"
	"reflect"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The wiring check: Attach and Connect accept a session only when its
// client carries this monitor's ClientOptions, checked on the client itself
// rather than on a record that ClientOptions was called (a host may call it
// and then build its client with other options: go-sdk would then re-send
// tools/call for inputRequests and no list change would count). go-sdk
// exposes neither a session's client nor a client's options, so the check
// reads them (go-sdk v1.8.0's ClientSession.client and Client.opts) without
// calling or changing anything: the client's ToolListChangedHandler must be
// one that this monitor's ClientOptions returned, and its multi-round-trip
// retries must be disabled and its Capabilities set, as ClientOptions left
// them. Any other shape, a go-sdk whose fields differ included, fails the
// check (mcp_binding_invalid), never passes it.

// funcIdentity is the identity of a func value: the closure it points to.
func funcIdentity(fn *func(ctx context.Context, req *mcp.ToolListChangedRequest)) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(fn))
}

// clientOf returns session's client as an addressable struct, or false.
func clientOf(session *mcp.ClientSession) (reflect.Value, bool) {
	c := reflect.ValueOf(session).Elem().FieldByName("client")
	if !c.IsValid() || c.Kind() != reflect.Pointer || c.IsNil() || c.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	return c.Elem(), true
}

// wiredBy reports whether client, an addressable mcp.Client, carries
// options that ClientOptions made with one of handlers (their
// ToolListChangedHandler identities).
func wiredBy(client reflect.Value, handlers []unsafe.Pointer) bool {
	opts := client.FieldByName("opts")
	if !opts.IsValid() || opts.Type() != reflect.TypeFor[mcp.ClientOptions]() {
		return false
	}
	h := opts.FieldByName("ToolListChangedHandler")
	mrt := opts.FieldByName("MultiRoundTrip")
	if h.IsNil() || mrt.IsNil() || !mrt.Elem().FieldByName("Disabled").Bool() || opts.FieldByName("Capabilities").IsNil() {
		return false
	}
	// h is addressable (a field of the client the pointer reaches) and
	// only read.
	got := *(*unsafe.Pointer)(unsafe.Pointer(h.UnsafeAddr()))
	for _, want := range handlers {
		if got == want {
			return true
		}
	}
	return false
}
