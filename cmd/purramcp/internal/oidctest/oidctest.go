// Package oidctest runs a real authorization server, oidc-provider (an
// OpenID certified implementation, run by node from the pinned
// .ci/ci-node packages), in front of a go-sdk streamable-HTTP MCP server
// that accepts only the JWT access tokens it issues for that server, for
// end-to-end tests of purramcp's OAuth client against a server not
// written here.
//
// The provider registers clients dynamically, requires PKCE, rotates
// refresh tokens, binds every access token to the MCP server with a
// resource indicator and signs it as a JWT, and asks the user through its
// development login and consent pages, which [Provider.Consent] submits
// over HTTP as a browser would.
package oidctest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// NodeClientsEnv names the directory of the installed .ci/ci-node
// packages; unset, the nearest .ci/ci-node above the working directory is
// used.
const NodeClientsEnv = "PURRAMCP_NODE_CLIENTS"

// startTimeout bounds the provider's start, up to its issuer line.
const startTimeout = 30 * time.Second

// Options configure [Start]. The zero value is usable.
type Options struct {
	// AccessTokenTTL is the lifetime of each access token, in whole
	// seconds; 0 means 5 s.
	AccessTokenTTL time.Duration
	// Resource, when set, is the resource the provider mints tokens for
	// instead of the harness's own MCP server (which then refuses them):
	// for a test whose resource server is another one, such as a gateway.
	Resource string
	// OpaqueTokens makes the access tokens opaque instead of JWTs (the
	// harness's own MCP server then refuses them).
	OpaqueTokens bool
	// IntrospectionClient, as ID:SECRET, registers the resource server's
	// client and turns on token introspection at
	// [Provider.IntrospectionEndpoint].
	IntrospectionClient string
}

// Provider is a running oidc-provider and the MCP server it protects.
// Its methods are safe for concurrent use.
type Provider struct {
	// Issuer is the authorization server's issuer URL.
	Issuer string
	// URL is the MCP endpoint, the resource every access token is for.
	URL string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan struct{} // closed when the provider's stdout ends
	rs     *resourceServer

	mu      sync.Mutex
	cookies http.CookieJar
	counts  map[string]int // "grant:<type>", "interaction:<prompt>", "grant_error:<name>", ...
	secrets []string       // every code, verifier and token of every grant
}

// Start runs the provider and the MCP server for the test; both stop when
// it ends. Without node or the installed packages the test is skipped, or
// fails under CI=true.
func Start(t *testing.T, opts Options) *Provider {
	t.Helper()
	script, node := locate(t)
	ttl := int(opts.AccessTokenTTL / time.Second)
	if ttl <= 0 {
		ttl = 5
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("oidctest: listen: %v", err)
	}
	serverURL := "http://" + ln.Addr().String() + PathMCP
	resource := serverURL
	if opts.Resource != "" {
		resource = opts.Resource
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, script, resource, "0")
	cmd.Dir = filepath.Dir(script)
	format := "jwt"
	if opts.OpaqueTokens {
		format = "opaque"
	}
	cmd.Env = append(os.Environ(), "OIDC_ACCESS_TOKEN_TTL="+strconv.Itoa(ttl), "OIDC_ACCESS_TOKEN_FORMAT="+format,
		"OIDC_INTROSPECTION_CLIENT="+opts.IntrospectionClient)
	cmd.Stderr = &limitedBuffer{max: 64 << 10}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		_ = ln.Close()
		t.Fatalf("oidctest: start node: %v", err)
	}
	p := &Provider{URL: serverURL, cmd: cmd, stdin: stdin, events: make(chan struct{}), counts: map[string]int{}}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill() // by its pid
		cancel()
		<-p.events
		_ = cmd.Wait()
	})

	issuer := make(chan string, 1)
	go p.read(stdout, issuer)
	select {
	case p.Issuer = <-issuer:
	case <-time.After(startTimeout):
	}
	if p.Issuer == "" {
		_ = ln.Close()
		t.Fatalf("oidctest: the provider printed no issuer within %v; stderr:\n%s", startTimeout, cmd.Stderr)
	}
	p.rs = startResourceServer(t, ln, p.Issuer, serverURL)
	return p
}

// IntrospectionEndpoint is the provider's RFC 7662 endpoint (served only
// with Options.IntrospectionClient).
func (p *Provider) IntrospectionEndpoint() string { return p.Issuer + "/token/introspection" }

// locate finds the provider script and node.
func locate(t *testing.T) (script, node string) {
	t.Helper()
	dir := os.Getenv(NodeClientsEnv)
	if dir == "" {
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = filepath.Dir(d) {
				if fi, err := os.Stat(filepath.Join(d, ".ci", "ci-node")); err == nil && fi.IsDir() {
					dir = filepath.Join(d, ".ci", "ci-node")
					break
				}
				if filepath.Dir(d) == d {
					break
				}
			}
		}
	}
	script = filepath.Join(dir, "oidc-provider.mjs")
	node, nodeErr := exec.LookPath("node")
	_, scriptErr := os.Stat(script)
	_, pkgErr := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider", "package.json"))
	if dir == "" || nodeErr != nil || scriptErr != nil || pkgErr != nil {
		msg := "oidctest: node and oidc-provider are not installed in " + dir + ": run npm ci --prefix .ci/ci-node"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return script, node
}

// event is one line the provider prints after its issuer.
type event struct {
	Event     string   `json:"event"`
	GrantType string   `json:"grant_type"`
	Prompt    string   `json:"prompt"`
	Error     string   `json:"error"`
	Canary    []string `json:"canary"`
}

// read takes the issuer line, then counts events until stdout ends.
func (p *Provider) read(stdout io.Reader, issuer chan<- string) {
	defer close(p.events)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 4096), 64<<10)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if strings.HasPrefix(line, "http://127.0.0.1:") {
				issuer <- line
			}
			continue
		}
		var e event
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		key := e.Event
		switch e.Event {
		case "grant":
			key += ":" + e.GrantType
		case "interaction":
			key += ":" + e.Prompt
		case "grant_error", "server_error":
			key += ":" + e.Error
		}
		p.mu.Lock()
		p.counts[key]++
		p.secrets = append(p.secrets, e.Canary...)
		p.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, stdout)
}

// Count is how many events of key the provider reported so far:
// "grant:authorization_code", "grant:refresh_token",
// "interaction:login", "interaction:consent", "registration",
// "grant_revoked", or "grant_error:NAME" and "server_error:NAME".
func (p *Provider) Count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[key]
}

// Counts is a copy of every count so far, by key (see [Provider.Count]).
func (p *Provider) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Secrets are the authorization codes, PKCE verifiers, access tokens and
// refresh tokens of every grant the provider answered so far, for a test
// to check that none of them shows in an output.
func (p *Provider) Secrets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.secrets...)
}

// Errors is the number of refused grants and server errors so far.
func (p *Provider) Errors() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range p.counts {
		if strings.HasPrefix(k, "grant_error:") || strings.HasPrefix(k, "server_error:") {
			n += v
		}
	}
	return n
}

// errBadAnswer is the error of an answer the harness did not expect.
var errBadAnswer = errors.New("oidctest: unexpected answer")

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// get is a bounded GET with client.
func get(ctx context.Context, client *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}
