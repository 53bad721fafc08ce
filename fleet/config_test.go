package fleet_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func TestParseConfig_VSCodeAndClaudeShapes(t *testing.T) {
	t.Setenv("FLEET_TEST_TOKEN", "s3cret-token")
	vscode := `{
	  "inputs": [{"type": "promptString", "id": "x"}],
	  "servers": {
	    "fs": {
	      "type": "stdio", "command": "npx", "args": ["-y", "server-fs", "${env:FLEET_TEST_TOKEN}"],
	      "env": {"TOKEN": "Bearer ${env:FLEET_TEST_TOKEN}!"}, "cwd": "/tmp",
	      "tools": {"remote.search": {"as": "fs_search", "title": "Search", "concurrencySafe": true}},
	      "policy": ["dialect", "annotations"], "requireReadOnlyHint": true, "legacyProtocols": true,
	      "staleRetries": 0, "maxCalls": 16,
	      "limits": {"maxPages": 4, "maxTools": 8, "maxCatalogBytes": 1000, "maxSchemaBytes": 900,
	        "maxDescriptionBytes": 100, "maxResultBytes": 2000, "maxContentBlocks": 3, "timeout": "1.5s"}
	    },
	    "web": {"url": "https://example.test/mcp?k=${env:FLEET_TEST_TOKEN}",
	      "headers": {"Authorization": "Bearer ${env:FLEET_TEST_TOKEN}"},
	      "tools": {"fetch": {"as": "web_fetch"}}}
	  }
	}`
	cfg, err := fleet.ParseConfig([]byte(vscode))
	require.NoError(t, err)
	fs := cfg.Servers["fs"]
	assert.Equal(t, fleet.ServerConfig{
		Type: "stdio", Command: "npx", Args: []string{"-y", "server-fs", "s3cret-token"},
		Env: map[string]string{"TOKEN": "Bearer s3cret-token!"}, Cwd: "/tmp",
		Tools:  map[string]fleet.ToolConfig{"remote.search": {As: "fs_search", Title: "Search", ConcurrencySafe: true}},
		Policy: []string{"dialect", "annotations"}, RequireReadOnlyHint: true, LegacyProtocols: true,
		StaleRetries: 0, MaxCalls: 16,
		Limits: purramcp.Limits{MaxPages: 4, MaxTools: 8, MaxCatalogBytes: 1000, MaxSchemaBytes: 900,
			MaxDescriptionBytes: 100, MaxResultBytes: 2000, MaxContentBlocks: 3, Timeout: 1500 * time.Millisecond},
	}, fs)
	web := cfg.Servers["web"]
	assert.Equal(t, "https://example.test/mcp?k=s3cret-token", web.URL)
	assert.Equal(t, map[string]string{"Authorization": "Bearer s3cret-token"}, web.Headers)
	assert.Equal(t, 2, web.StaleRetries, "staleRetries defaults to 2")
	assert.Equal(t, map[string]fleet.ToolConfig{"fetch": {As: "web_fetch"}}, web.Tools)
	assert.NotContains(t, web.String(), "s3cret", "String never shows a value")

	claude := `{"mcpServers": {"fs": {"command": "fs-server", "tools": {"read": {"as": "read_file"}}}}}`
	cfg, err = fleet.ParseConfig([]byte(claude))
	require.NoError(t, err)
	assert.Equal(t, fleet.ServerConfig{Command: "fs-server", StaleRetries: 2,
		Tools: map[string]fleet.ToolConfig{"read": {As: "read_file"}}}, cfg.Servers["fs"])
}

func TestParseConfig_ErrorsNamePaths(t *testing.T) {
	t.Setenv("FLEET_TEST_SECRET", "hunter2-secret")
	os.Unsetenv("FLEET_TEST_UNSET")
	srv := func(body string) string { return `{"servers": {"fs": {` + body + `}}}` }
	tools := `"tools": {"read": {"as": "read_file"}}`
	cases := []struct {
		name, text, path string
	}{
		{"malformed", `{"servers": {`, "servers"},
		{"trailing", `{"servers": {}} {}`, ""},
		{"not object", `[]`, ""},
		{"unknown top", `{"servers": {}, "extra": 1}`, "extra"},
		{"duplicate top", `{"servers": {}, "servers": {}}`, "servers"},
		{"both keys", `{"servers": {}, "mcpServers": {}}`, "mcpServers"},
		{"no servers", `{"servers": {}}`, "servers"},
		{"servers not object", `{"servers": []}`, "servers"},
		{"duplicate server", `{"servers": {"fs": {` + tools + `}, "fs": {}}}`, "servers.fs"},
		{"invalid server id", `{"servers": {"a b": {"command": "x", ` + tools + `}}}`, `servers["a b"]`},
		{"unknown server field", srv(`"command": "x", "envFile": ".env", ` + tools), "servers.fs.envFile"},
		{"duplicate server field", srv(`"command": "x", "command": "y", ` + tools), "servers.fs.command"},
		{"missing tools", srv(`"command": "x"`), "servers.fs.tools"},
		{"empty tools", srv(`"command": "x", "tools": {}`), "servers.fs.tools"},
		{"tools not object", srv(`"command": "x", "tools": []`), "servers.fs.tools"},
		{"tool missing as", srv(`"command": "x", "tools": {"remote.search": {}}`), `servers.fs.tools["remote.search"].as`},
		{"tool invalid as", srv(`"command": "x", "tools": {"remote.search": {"as": "a-b"}}`), `servers.fs.tools["remote.search"].as`},
		{"tool as not string", srv(`"command": "x", "tools": {"remote.search": {"as": 1}}`), `servers.fs.tools["remote.search"].as`},
		{"tool unknown field", srv(`"command": "x", "tools": {"r": {"as": "a", "risk": "x"}}`), "servers.fs.tools.r.risk"},
		{"tool duplicate key", srv(`"command": "x", "tools": {"r": {"as": "a", "as": "b"}}`), "servers.fs.tools.r.as"},
		{"invalid remote", srv(`"command": "x", "tools": {"a/b": {"as": "a"}}`), `servers.fs.tools["a/b"]`},
		{"blank title", srv(`"command": "x", "tools": {"r": {"as": "a", "title": "  "}}`), "servers.fs.tools.r.title"},
		{"repeated local", srv(`"command": "x", "tools": {"r": {"as": "a"}, "s": {"as": "a"}}`), "servers.fs.tools.s.as"},
		{"repeated local across servers", `{"servers": {"a": {"command": "x", "tools": {"r": {"as": "same"}}},
			"b": {"command": "y", "tools": {"q": {"as": "same"}}}}}`, "servers.b.tools.q.as"},
		{"both command and url", srv(`"command": "x", "url": "http://h", ` + tools), "servers.fs.url"},
		{"neither command nor url", srv(tools), "servers.fs"},
		{"unknown type", srv(`"type": "sse", "url": "http://h", ` + tools), "servers.fs.type"},
		{"stdio without command", srv(`"type": "stdio", "url": "http://h", ` + tools), "servers.fs.type"},
		{"http without url", srv(`"type": "http", "command": "x", ` + tools), "servers.fs.type"},
		{"unknown policy", srv(`"command": "x", "policy": ["dialect", "lenient"], ` + tools), "servers.fs.policy[1]"},
		{"repeated policy", srv(`"command": "x", "policy": ["extended", "extended"], ` + tools), "servers.fs.policy[1]"},
		{"policy not string", srv(`"command": "x", "policy": [1], ` + tools), "servers.fs.policy[0]"},
		{"arg not string", srv(`"command": "x", "args": ["a", "b", 3], ` + tools), "servers.fs.args[2]"},
		{"unset env in args", srv(`"command": "x", "args": ["a", "b", "${env:FLEET_TEST_UNSET}"], ` + tools), "servers.fs.args[2]"},
		{"unset env in env", srv(`"command": "x", "env": {"K": "${env:FLEET_TEST_UNSET}"}, ` + tools), "servers.fs.env.K"},
		{"unset env in header", srv(`"url": "http://h", "headers": {"X-Key": "${env:FLEET_TEST_UNSET}"}, ` + tools), `servers.fs.headers["X-Key"]`},
		{"unset env in url", srv(`"url": "http://h/${env:FLEET_TEST_UNSET}", ` + tools), "servers.fs.url"},
		{"input variable", srv(`"command": "x", "env": {"K": "${input:key}"}, ` + tools), "servers.fs.env.K"},
		{"unterminated variable", srv(`"command": "x", "args": ["${env:FLEET_TEST_SECRET"], ` + tools), "servers.fs.args[0]"},
		{"env not string", srv(`"command": "x", "env": {"K": 1}, ` + tools), "servers.fs.env.K"},
		{"stale retries range", srv(`"command": "x", "staleRetries": 9, ` + tools), "servers.fs.staleRetries"},
		{"stale retries fraction", srv(`"command": "x", "staleRetries": 1.5, ` + tools), "servers.fs.staleRetries"},
		{"max calls zero", srv(`"command": "x", "maxCalls": 0, ` + tools), "servers.fs.maxCalls"},
		{"max calls range", srv(`"command": "x", "maxCalls": 65537, ` + tools), "servers.fs.maxCalls"},
		{"limits unknown", srv(`"command": "x", "limits": {"maxBytes": 1}, ` + tools), "servers.fs.limits.maxBytes"},
		{"limits range", srv(`"command": "x", "limits": {"maxTools": 257}, ` + tools), "servers.fs.limits.maxTools"},
		{"limits negative", srv(`"command": "x", "limits": {"maxPages": -1}, ` + tools), "servers.fs.limits.maxPages"},
		{"timeout syntax", srv(`"command": "x", "limits": {"timeout": "10"}, ` + tools), "servers.fs.limits.timeout"},
		{"timeout range", srv(`"command": "x", "limits": {"timeout": "6m"}, ` + tools), "servers.fs.limits.timeout"},
		{"timeout number", srv(`"command": "x", "limits": {"timeout": 10}, ` + tools), "servers.fs.limits.timeout"},
		{"bool field", srv(`"command": "x", "requireReadOnlyHint": "yes", ` + tools), "servers.fs.requireReadOnlyHint"},
		{"oauth not object", srv(`"url": "https://h", "oauth": [], ` + tools), "servers.fs.oauth"},
		{"oauth unknown", srv(`"url": "https://h", "oauth": {"clientID": "x"}, ` + tools), "servers.fs.oauth.clientID"},
		{"oauth on stdio", srv(`"command": "x", "oauth": {}, ` + tools), "servers.fs.oauth"},
		{"oauth literal secret", srv(`"url": "https://h", "oauth": {"clientId": "c", "clientSecret": "hunter2-secret"}, ` + tools), "servers.fs.oauth.clientSecret"},
		{"oauth secret in text", srv(`"url": "https://h", "oauth": {"clientId": "c", "clientSecret": "x${env:FLEET_TEST_SECRET}"}, ` + tools), "servers.fs.oauth.clientSecret"},
		{"oauth secret unset", srv(`"url": "https://h", "oauth": {"clientId": "c", "clientSecret": "${env:FLEET_TEST_UNSET}"}, ` + tools), "servers.fs.oauth.clientSecret"},
		{"oauth secret without id", srv(`"url": "https://h", "oauth": {"clientSecret": "${env:FLEET_TEST_SECRET}"}, ` + tools), "servers.fs.oauth.clientSecret"},
		{"oauth metadata http", srv(`"url": "https://h", "oauth": {"clientMetadataUrl": "http://c.example/m.json"}, ` + tools), "servers.fs.oauth.clientMetadataUrl"},
		{"oauth metadata root", srv(`"url": "https://h", "oauth": {"clientMetadataUrl": "https://c.example/"}, ` + tools), "servers.fs.oauth.clientMetadataUrl"},
		{"tool scope space", srv(`"command": "x", "tools": {"t": {"as": "t", "scopes": ["docs:read", "a b"]}}`), "servers.fs.tools.t.scopes[1]"},
		{"tool scopes not list", srv(`"command": "x", "tools": {"t": {"as": "t", "scopes": "docs:read"}}`), "servers.fs.tools.t.scopes"},
		{"oauth scope space", srv(`"url": "https://h", "oauth": {"scopes": ["a", "b c"]}, ` + tools), "servers.fs.oauth.scopes[1]"},
		{"oauth scope not string", srv(`"url": "https://h", "oauth": {"scopes": [1]}, ` + tools), "servers.fs.oauth.scopes[0]"},
		{"oauth port range", srv(`"url": "https://h", "oauth": {"redirectPort": 70000}, ` + tools), "servers.fs.oauth.redirectPort"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := fleet.ParseConfig([]byte(tc.text))
			assert.Nil(t, cfg, "case %s", tc.name)
			var ce *fleet.ConfigError
			require.True(t, errors.As(err, &ce), "case %s: error %v is not a ConfigError", tc.name, err)
			assert.Equal(t, tc.path, ce.Path, "case %s", tc.name)
			assert.ErrorIs(t, err, purramcp.ErrBindingInvalid, "case %s", tc.name)
			assert.Equal(t, purramcp.CodeBindingInvalid, purramcp.CodeOf(err), "case %s", tc.name)
			assert.NotContains(t, err.Error(), "hunter2", "case %s: a secret in the error", tc.name)
		})
	}
}

func TestParseConfig_InvalidUTF8(t *testing.T) {
	_, err := fleet.ParseConfig([]byte("{\"servers\": {\"\xff\": {}}}"))
	var ce *fleet.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "", ce.Path)
}

func TestLoadConfig_File(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"servers": {"u": {"command": "srv", "tools": {"a": {"as": "a"}}}}}`), 0o600))
	cfg, err := fleet.LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, "srv", cfg.Servers["u"].Command)

	_, err = fleet.LoadConfig(filepath.Join(dir, "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"servers": {}, "inputs": "`+strings.Repeat("x", 1<<20)+`"}`), 0o600))
	_, err = fleet.LoadConfig(big)
	var ce *fleet.ConfigError
	require.ErrorAs(t, err, &ce, "a file over 1 MiB is rejected before parsing")
}

func TestServerConfig_BindingsAndDiscoveryOptions(t *testing.T) {
	sc := fleet.ServerConfig{Tools: map[string]fleet.ToolConfig{
		"a.b": {As: "ab"}, "c": {As: "c", Title: "See", ConcurrencySafe: true}},
		Policy: []string{"extended", "dialect"}, StaleRetries: 2, RequireReadOnlyHint: true,
		Limits: purramcp.Limits{MaxTools: 3}}
	b := sc.Bindings()
	require.Len(t, b, 2)
	assert.Equal(t, "ab", b["a.b"].LocalName)
	assert.Equal(t, purramcp.ToolPolicy{Mode: "read", Title: "ab"}, b["a.b"].Policy)
	assert.Equal(t, purramcp.ToolPolicy{Mode: "read", Title: "See"}, b["c"].Policy)
	assert.False(t, b["a.b"].ConcurrencySafe)
	assert.True(t, b["c"].ConcurrencySafe)
	assert.NotNil(t, b["c"].Scope)

	want := purramcp.SchemaPolicy{DialectEquivalence: true, ExtendedKeywords: true}
	assert.Equal(t, want, sc.SchemaPolicy())
	assert.Equal(t, purramcp.DiscoveryOptions{Limits: sc.Limits, Policy: want, StaleRetries: 2, RequireReadOnlyHint: true},
		sc.DiscoveryOptions())
	assert.Equal(t, purramcp.SchemaPolicy{}, fleet.ServerConfig{Policy: []string{"strict"}}.SchemaPolicy(),
		"an unknown word enables nothing")
}

func TestPolicyWords_InverseOfSchemaPolicy(t *testing.T) {
	assert.Equal(t, []string{}, fleet.PolicyWords(purramcp.SchemaPolicy{}))
	all := purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true}
	assert.Equal(t, []string{"dialect", "annotations", "extended"}, fleet.PolicyWords(all))
	for _, words := range [][]string{{"annotations"}, {"dialect", "extended"}, {"dialect", "annotations", "extended"}} {
		p := fleet.ServerConfig{Policy: words}.SchemaPolicy()
		assert.Equal(t, words, fleet.PolicyWords(p))
	}
}

func TestParseConfig_OAuth(t *testing.T) {
	t.Setenv("FLEET_TEST_CLIENT_SECRET", "canary-client-secret")
	cfg, err := fleet.ParseConfig([]byte(`{"servers": {
	  "bare": {"url": "https://mcp.example.com/mcp", "tools": {"search": {"as": "bare_search"}}},
	  "docs": {"url": "https://docs.example.com/mcp", "tools": {"search": {"as": "docs_search"}},
	    "oauth": {"clientId": "purramcp-docs", "clientSecret": "${env:FLEET_TEST_CLIENT_SECRET}",
	      "clientMetadataUrl": "https://purramcp.example/client.json", "scopes": ["docs:read", "offline_access"],
	      "redirectPort": 8976}}}}`))
	require.NoError(t, err)
	assert.Nil(t, cfg.Servers["bare"].OAuth, "a url alone needs no oauth object")
	assert.Equal(t, &fleet.OAuthConfig{ClientID: "purramcp-docs", ClientSecret: "canary-client-secret",
		ClientMetadataURL: "https://purramcp.example/client.json", Scopes: []string{"docs:read", "offline_access"},
		RedirectPort: 8976}, cfg.Servers["docs"].OAuth)
}
