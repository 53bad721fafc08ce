// Package wire measures and writes what crosses the wire of a session,
// in time and memory bounded by the limit rather than by what the peer
// sent: the size of a tools/list page and of a tools/call result as
// JavaScript's JSON.stringify would count the decoded value (size.go), an
// upper bound of a result's size that never falls below the exact one
// (sizebound.go), and the JSON text of validated arguments exactly as
// encoding/json would write them (json.go). Discovery and Run use it; nothing in it keeps
// state between calls.
package wire
