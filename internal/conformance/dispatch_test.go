package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// listed is every client scenario `conformance list` of the pinned suite
// (0.2.0-alpha.12) prints.
var listed = []string{
	"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "request-metadata",
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
	"auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch", "auth/offline-access-scope",
	"auth/offline-access-not-supported", "auth/authorization-server-migration", "auth/iss-supported",
	"auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected",
	"auth/iss-normalized", "auth/metadata-issuer-mismatch", "auth/client-credentials-jwt",
	"auth/client-credentials-basic", "auth/enterprise-managed-authorization", "auth/dpop",
	"auth/dpop-nonce", "auth/wif-jwt-bearer", "sep-2322-client-request-state", "http-standard-headers",
	"http-custom-headers", "http-invalid-tool-headers", "json-schema-ref-no-deref",
	"json-schema-2020-12-preservation", "sep-2640-client-no-prefetch", "sep-2640-client-verify-digest",
	"sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter",
}

// TestRun_EveryListedScenarioDispatched runs each listed scenario against
// a loopback port nothing listens on: each must fail on the connection
// (or, for http-custom-headers, on its missing context), never as an
// unsupported scenario; an unlisted name must.
func TestRun_EveryListedScenarioDispatched(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	if len(listed) != 48 {
		t.Fatalf("listed has %d scenarios, the suite 48", len(listed))
	}
	for _, name := range listed {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := run(ctx, name, closed, map[string]any{})
		cancel()
		if err == nil || strings.Contains(err.Error(), "unsupported scenario") {
			t.Errorf("%s: got %v, want a connection failure", name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := run(ctx, "no-such-scenario", closed, nil); err == nil || !strings.Contains(err.Error(), "unsupported scenario") {
		t.Errorf("no-such-scenario: got %v, want unsupported scenario", err)
	}
}
