package purramcp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// refusingTransport is a host's own OAuth-aware http.RoundTripper: while
// refuse is set it answers every tools/call with err (as it would after a
// 401 it could not fix), without sending it; everything else goes on.
type refusingTransport struct {
	inner   http.RoundTripper
	err     error
	refuse  atomic.Bool
	refused atomic.Int32
}

func (r *refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.refuse.Load() && req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			r.refused.Add(1)
			return nil, r.err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r.inner.RoundTrip(req)
}

// TestRun_HostTransportUnauthorized: a host's own RoundTripper that
// returns an error matching purramcp.ErrUnauthorized (an *Error with
// CodeUnauthorized, or a wrapped sentinel) makes the call end
// mcp_unauthorized: the request is not resent, the server never sees it,
// and the session stands (the next call, once the host has a token
// again, is answered).
func TestRun_HostTransportUnauthorized(t *testing.T) {
	for name, hostErr := range map[string]error{
		"*Error":           &purramcp.Error{Code: purramcp.CodeUnauthorized},
		"wrapped sentinel": fmt.Errorf("host: sign in again: %w", purramcp.ErrUnauthorized),
	} {
		t.Run(name, func(t *testing.T) {
			f := loadMCPFixture(t)
			srv := newSDKServer(t, nil, f.Tool)
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, nil))
			base := &http.Transport{}
			defer func() {
				hs.Close()
				base.CloseIdleConnections()
			}()
			rt := &refusingTransport{inner: base, err: hostErr}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			monitor := purramcp.NewCatalogMonitor()
			client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			cs, err := monitor.Connect(ctx, client, &mcp.StreamableClientTransport{Endpoint: hs.URL,
				HTTPClient: &http.Client{Transport: rt}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			catalog, err := purramcp.DiscoverTools(ctx, cs, "fixture", searchBinding(), purramcp.DiscoveryOptions{Monitor: monitor})
			if err != nil {
				t.Fatal(err)
			}
			reg := catalog.Registrations()[0]

			rt.refuse.Store(true)
			res, err := reg.Run(ctx, argsA, purramcp.ToolContext{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ErrorCode != purramcp.CodeUnauthorized {
				t.Errorf("ErrorCode = %q, want %q", res.ErrorCode, purramcp.CodeUnauthorized)
			}
			if got := rt.refused.Load(); got != 1 {
				t.Errorf("the host transport saw the call %d times, want 1 (never resent)", got)
			}
			if _, calls := srv.counts(); calls != 0 {
				t.Errorf("the server got %d calls, want 0", calls)
			}

			rt.refuse.Store(false)
			res, err = reg.Run(ctx, argsA, purramcp.ToolContext{})
			if err != nil || res.ErrorCode != "" {
				t.Fatalf("the next call: %v, %q (the session was lost)", err, res.ErrorCode)
			}
			if !errors.Is(&purramcp.Error{Code: purramcp.CodeUnauthorized}, purramcp.ErrUnauthorized) {
				t.Error("errors.Is")
			}
		})
	}
}
