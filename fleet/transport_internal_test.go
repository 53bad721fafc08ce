package fleet

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/egress"
)

// TestHTTPTransport_NoRedirectFromHTTPSToHTTP: an https upstream answers
// 307 to plain http (another loopback port). The session's client refuses
// the hop (mcp_egress_refused, rule downgrade): the http peer receives
// nothing, and the config's header reached only the https origin.
func TestHTTPTransport_NoRedirectFromHTTPSToHTTP(t *testing.T) {
	var plainHits, tlsHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		plainHits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer plain.Close()
	var keyed atomic.Int32
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tlsHits.Add(1)
		if r.Header.Get("X-Api-Key") == "s3cret-key" {
			keyed.Add(1)
		}
		w.Header().Set("Location", plain.URL+r.URL.Path)
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	defer upstream.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sc := ServerConfig{URL: upstream.URL + "/mcp", Headers: map[string]string{"X-Api-Key": "s3cret-key"}}
	base := upstream.Client().Transport.(*http.Transport).Clone() // trusts the test certificate
	tr, release, err := httpTransport(ctx, sc, base, nil)
	if err != nil {
		t.Fatalf("httpTransport: %v", err)
	}
	defer release()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	session, err := client.Connect(ctx, tr, nil)
	if session != nil {
		_ = session.Close()
		t.Fatalf("connected through a redirect to http")
	}
	var e *egress.Error
	if !errors.As(err, &e) || e.Rule != egress.RuleDowngrade {
		t.Errorf("Connect = %v, want an egress refusal by rule downgrade", err)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeEgressRefused {
		t.Errorf("CodeOf = %q, want %q", got, purramcp.CodeEgressRefused)
	}
	if n := plainHits.Load(); n != 0 {
		t.Errorf("the http peer received %d requests, want 0", n)
	}
	if tlsHits.Load() == 0 || keyed.Load() != tlsHits.Load() {
		t.Errorf("the https upstream received %d requests, %d with the key; want every one with it", tlsHits.Load(), keyed.Load())
	}
}
