package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/fleet"
)

// admittedHeader carries, from admitHTTP to the call's handler, the ticket
// of a call admitted before its request reached the session. admitHTTP
// deletes it from every request first, so only the gateway sets it.
const admittedHeader = "Purramcp-Admitted"

// retryAfter is the Retry-After of a 429, in seconds: a slot frees as soon
// as any call ends, so a client may try again soon.
const retryAfter = 1

// tickets are the slots admitHTTP took for requests on their way to a
// session, each under a name no client can guess.
type tickets struct {
	prefix string // random, per gateway
	n      atomic.Uint64
	m      sync.Map // name -> func() (the slot's release)
}

func (t *tickets) init() { t.prefix = rand.Text() + "-" }

// put records release under a fresh name and returns the name.
func (t *tickets) put(release func()) string {
	name := t.prefix + strconv.FormatUint(t.n.Add(1), 10)
	t.m.Store(name, release)
	return name
}

// take returns the release of the ticket extra's request carries and
// forgets it, or nil when there is none.
func (t *tickets) take(extra *mcp.RequestExtra) func() {
	if extra == nil || extra.Header == nil {
		return nil
	}
	return t.drop(extra.Header.Get(admittedHeader))
}

// drop forgets the ticket name and returns its release, nil when none.
func (t *tickets) drop(name string) func() {
	if name == "" {
		return nil
	}
	if v, ok := t.m.LoadAndDelete(name); ok {
		return v.(func())
	}
	return nil
}

// admitHTTP admits a POST that is one tools/call of a listed tool before it
// reaches its session, so that a refusal is an HTTP answer: 429 with
// Retry-After, audited as the call's refusal, nothing sent upstream. An
// admitted request carries its slot to the handler as a ticket; a slot the
// handler did not take (the request never reached it) is given back when
// the request ends. Anything else goes on as it came, and is admitted in
// the session. The body is read at most to the cap the HTTP checks set.
func (g *Gateway) admitHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(admittedHeader)
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" || len(msg.ID) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		info := auth.TokenInfoFromContext(ctx)
		tool, ok := (*g.defs.Load())[msg.Params.Name]
		if !ok || !g.visible(info, msg.Params.Name) {
			// go-sdk answers an unknown tool; the session answers a hidden
			// one the same way (filterList), never a 429 that would tell.
			next.ServeHTTP(w, r)
			return
		}
		// Without a session ID the request is a session of its own.
		k := admitKeyOf(info, r.Header.Get("Mcp-Session-Id"), new(byte), tool.upstream)
		if p, ok := principal(info); ok {
			ctx = fleet.WithPrincipal(ctx, p)
		}
		release, code := g.admission.acquire(ctx, k)
		if code != "" {
			// The name is a listed tool's: the audit line carries no client text.
			g.refuse(ctx, msg.Params.Name, tool.upstream, code)
			if code == CodeCanceled {
				return // the client is gone
			}
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			http.Error(w, "Too Many Requests: "+code, http.StatusTooManyRequests)
			return
		}
		name := g.tickets.put(release)
		defer func() {
			if release := g.tickets.drop(name); release != nil {
				release()
			}
		}()
		r.Header.Set(admittedHeader, name)
		next.ServeHTTP(w, r)
	})
}
