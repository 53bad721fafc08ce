package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Default caps on open stateful sessions; see [HTTPOptions].
const (
	defaultMaxSessions     = 1024
	defaultMaxUserSessions = 16
)

// A sessionLimiter caps the stateful sessions open at once, per user (the
// verified token's subject) and over all. A request that could open a
// session (a POST without Mcp-Session-Id whose body is not one JSON-RPC
// message other than initialize) takes a reservation first; when
// the answer names a session, the reservation becomes that session, which
// counts until the server no longer holds it. It is safe for concurrent
// use.
type sessionLimiter struct {
	server           *mcp.Server
	perUser, overall int

	// mu guards everything below.
	mu       sync.Mutex
	owners   map[string]string // open session ID -> its user
	perOwner map[string]int    // sessions open and reserved, by user
	reserved int               // reservations over all users
}

func newSessionLimiter(server *mcp.Server, perUser, overall int) *sessionLimiter {
	return &sessionLimiter{server: server, perUser: perUser, overall: overall,
		owners: map[string]string{}, perOwner: map[string]int{}}
}

// wrap answers 429 with Retry-After to a request that could open a session
// while its user or the gateway is at its cap: nothing of it reaches next,
// so nothing is kept. A caller without a verified subject (a static token,
// no token) is held to the overall cap only.
func (l *sessionLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // bounded by the body cap
		if err != nil {
			http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "initialize" {
			next.ServeHTTP(w, r) // opens no session
			return
		}
		user := ""
		if info := auth.TokenInfoFromContext(r.Context()); info != nil {
			user = info.UserID
		}
		if !l.reserve(user) {
			w.Header().Set("Retry-After", "60")
			http.Error(w, "Too Many Requests: too many open sessions", http.StatusTooManyRequests)
			return
		}
		defer func() { l.settle(user, w.Header().Get("Mcp-Session-Id")) }()
		next.ServeHTTP(w, r)
	})
}

// reserve takes a reservation for user, or reports false at a cap.
func (l *sessionLimiter) reserve(user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetClosed()
	if len(l.owners)+l.reserved >= l.overall || (user != "" && l.perOwner[user] >= l.perUser) {
		return false
	}
	l.reserved++
	l.perOwner[user]++
	return true
}

// settle ends user's reservation: it becomes the session id names when
// the server holds it, else it is given back.
func (l *sessionLimiter) settle(user, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved--
	if _, dup := l.owners[id]; id != "" && !dup && l.open(id) {
		l.owners[id] = user
		return
	}
	l.release(user)
}

// forgetClosed drops the sessions the server no longer holds. The caller
// holds mu.
func (l *sessionLimiter) forgetClosed() {
	if len(l.owners) == 0 {
		return
	}
	live := map[string]bool{}
	for ss := range l.server.Sessions() {
		live[ss.ID()] = true
	}
	for id, user := range l.owners {
		if !live[id] {
			delete(l.owners, id)
			l.release(user)
		}
	}
}

// open reports whether the server holds the session id.
func (l *sessionLimiter) open(id string) bool {
	for ss := range l.server.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// release gives back one of user's sessions. The caller holds mu.
func (l *sessionLimiter) release(user string) {
	if l.perOwner[user]--; l.perOwner[user] <= 0 {
		delete(l.perOwner, user)
	}
}
