package purramcp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"purra.dev/purramcp"
)

// serverCatalog discovers bindings from a go-sdk server listing tools.
func serverCatalog(t *testing.T, serverID string, bindings map[string]purramcp.ToolBinding, tools ...json.RawMessage) (*purramcp.Catalog, *sdkServer) {
	t.Helper()
	srv := newSDKServer(t, nil, tools...)
	h := sdkHarness(t, srv, "")
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, serverID, bindings, purramcp.DiscoveryOptions{Monitor: h.monitor})
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(merged), []string{"another", "search", "wiki_search"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sorted by name: got %v, want %v", got, want)
	}
	res, err := merged[2].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	_, wikiCalls := wikiSrv.counts()
	_, docsCalls := docsSrv.counts()
	if got, want := []int{wikiCalls, docsCalls}, []int{1, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("each registration calls its own server: got %v, want %v", got, want)
	}

	// Cross-server shadowing: a second server binding the same local name.
	shadow, shadowSrv := serverCatalog(t, "shadow", searchBinding(), f.Tool)
	for _, catalogs := range [][]*purramcp.Catalog{{docs, shadow}, {shadow, docs}, {docs, docs}, {wiki, docs, shadow}} {
		defs, err := purramcp.Merge(catalogs...)
		if defs != nil {
			t.Errorf("defs = %v, want nil", defs)
		}
		if want := (&purramcp.Error{Code: purramcp.CodeNameConflict}); !reflect.DeepEqual(err, want) {
			t.Errorf("err = %v, want %v", err, want)
		}
	}
	_, shadowCalls := shadowSrv.counts()
	if shadowCalls != 0 {
		t.Errorf("shadowCalls = %v, want 0", shadowCalls)
	}

	for _, catalogs := range [][]*purramcp.Catalog{{nil}, {docs, nil}, {docs, shadow, nil}} {
		defs, err := purramcp.Merge(catalogs...)
		if defs != nil {
			t.Errorf("defs = %v, want nil", defs)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("a nil catalog is checked first: got %q, want %q", got, purramcp.CodeBindingInvalid)
		}
	}
	none, err := purramcp.Merge()
	if err != nil {
		t.Fatal(err)
	}
	if len(none) != 0 {
		t.Errorf("none = %v, want empty", none)
	}
	one, err := purramcp.Merge(docs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(one), names(docs.Registrations()); !reflect.DeepEqual(got, want) {
		t.Errorf("names(one) = %v, want %v", got, want)
	}

	// Fresh values: changing a merged registration changes nothing.
	merged[0].InputSchema["type"] = "string"
	again, err := purramcp.Merge(docs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again[0].InputSchema["type"], "object") {
		t.Errorf("again[0].InputSchema[\"type\"] = %v, want %v", again[0].InputSchema["type"], "object")
	}
}

func TestCatalog_Registration(t *testing.T) {
	f := loadMCPFixture(t)
	catalog, srv := serverCatalog(t, "docs", otherBinding(), f.Tool, json.RawMessage(otherTool))
	regs := catalog.Registrations()
	for _, want := range regs {
		got, ok := catalog.Registration(want.Name)
		if !ok {
			t.Fatalf("%v", want.Name)
		}
		if got.Name != want.Name {
			t.Errorf("got.Name = %q, want %q", got.Name, want.Name)
		}
		if got.Description != want.Description {
			t.Errorf("got.Description = %q, want %q", got.Description, want.Description)
		}
		if !reflect.DeepEqual(got.InputSchema, want.InputSchema) {
			t.Errorf("got.InputSchema = %v, want %v", got.InputSchema, want.InputSchema)
		}
		if got.ArgumentContract != want.ArgumentContract {
			t.Errorf("got.ArgumentContract = %v, want %v", got.ArgumentContract, want.ArgumentContract)
		}
		if !reflect.DeepEqual(got.Policy, want.Policy) {
			t.Errorf("got.Policy = %v, want %v", got.Policy, want.Policy)
		}
		if got.ConcurrencySafe != want.ConcurrencySafe {
			t.Errorf("got.ConcurrencySafe = %v, want %v", got.ConcurrencySafe, want.ConcurrencySafe)
		}
	}
	for _, name := range []string{"", "Search", "remote.search", "searc", "search_", "zzz"} {
		got, ok := catalog.Registration(name)
		if ok {
			t.Errorf("%v", name)
		}
		if want := (purramcp.ToolDefinition{}); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: got %v, want %v", name, got, want)
		}
	}
	reg, _ := catalog.Registration("search")
	reg.InputSchema["type"] = "string"
	again, _ := catalog.Registration("search")
	if !reflect.DeepEqual(again.InputSchema["type"], "object") {
		t.Errorf("a fresh value each time: got %v, want %v", again.InputSchema["type"], "object")
	}
	res, err := again.Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
	if got, want := string(srv.lastArguments()), string(argsA); !jsonEqual(t, got, want) {
		t.Errorf("got %s, want JSON equal to %s", got, want)
	}
}
