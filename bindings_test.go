package purramcp_test

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The fixed server of FuzzBindings: six tools, two per page, whose
// bindability under each schema policy is known.
var fuzzBindingTools = []struct {
	name   string
	from   func(fx mcpFixture) json.RawMessage
	policy func(purramcp.SchemaPolicy) bool // binds under the policy
}{
	{"remote.search", func(fx mcpFixture) json.RawMessage { return fx.Tool }, fuzzAlways},
	{"remote.other", func(fx mcpFixture) json.RawMessage { return fx.Tool }, fuzzAlways},
	{"remote.dialect", func(fx mcpFixture) json.RawMessage { return fx.DeclaredDialectTool }, fuzzAlways},
	{"remote.draft7", func(fx mcpFixture) json.RawMessage { return fuzzSchemaCase(fx, "other-input-dialect") },
		func(p purramcp.SchemaPolicy) bool { return p.DialectEquivalence }},
	{"remote.annotated", func(fx mcpFixture) json.RawMessage {
		return fuzzSchemaCase(fx, "unknown-default-annotation")
	}, func(p purramcp.SchemaPolicy) bool { return p.Annotations }},
	{"remote.vendor", func(fx mcpFixture) json.RawMessage {
		return fuzzSchemaCase(fx, "unknown-vendor-output-annotation")
	}, func(purramcp.SchemaPolicy) bool { return false }},
}

func fuzzAlways(purramcp.SchemaPolicy) bool { return true }

func fuzzSchemaCase(fx mcpFixture, id string) json.RawMessage {
	for _, sc := range fx.SchemaCases {
		if sc.ID == id {
			return sc.Tool
		}
	}
	panic("fuzz: no schema case " + id)
}

// fuzzBindingSpec turns FuzzBindings' text into bindings, in input order:
// one per line, tab-separated remote name, local name, mode, title, risk
// level and flags ('n': nil scope, 'c': concurrency safe). A repeated remote
// name keeps its last line.
func fuzzBindingSpec(text string) (remotes []string, bindings map[string]purramcp.ToolBinding) {
	bindings = map[string]purramcp.ToolBinding{}
	if text == "" {
		return nil, bindings // no bindings at all
	}
	for _, line := range strings.Split(text, "\n") {
		field := strings.Split(line, "\t")
		field = append(field, make([]string, max(0, 6-len(field)))...)
		b := purramcp.ToolBinding{LocalName: field[1], Scope: purramcp.Unscoped,
			Policy:          purramcp.ToolPolicy{Mode: field[2], Title: field[3], RiskLevel: field[4]},
			ConcurrencySafe: strings.Contains(field[5], "c")}
		if strings.Contains(field[5], "n") {
			b.Scope = nil
		}
		remotes, bindings[field[0]] = append(remotes, field[0]), b
	}
	return remotes, bindings
}

// Reference rules for binding names, written apart from bindings.go: a
// remote name of 1–128 of [A-Za-z0-9_.-], a local name of an ASCII letter
// or _ then up to 63 of [A-Za-z0-9_].
var (
	fuzzRemoteName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	fuzzLocalName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// fuzzExpectBindings returns the code discovery must fail with before any
// request, or "" when bindings, server id and limits are all valid.
func fuzzExpectBindings(bindings map[string]purramcp.ToolBinding, serverID string, l purramcp.Limits) string {
	for _, f := range []struct{ v, max int }{{l.MaxPages, 32}, {l.MaxTools, 256}, {l.MaxCatalogBytes, 1 << 20},
		{l.MaxSchemaBytes, 65536}, {l.MaxDescriptionBytes, 8192}, {l.MaxResultBytes, 65536},
		{l.MaxContentBlocks, 128}} {
		if f.v < 0 || f.v > f.max {
			return purramcp.CodeBindingInvalid
		}
	}
	if l.Timeout != 0 && (l.Timeout < time.Millisecond || l.Timeout > 5*time.Minute) {
		return purramcp.CodeBindingInvalid
	}
	if !fuzzRemoteName.MatchString(serverID) {
		return purramcp.CodeBindingInvalid
	}
	locals := map[string]bool{}
	for _, remote := range slices.Sorted(maps.Keys(bindings)) {
		b := bindings[remote]
		title := fuzzTrimJS(b.Policy.Title)
		if !fuzzRemoteName.MatchString(remote) || !fuzzLocalName.MatchString(b.LocalName) ||
			b.Policy.Mode != "read" || (b.Policy.RiskLevel != "" && b.Policy.RiskLevel != "read") ||
			title == "" || !utf8.ValidString(title) || b.Scope == nil {
			return purramcp.CodeBindingInvalid
		}
		if locals[b.LocalName] {
			return purramcp.CodeNameConflict
		}
		locals[b.LocalName] = true
	}
	maxTools := l.MaxTools
	if maxTools == 0 {
		maxTools = 256
	}
	if len(bindings) == 0 || len(bindings) > maxTools {
		return purramcp.CodeBindingInvalid
	}
	return ""
}

// fuzzExpectServer returns the outcome, under default limits, of valid
// bindings against the fixed server: the first bound tool (in listing
// order) that does not bind under policy fails mcp_schema_unsupported,
// else a bound name the server lacks fails mcp_binding_missing.
func fuzzExpectServer(bindings map[string]purramcp.ToolBinding, policy purramcp.SchemaPolicy) string {
	listed := map[string]bool{}
	for _, tool := range fuzzBindingTools {
		listed[tool.name] = true
		if _, bound := bindings[tool.name]; bound && !tool.policy(policy) {
			return purramcp.CodeSchemaUnsupported
		}
	}
	for remote := range bindings {
		if !listed[remote] {
			return purramcp.CodeBindingMissing
		}
	}
	return ""
}

// FuzzBindings discovers fuzzed bindings (names, local names, titles,
// policies, flags), server id, limits and schema policy against one fixed
// go-sdk server per process. The outcome is
// deterministic and independent of map order (the same input twice, from
// maps filled in opposite orders, gives the same code and digest); a
// failure before any request is exactly what fuzzExpectBindings says and
// sends no tools/list; other failures have known codes; under default
// limits the outcome is exactly fuzzExpectServer's; a catalog passes
// fuzzCheckCatalog.
func FuzzBindings(f *testing.F) {
	fx := loadMCPFixture(f)
	tools := make([]json.RawMessage, len(fuzzBindingTools))
	for i, tool := range fuzzBindingTools {
		tools[i] = withField(f, tool.from(fx), "name", tool.name)
	}
	server := newSDKServerOptions(f, &mcp.ServerOptions{PageSize: 2,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}}, nil, tools...)
	h := sdkHarness(f, server, "")

	seeds := fuzzBindingSeeds()
	if got := len(seeds); got != 16 {
		f.Fatalf("seed count: len = %d, want %d", got, 16)
	}
	for _, s := range seeds {
		f.Add(s, "fixture", 0, 0, 0, 0, 0, int64(0), uint8(0))
	}
	f.Add(seeds[0], "", 0, 0, 0, 0, 0, int64(0), uint8(0))
	f.Add(seeds[0], "fixture", 2, 0, 0, 0, 0, int64(0), uint8(0))   // pages exhausted
	f.Add(seeds[0], "fixture", 0, 5, 0, 0, 0, int64(0), uint8(0))   // more tools than MaxTools
	f.Add(seeds[0], "fixture", 0, 0, 100, 0, 0, int64(0), uint8(0)) // catalog bytes
	f.Add(seeds[0], "fixture", 0, 0, 0, 10, 0, int64(0), uint8(0))  // schema bytes
	f.Add(seeds[0], "fixture", 0, 0, 0, 0, 10, int64(0), uint8(0))  // description bytes
	f.Add(seeds[0], "fixture", 33, 0, 0, 0, 0, int64(0), uint8(0))  // out of range
	f.Add(seeds[0], "fixture", 0, -1, 0, 0, 0, int64(0), uint8(0))  // out of range
	f.Add(seeds[0], "fixture", 0, 0, 0, 0, 0, int64(time.Hour), uint8(0))
	f.Add(seeds[0], "fixture", 0, 0, 0, 0, 0, int64(time.Microsecond), uint8(0))
	f.Add(seeds[3], "fixture", 0, 0, 0, 0, 0, int64(0), uint8(3))

	f.Fuzz(func(t *testing.T, spec, serverID string, maxPages, maxTools, maxCatalogBytes, maxSchemaBytes,
		maxDescriptionBytes int, timeout int64, policyBits uint8) {
		limits := purramcp.Limits{MaxPages: maxPages, MaxTools: maxTools, MaxCatalogBytes: maxCatalogBytes,
			MaxSchemaBytes: maxSchemaBytes, MaxDescriptionBytes: maxDescriptionBytes, Timeout: time.Duration(timeout)}
		if limits.Timeout >= time.Millisecond && limits.Timeout < 10*time.Second {
			limits.Timeout = 10 * time.Second // valid, and never reached: the outcome stays deterministic
		}
		policy := purramcp.SchemaPolicy{DialectEquivalence: policyBits&1 != 0, Annotations: policyBits&2 != 0}
		remotes, bindings := fuzzBindingSpec(spec)
		reversed := map[string]purramcp.ToolBinding{} // the same bindings, filled in the opposite order
		for _, r := range slices.Backward(remotes) {
			if _, done := reversed[r]; !done {
				reversed[r] = bindings[r]
			}
		}
		what := "spec " + strings.ReplaceAll(spec, "\n", " | ")
		before, _ := h.counts()
		var codes, digests [2]string
		for i, b := range []map[string]purramcp.ToolBinding{bindings, reversed} {
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, serverID, b,
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits, Policy: policy})
			if err != nil {
				codes[i] = fuzzCheckError(t, catalog, err, append([]string{purramcp.CodeBindingInvalid}, fuzzPageCodes...),
					what)
				continue
			}
			fuzzCheckCatalog(t, catalog, bindings, h.monitor.ProtocolVersion(), what)
			digests[i] = catalog.Snapshot().RevisionDigest
		}
		if codes[1] != codes[0] {
			t.Fatalf("%s: code depends on map order: got %q, want %q", what, codes[1], codes[0])
		}
		if digests[1] != digests[0] {
			t.Fatalf("%s: digest depends on map order: got %q, want %q", what, digests[1], digests[0])
		}
		after, _ := h.counts()

		want := fuzzExpectBindings(bindings, serverID, limits)
		if want != "" {
			if codes[0] != want {
				t.Fatalf("%s: got %q, want %q", what, codes[0], want)
			}
			if after != before {
				t.Fatalf("%s: tools/list requests for invalid bindings: got %v, want %v", what, after, before)
			}
			return
		}
		if codes[0] == purramcp.CodeBindingInvalid {
			t.Fatalf("%s: got %q, want anything else", what, codes[0])
		}
		if codes[0] == purramcp.CodeNameConflict {
			t.Fatalf("%s: got %q, want anything else", what, codes[0])
		}
		if codes[0] != purramcp.CodeSchemaUnsupported { // the envelope contract may fail a tiny MaxSchemaBytes first
			if after <= before {
				t.Fatalf("%s: no tools/list: got %v, want > %v", what, after, before)
			}
		}
		if limits == (purramcp.Limits{Timeout: limits.Timeout}) {
			if want := fuzzExpectServer(bindings, policy); codes[0] != want {
				t.Fatalf("%s under default limits: got %q, want %q", what, codes[0], want)
			}
		}
	})
}

// fuzzBindingSeeds are binding specs: the fixture's binding, every fixed
// tool bound, and each binding rule broken once.
func fuzzBindingSeeds() []string {
	line := func(fields ...string) string { return strings.Join(fields, "\t") }
	search := line("remote.search", "search", "read", "Search", "", "c")
	all := []string{search}
	for _, tool := range fuzzBindingTools[1:] {
		local := strings.TrimPrefix(tool.name, "remote.")
		all = append(all, line(tool.name, local, "read", " Title "+local+"\u3000", "read", ""))
	}
	return []string{
		search,
		search + "\n" + line("remote.other", "another", "read", "Other", "", ""),
		strings.Join(all, "\n"),
		strings.Join(all[:3], "\n") + "\n" + all[3],
		search + "\n" + line("remote.missing", "missing", "read", "Missing", "", ""),
		line("remote.search", "search", "write", "Search", "", ""),
		line("remote.search", "search", "read", " \u00a0\ufeff", "", ""),
		line("remote.search", "search", "read", "Search", "low", ""),
		line("remote.search", "search", "read", "Search", "", "n"),
		line("remote.search", "9search", "read", "Search", "", ""),
		line("remote search", "search", "read", "Search", "", ""),
		search + "\n" + line("remote.other", "search", "read", "Other", "", ""),
		search + "\n" + line("remote.bad name", "search", "read", "Other", "", ""),
		line("remote.search", "search", "read", "Search\xff", "", ""),
		"",
		search + "\n" + search,
	}
}

// TestBehaviorA1_NonReadPolicy: a policy mode other than "read" (TS "write",
// Py "propose") fails mcp_binding_invalid before any request.
func TestBehaviorA1_NonReadPolicy(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for _, mode := range []string{"write", "propose", "confirm", "", "READ", " read"} {
		bindings := searchBinding()
		b := bindings["remote.search"]
		b.Policy = purramcp.ToolPolicy{Mode: mode, Title: "Write"}
		bindings["remote.search"] = b
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		if catalog != nil {
			t.Errorf("mode %q: got %v, want nil", mode, catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("mode %q: got %q, want %q", mode, got, purramcp.CodeBindingInvalid)
		}
	}
	lists, _ := h.counts()
	if lists != 0 {
		t.Errorf("A1: no tools/list sent: got %v, want 0", lists)
	}
}

// TestBehaviorA2_DuplicateLocalName: two bindings with one local name fail
// mcp_name_conflict before any request, whatever the map order.
func TestBehaviorA2_DuplicateLocalName(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	b := searchBinding()["remote.search"]
	for _, bindings := range []map[string]purramcp.ToolBinding{
		{"remote.search": b, "other": b},
		{"remote.search": b, "a.first": b},
	} {
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeNameConflict {
			t.Errorf("A2 bindings %v: got %q, want %q", len(bindings), got, purramcp.CodeNameConflict)
		}
	}
	lists, _ := h.counts()
	if lists != 0 {
		t.Errorf("A2: lists stays empty: got %v, want 0", lists)
	}
}

// TestBehaviorA3_BindingsCopied: changing the bindings afterwards changes nothing.
func TestBehaviorA3_BindingsCopied(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	bindings := searchBinding()
	b := bindings["remote.search"]
	b.Policy.Title = "  Search\n"
	bindings["remote.search"] = b
	catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings,
		purramcp.DiscoveryOptions{Monitor: h.monitor})
	if err != nil {
		t.Fatal(err)
	}
	b.LocalName = "mutated"
	bindings["remote.search"] = b
	delete(bindings, "remote.search")
	if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
		t.Errorf("title stored trimmed: got %q, want %q", got, f.RevisionDigest)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != 1 {
		t.Fatalf("len(regs) = %d, want %d", got, 1)
	}
	if regs[0].Name != "search" {
		t.Errorf("regs[0].Name = %q, want %q", regs[0].Name, "search")
	}
	if regs[0].Policy.Title != "Search" {
		t.Errorf("regs[0].Policy.Title = %q, want %q", regs[0].Policy.Title, "Search")
	}
}

// TestBindings_Validation covers binding, server id and limit validation
// before any request: each invalid one fails mcp_binding_invalid.
func TestBindings_Validation(t *testing.T) {
	f := loadMCPFixture(t)
	ok := searchBinding()["remote.search"]
	with := func(edit func(*purramcp.ToolBinding)) map[string]purramcp.ToolBinding {
		b := ok
		edit(&b)
		return map[string]purramcp.ToolBinding{"remote.search": b}
	}
	for _, tc := range []struct {
		id       string
		bindings map[string]purramcp.ToolBinding
		limits   purramcp.Limits
		serverID string
		want     string
	}{
		{"nil_bindings", nil, purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"no_bindings", map[string]purramcp.ToolBinding{}, purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"more_than_maxTools", map[string]purramcp.ToolBinding{"a": ok, "b": with(func(b *purramcp.ToolBinding) { b.LocalName = "b" })["remote.search"]}, purramcp.Limits{MaxTools: 1}, "fixture", purramcp.CodeBindingInvalid},
		{"bad_server_id", searchBinding(), purramcp.Limits{}, "bad id", purramcp.CodeBindingInvalid},
		{"long_server_id", searchBinding(), purramcp.Limits{}, strings.Repeat("s", 129), purramcp.CodeBindingInvalid},
		{"bad_remote_name", map[string]purramcp.ToolBinding{"remote search": ok}, purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"bad_local_name", with(func(b *purramcp.ToolBinding) { b.LocalName = "1search" }), purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"long_local_name", with(func(b *purramcp.ToolBinding) { b.LocalName = strings.Repeat("s", 65) }), purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"risk_write", with(func(b *purramcp.ToolBinding) { b.Policy.RiskLevel = "write" }), purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"blank_title", with(func(b *purramcp.ToolBinding) { b.Policy.Title = " \t\u00a0\ufeff\u2028" }), purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"nil_scope", with(func(b *purramcp.ToolBinding) { b.Scope = nil }), purramcp.Limits{}, "fixture", purramcp.CodeBindingInvalid},
		{"bad_limits", searchBinding(), purramcp.Limits{MaxPages: 33}, "fixture", purramcp.CodeBindingInvalid},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
			catalog, err := purramcp.DiscoverTools(t.Context(), h.session, tc.serverID, tc.bindings,
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.limits})
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, got, tc.want)
			}
			lists, _ := h.counts()
			if lists != 0 {
				t.Errorf("%s: nothing sent: got %v, want 0", tc.id, lists)
			}
		})
	}
	_, err := purramcp.DiscoverTools(t.Context(), nil, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: purramcp.NewCatalogMonitor()})
	if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
		t.Errorf("nil session: got %q, want %q", got, purramcp.CodeBindingInvalid)
	}
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	_, err = purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(), purramcp.DiscoveryOptions{})
	if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
		t.Errorf("nil monitor: got %q, want %q", got, purramcp.CodeBindingInvalid)
	}
}
