package purramcp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// serverCatalog discovers bindings from a go-sdk server listing tools.
func serverCatalog(t *testing.T, serverID string, bindings map[string]purramcp.ToolBinding, tools ...json.RawMessage) (*purramcp.Catalog, *sdkServer) {
	t.Helper()
	srv := newSDKServer(t, nil, tools...)
	h := sdkHarness(t, srv, "")
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, serverID, bindings, purramcp.DiscoveryOptions{Monitor: h.monitor})
	require.NoError(t, err)
	return catalog, srv
}

// names are the registrations' names in order.
func names(defs []purramcp.ToolDefinition) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

func TestMerge(t *testing.T) {
	f := loadMCPFixture(t)
	docs, docsSrv := serverCatalog(t, "docs", otherBinding(), f.Tool, json.RawMessage(otherTool))
	wiki, wikiSrv := serverCatalog(t, "wiki", map[string]purramcp.ToolBinding{"remote.search": {LocalName: "wiki_search",
		Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search the wiki"}, Scope: purramcp.Unscoped}}, f.Tool)
	merged, err := purramcp.Merge(wiki, docs)
	require.NoError(t, err)
	assert.Equal(t, []string{"another", "search", "wiki_search"}, names(merged), "sorted by name")
	res, err := merged[2].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	_, wikiCalls := wikiSrv.counts()
	_, docsCalls := docsSrv.counts()
	assert.Equal(t, []int{1, 0}, []int{wikiCalls, docsCalls}, "each registration calls its own server")

	// Cross-server shadowing: a second server binding the same local name.
	shadow, shadowSrv := serverCatalog(t, "shadow", searchBinding(), f.Tool)
	for _, catalogs := range [][]*purramcp.Catalog{{docs, shadow}, {shadow, docs}, {docs, docs}, {wiki, docs, shadow}} {
		defs, err := purramcp.Merge(catalogs...)
		assert.Nil(t, defs)
		assert.Equal(t, &purramcp.Error{Code: purramcp.CodeNameConflict}, err)
	}
	_, shadowCalls := shadowSrv.counts()
	assert.Zero(t, shadowCalls)

	for _, catalogs := range [][]*purramcp.Catalog{{nil}, {docs, nil}, {docs, shadow, nil}} {
		defs, err := purramcp.Merge(catalogs...)
		assert.Nil(t, defs)
		assert.Equal(t, purramcp.CodeBindingInvalid, purramcp.CodeOf(err), "a nil catalog is checked first")
	}
	none, err := purramcp.Merge()
	require.NoError(t, err)
	assert.Empty(t, none)
	one, err := purramcp.Merge(docs)
	require.NoError(t, err)
	assert.Equal(t, names(docs.Registrations()), names(one))

	// Fresh values: changing a merged registration changes nothing.
	merged[0].InputSchema["type"] = "string"
	again, err := purramcp.Merge(docs)
	require.NoError(t, err)
	assert.Equal(t, "object", again[0].InputSchema["type"])
}

func TestCatalog_Registration(t *testing.T) {
	f := loadMCPFixture(t)
	catalog, srv := serverCatalog(t, "docs", otherBinding(), f.Tool, json.RawMessage(otherTool))
	regs := catalog.Registrations()
	for _, want := range regs {
		got, ok := catalog.Registration(want.Name)
		require.True(t, ok, want.Name)
		assert.Equal(t, want.Name, got.Name)
		assert.Equal(t, want.Description, got.Description)
		assert.Equal(t, want.InputSchema, got.InputSchema)
		assert.Same(t, want.ArgumentContract, got.ArgumentContract)
		assert.Equal(t, want.Policy, got.Policy)
		assert.Equal(t, want.ConcurrencySafe, got.ConcurrencySafe)
	}
	for _, name := range []string{"", "Search", "remote.search", "searc", "search_", "zzz"} {
		got, ok := catalog.Registration(name)
		assert.False(t, ok, name)
		assert.Equal(t, purramcp.ToolDefinition{}, got, name)
	}
	reg, _ := catalog.Registration("search")
	reg.InputSchema["type"] = "string"
	again, _ := catalog.Registration("search")
	assert.Equal(t, "object", again.InputSchema["type"], "a fresh value each time")
	res, err := again.Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
	assert.JSONEq(t, string(argsA), string(srv.lastArguments()))
}
