package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// toolCall is one call a scenario asks for: the remote tool name and its
// argument JSON.
type toolCall struct {
	name string
	args string
}

// other runs the suite's scenarios that run does not name itself, each
// through the code a host runs: fleet.Connect, purramcp's discovery with
// the host's bindings and Run. A scenario that needs what the product does
// not do (elicitation, an input_required round, SSE resumption) is still
// driven this way, and fails where the product refuses.
func other(ctx context.Context, name, serverURL string) error {
	switch name {
	case "sep-2640-client-no-prefetch", "sep-2640-client-verify-digest",
		"sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		// A host binds tools only: it connects and discovers, and never
		// lists or reads a skill.
		return discoverOnly(ctx, serverURL)
	case "http-standard-headers":
		return callTools(ctx, serverURL, []toolCall{{"test_headers", `{}`}, {"my-hyphenated-tool", `{}`}})
	case "json-schema-2020-12-preservation":
		return echoSchema(ctx, serverURL, "json_schema_2020_12_tool", "json_schema_echo")
	case "elicitation-sep1034-client-defaults":
		return callTools(ctx, serverURL, []toolCall{{"test_client_elicitation_defaults", `{}`}})
	case "sse-retry":
		return callTools(ctx, serverURL, []toolCall{{"test_reconnection", `{}`}})
	case "sep-2322-client-request-state":
		return callTools(ctx, serverURL, []toolCall{{"test_mrtr_echo_state", `{}`}, {"test_mrtr_no_state", `{}`},
			{"test_mrtr_unrelated", `{}`}, {"test_mrtr_no_result_type", `{}`}})
	}
	return fmt.Errorf("unsupported scenario %q", name)
}

// discoverOnly connects and lists the server's tools as purramcp inspect
// does (InspectCatalog: every tool checked, none bound). A server that
// declares no tools capability (request-metadata's, the skills
// extension's) is learnt and stopped at: mcp_tools_unavailable is a
// success here.
func discoverOnly(ctx context.Context, serverURL string) error {
	s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer s.Close()
	_, err = purramcp.InspectCatalog(ctx, s.ClientSession(), "conformance", purramcp.DiscoveryOptions{Monitor: s.Monitor()})
	if purramcp.CodeOf(err) == purramcp.CodeToolsUnavailable {
		return nil
	}
	return err
}

// bindings binds each named remote tool under a local name of its index.
func bindings(names ...string) map[string]purramcp.ToolBinding {
	b := make(map[string]purramcp.ToolBinding, len(names))
	for i, n := range names {
		b[n] = purramcp.ToolBinding{LocalName: fmt.Sprintf("tool%d", i),
			Policy: purramcp.ToolPolicy{Mode: "read", Title: n}, Scope: purramcp.Unscoped}
	}
	return b
}

// callTools connects, binds every tool of calls and runs each call in
// order on the one session; it returns every call's failure.
func callTools(ctx context.Context, serverURL string, calls []toolCall) error {
	s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.name
	}
	catalog, err := purramcp.DiscoverTools(ctx, s.ClientSession(), "conformance", bindings(names...),
		purramcp.DiscoveryOptions{Monitor: s.Monitor()})
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	var errs []error
	for i, c := range calls {
		def, ok := catalog.Registration(fmt.Sprintf("tool%d", i))
		if !ok {
			return errors.New("binding not registered")
		}
		res, err := def.Run(ctx, json.RawMessage(c.args), purramcp.ToolContext{})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		case res.ErrorCode != "":
			errs = append(errs, fmt.Errorf("%s: %s", c.name, res.ErrorCode))
		}
	}
	return errors.Join(errs...)
}

// echoSchema binds focal and echo, and calls echo with the input schema
// the host was given for focal (its registration's InputSchema).
func echoSchema(ctx context.Context, serverURL, focal, echo string) error {
	s, err := fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	catalog, err := purramcp.DiscoverTools(ctx, s.ClientSession(), "conformance", bindings(focal, echo),
		purramcp.DiscoveryOptions{Monitor: s.Monitor()})
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	f, _ := catalog.Registration("tool0")
	e, _ := catalog.Registration("tool1")
	args, err := json.Marshal(map[string]any{"schema": f.InputSchema})
	if err != nil {
		return err
	}
	res, err := e.Run(ctx, args, purramcp.ToolContext{})
	switch {
	case err != nil:
		return err
	case res.ErrorCode != "":
		return errors.New(res.ErrorCode)
	}
	return nil
}
