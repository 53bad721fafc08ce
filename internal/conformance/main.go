// Command conformance is a client for the official MCP conformance suite
// (npm @modelcontextprotocol/conformance, "conformance client --command"):
// the suite runs it once per scenario with the scenario's name in
// MCP_CONFORMANCE_SCENARIO, its context (JSON) in MCP_CONFORMANCE_CONTEXT
// and the server's URL as the last argument, and judges what the server
// saw. It is built on the code the fleet and purramcp login run: oauth.Login
// for the authorization-code flow (the authorization URL followed
// headlessly, since the suite's authorization server approves at once),
// fleet.Connect with a token store for the session, and purramcp's
// discovery and Run for the calls. It exits 0 when the scenario's calls
// succeeded, 1 otherwise, and prints no token.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/oauth"
)

// cimdURL is the client ID metadata document URL the suite's scenarios
// expect a client to offer.
const cimdURL = "https://conformance-test.local/client-metadata.json"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var sctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sctx); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: MCP_CONFORMANCE_CONTEXT is not JSON")
			os.Exit(2)
		}
	}
	if err := run(ctx, scenario, os.Args[len(os.Args)-1], sctx); err != nil {
		fmt.Fprintf(os.Stderr, "conformance: %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

// run runs one scenario against serverURL.
func run(ctx context.Context, scenario, serverURL string, sctx map[string]any) error {
	switch {
	case scenario == "json-schema-ref-no-deref":
		// Bound under every policy, the tool's network $ref is refused at
		// bind time (mcp_schema_unsupported); nothing is fetched.
		err := callWith(ctx, serverURL, nil, "lookup_user", `{"id":"a"}`, purramcp.SchemaPolicy{
			DialectEquivalence: true, Annotations: true, ExtendedKeywords: true})
		if purramcp.CodeOf(err) == purramcp.CodeSchemaUnsupported {
			return nil
		}
		if err == nil {
			return errors.New("a network $ref bound")
		}
		return err
	case scenario == "initialize" || scenario == "request-metadata":
		s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{})
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.ClientSession().ListTools(ctx, nil)
		return err
	case scenario == "tools_call":
		return call(ctx, serverURL, nil, "add_numbers", `{"a":5,"b":3}`)
	case scenario == "http-custom-headers":
		return headerCalls(ctx, serverURL, sctx)
	case scenario == "http-invalid-tool-headers":
		// go-sdk drops the tools whose x-mcp-header is invalid; the valid
		// one binds under the headers policy and is called.
		return callWith(ctx, serverURL, nil, "valid_tool", `{"region":"us-west1"}`, headersPolicy)
	case strings.HasPrefix(scenario, "auth/"):
		return authorized(ctx, serverURL, sctx)
	}
	return fmt.Errorf("unsupported scenario %q", scenario)
}

// authorized signs in with oauth.Login, then lists and calls test-tool
// with the stored token. A call refused for insufficient scope signs in
// again once, asking for the scopes already granted and those the server
// named, and calls again: the host's explicit step-up, never a retry
// behind its back.
func authorized(ctx context.Context, serverURL string, sctx map[string]any) error {
	store := &memoryStore{}
	oc := &oauth.Config{ClientMetadataURL: cimdURL}
	if id, ok := sctx["client_id"].(string); ok {
		oc.ClientID = id
		oc.ClientSecret, _ = sctx["client_secret"].(string)
	}
	login := func(scopes []string) (*oauth.Credentials, error) {
		o := *oc
		o.Scopes = scopes
		return oauth.Login(ctx, oauth.LoginOptions{ServerURL: serverURL, OAuth: &o, Store: store, Browse: followHeadless})
	}
	creds, err := login(nil)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	err = call(ctx, serverURL, store, "test-tool", `{}`)
	var step *stepUp
	if !errors.As(err, &step) {
		return err
	}
	scopes := slices.Clone(creds.Scopes)
	for _, s := range step.scopes {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if _, err := login(scopes); err != nil {
		return fmt.Errorf("step-up login: %w", err)
	}
	return call(ctx, serverURL, store, "test-tool", `{}`)
}

// headersPolicy is the schema policy under which a tool whose input schema
// carries x-mcp-header binds (its arguments then go out as Mcp-Param-*
// headers too).
var headersPolicy = purramcp.SchemaPolicy{ParamHeaders: true}

// headerCalls makes each call the scenario's context lists
// ({"toolCalls": [{"name", "arguments"}]}), binding each tool under the
// headers policy.
func headerCalls(ctx context.Context, serverURL string, sctx map[string]any) error {
	calls, _ := sctx["toolCalls"].([]any)
	if len(calls) == 0 {
		return errors.New("no toolCalls in the scenario's context")
	}
	for _, c := range calls {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		args, err := json.Marshal(m["arguments"])
		if err != nil {
			return err
		}
		if err := callWith(ctx, serverURL, nil, name, string(args), headersPolicy); err != nil {
			return err
		}
	}
	return nil
}

// stepUp is a call refused for want of scopes.
type stepUp struct{ scopes []string }

func (s *stepUp) Error() string { return "insufficient scope: " + strings.Join(s.scopes, " ") }

// call connects (with the store's token, if any), binds tool and runs it
// once with args.
func call(ctx context.Context, serverURL string, store oauth.Store, tool, args string) error {
	return callWith(ctx, serverURL, store, tool, args, purramcp.SchemaPolicy{})
}

// callWith is call binding tool under policy.
func callWith(ctx context.Context, serverURL string, store oauth.Store, tool, args string, policy purramcp.SchemaPolicy) error {
	s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{TokenStore: store})
	if err != nil {
		return err
	}
	defer s.Close()
	catalog, err := purramcp.DiscoverTools(ctx, s.ClientSession(), "conformance", map[string]purramcp.ToolBinding{
		tool: {LocalName: "tool", Policy: purramcp.ToolPolicy{Mode: "read", Title: tool}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: s.Monitor(), Policy: policy})
	if err != nil {
		if scopes := s.RequiredScopes(); purramcp.CodeOf(err) == purramcp.CodeUnauthorized && scopes != nil {
			return &stepUp{scopes: scopes}
		}
		return fmt.Errorf("discover: %w", err)
	}
	res, err := catalog.Registrations()[0].Run(ctx, json.RawMessage(args), purramcp.ToolContext{})
	switch {
	case err != nil:
		return err
	case res.ErrorCode == purramcp.CodeUnauthorized && s.RequiredScopes() != nil:
		return &stepUp{scopes: s.RequiredScopes()}
	case res.ErrorCode != "":
		return errors.New(res.ErrorCode)
	}
	return nil
}

// followHeadless plays the browser for an authorization server that
// approves at once: it requests authURL, takes the redirect it answers
// with and requests that (the login's loopback callback).
func followHeadless(ctx context.Context, authURL string) error {
	hc := &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := authURL
	for range 4 {
		u, err := url.Parse(next)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return errors.New("not an http URL")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return nil // the callback answered
		}
		ref, err := u.Parse(loc)
		if err != nil {
			return err
		}
		next = ref.String()
	}
	return errors.New("too many redirects")
}

// memoryStore is a oauth.Store in memory: one run's credentials.
type memoryStore struct {
	mu sync.Mutex
	m  map[string]oauth.Credentials
}

func (s *memoryStore) Load(_ context.Context, serverURL string) (*oauth.Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[serverURL]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

func (s *memoryStore) Save(_ context.Context, c *oauth.Credentials) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]oauth.Credentials{}
	}
	s.m[c.ServerURL] = *c
	return nil
}

func (s *memoryStore) Delete(_ context.Context, serverURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, serverURL)
	return nil
}
