// Command conformance is a client for the official MCP conformance suite
// (npm @modelcontextprotocol/conformance, "conformance client --command"):
// the suite runs it once per scenario with the scenario's name in
// MCP_CONFORMANCE_SCENARIO, its context (JSON) in MCP_CONFORMANCE_CONTEXT
// and the server's URL as the last argument, and judges what the server
// saw. It is built on the code the fleet and purramcp login run: fleet.Login
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
	case scenario == "initialize":
		s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{})
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.ClientSession().ListTools(ctx, nil)
		return err
	case scenario == "tools_call":
		return call(ctx, serverURL, nil, "add_numbers", `{"a":5,"b":3}`)
	case scenario == "auth/authorization-server-migration":
		return migrated(ctx, serverURL)
	case strings.HasPrefix(scenario, "auth/"):
		return authorized(ctx, serverURL, sctx)
	}
	return other(ctx, scenario, serverURL, sctx)
}

// authorized signs in with fleet.Login, then lists and calls test-tool
// with the stored token. A call refused for insufficient scope signs in
// again once, asking for the scopes already granted and those the server
// named, and calls again: the host's explicit step-up, never a retry
// behind its back.
func authorized(ctx context.Context, serverURL string, sctx map[string]any) error {
	store := &memoryStore{}
	oc := &fleet.OAuthConfig{ClientMetadataURL: cimdURL}
	if id, ok := sctx["client_id"].(string); ok {
		oc.ClientID = id
		oc.ClientSecret, _ = sctx["client_secret"].(string)
	}
	login := func(scopes []string) (*fleet.Credentials, error) {
		o := *oc
		o.Scopes = scopes
		return fleet.Login(ctx, fleet.LoginOptions{ServerURL: serverURL, OAuth: &o, Store: store, Browse: followHeadless})
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

// stepUp is a call refused for want of scopes.
type stepUp struct{ scopes []string }

func (s *stepUp) Error() string { return "insufficient scope: " + strings.Join(s.scopes, " ") }

// call connects (with the store's token, if any), binds tool and runs it
// once with args.
func call(ctx context.Context, serverURL string, store fleet.TokenStore, tool, args string) error {
	s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{TokenStore: store})
	if err != nil {
		return err
	}
	defer s.Close()
	catalog, err := purramcp.DiscoverTools(ctx, s.ClientSession(), "conformance", map[string]purramcp.ToolBinding{
		tool: {LocalName: "tool", Policy: purramcp.ToolPolicy{Mode: "read", Title: tool}, Scope: purramcp.Unscoped},
	}, purramcp.DiscoveryOptions{Monitor: s.Monitor()})
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

// memoryStore is a fleet.TokenStore in memory: one run's credentials.
type memoryStore struct {
	mu sync.Mutex
	m  map[string]fleet.Credentials
}

func (s *memoryStore) Load(_ context.Context, serverURL string) (*fleet.Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[serverURL]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

func (s *memoryStore) Save(_ context.Context, c *fleet.Credentials) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]fleet.Credentials{}
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
