// Package vendortest plays a model vendor's HTTP API for the integrations'
// tests: each request is answered with the next scripted reply, and every
// request's path and body is recorded, so that a test can check what the
// vendor was sent. Only tests import it.
package vendortest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// An API is a scripted vendor API on 127.0.0.1, closed when its test ends.
type API struct {
	srv        *httptest.Server
	prefix     string // the path every scripted request has
	unscripted string // the 400 body of a request with no reply left (or off prefix)

	mu      sync.Mutex
	replies []string
	paths   []string
	bodies  []string
}

// New starts an API that answers requests whose path starts with prefix
// with replies, in order, as JSON. Any other request, and every request
// after the replies ran out, gets status 400 with the body unscripted (the
// vendor's own error shape, so that its SDK reports an API error).
func New(t testing.TB, prefix, unscripted string, replies ...string) *API {
	t.Helper()
	a := &API{prefix: prefix, unscripted: unscripted, replies: replies}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.paths = append(a.paths, r.URL.Path)
	a.bodies = append(a.bodies, string(body))
	var reply string
	if len(a.replies) > 0 && strings.HasPrefix(r.URL.Path, a.prefix) {
		reply, a.replies = a.replies[0], a.replies[1:]
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if reply == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, a.unscripted)
		return
	}
	_, _ = io.WriteString(w, reply)
}

// URL is the API's base URL.
func (a *API) URL() string { return a.srv.URL }

// HTTPClient returns an HTTP client that reaches the API.
func (a *API) HTTPClient() *http.Client { return a.srv.Client() }

// Bodies returns every request body received so far, in order.
func (a *API) Bodies() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bodies...)
}

// Paths returns every request path received so far, in order.
func (a *API) Paths() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.paths...)
}

// NoCanary fails t when any of bodies holds canary: remote or host error
// text must never reach the vendor.
func NoCanary(t testing.TB, canary string, bodies []string) {
	t.Helper()
	for i, b := range bodies {
		if strings.Contains(b, canary) {
			t.Fatalf("request %d to the vendor carries remote or host error text: %s", i, b)
		}
	}
}

// Decode decodes a request body as a JSON object, failing t otherwise.
func Decode(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, body)
	}
	return m
}
