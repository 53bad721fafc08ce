package gateway

import (
	"net/http"

	"purra.dev/purramcp"
)

// byEra serves each /mcp request with the handler its protocol era asks
// for, chosen by the request itself: one that names a session
// (Mcp-Session-Id) goes to stateful, the session's handler; one whose
// Mcp-Protocol-Version header is 2026-07-28 or later (every request of
// that era carries it: server/discover, calls, subscriptions/listen) goes
// to stateless; everything else (initialize, and a legacy client's other
// requests) to stateful, which answers as it always did. Both handlers
// serve the same server, so legacy sessions and modern requests see the
// same tools.
func byEra(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if modernRequest(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// modernRequest reports whether r is a request of the stateless era: no
// session, and a protocol version header naming 2026-07-28 or later (the
// versions compare as their dates do).
func modernRequest(r *http.Request) bool {
	return r.Header.Get("Mcp-Session-Id") == "" &&
		r.Header.Get("Mcp-Protocol-Version") >= purramcp.ProtocolVersion20260728
}
