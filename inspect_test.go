package purramcp_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// inspectVerdicts are the reasons InspectTool gives for the six schemaCases.
var inspectVerdicts = map[string][3]string{ // schema, path, keyword
	"unknown-default-annotation":        {"inputSchema", "$.properties.query", "default"},
	"unknown-vendor-output-annotation":  {"outputSchema", "$", "x-fastmcp-wrap-result"},
	"other-input-dialect":               {"inputSchema", "$", "$schema"},
	"other-output-dialect":              {"outputSchema", "$", "$schema"},
	"nested-dialect":                    {"inputSchema", "$.properties.q", "$schema"},
	"reference-with-recognized-dialect": {"inputSchema", "$", "$ref"},
}

func TestInspect_FixtureCatalogVerdicts(t *testing.T) {
	f := loadMCPFixture(t)
	tools := []json.RawMessage{f.Tool, f.DeclaredDialectTool}
	tools[1] = withField(t, tools[1], "name", "remote.declared")
	for _, sc := range f.SchemaCases {
		t.Run(sc.ID, func(t *testing.T) {
			tools = append(tools, withField(t, sc.Tool, "name", "case."+sc.ID))
		})
	}
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			s := newSDKServer(t, nil, tools...)
			session, monitor := connectSDK(t, s.MCP, version)
			report, err := purramcp.InspectCatalog(t.Context(), session, "fixture",
				purramcp.DiscoveryOptions{Monitor: monitor})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(report.Tools); got != 8 {
				t.Fatalf("len(report.Tools) = %d, want %d", got, 8)
			}
			if report.ProtocolVersion != version {
				t.Errorf("report.ProtocolVersion = %q, want %q", report.ProtocolVersion, version)
			}
			byName := map[string]purramcp.ToolReport{}
			for _, r := range report.Tools {
				byName[r.Name] = r
			}
			for _, name := range []string{"remote.search", "remote.declared"} {
				r := byName[name]
				if !r.Bindable {
					t.Errorf("%s bindable", name)
				}
				if got := r.Code + r.Schema + r.Path + r.Keyword; got != "" {
					t.Errorf("%s has no reason: got %q, want empty", name, got)
				}
				if r.DescriptionBytes != 16 {
					t.Errorf("r.DescriptionBytes = %v, want %v", r.DescriptionBytes, 16)
				}
			}
			if byName["remote.search"].InputSchemaBytes != 187 {
				t.Errorf("the fixture input schema is 187 bytes compact: got %v, want %v", byName["remote.search"].InputSchemaBytes, 187)
			}
			if byName["remote.search"].OutputSchemaBytes != 109 {
				t.Errorf("the fixture output schema is 109 bytes compact: got %v, want %v", byName["remote.search"].OutputSchemaBytes, 109)
			}
			for id, want := range inspectVerdicts {
				r := byName["case."+id]
				if r.Bindable {
					t.Errorf("%v", id)
				}
				if r.Code != purramcp.CodeSchemaUnsupported {
					t.Errorf("%v: got %q, want %q", id, r.Code, purramcp.CodeSchemaUnsupported)
				}
				if got := [3]string{r.Schema, r.Path, r.Keyword}; !reflect.DeepEqual(got, want) {
					t.Errorf("%v: got %v, want %v", id, got, want)
				}
			}
			if got := len(report.Bindings); got != 2 {
				t.Fatalf("len(report.Bindings) = %d, want %d", got, 2)
			}
			if report.Bindings["remote.search"].LocalName != "remote_search" {
				t.Errorf("report.Bindings[\"remote.search\"].LocalName = %q, want %q", report.Bindings["remote.search"].LocalName, "remote_search")
			}
			if report.Bindings["remote.declared"].LocalName != "remote_declared" {
				t.Errorf("report.Bindings[\"remote.declared\"].LocalName = %q, want %q", report.Bindings["remote.declared"].LocalName, "remote_declared")
			}
			if got := len(report.RevisionDigest); got != 64 {
				t.Errorf("len(report.RevisionDigest) = %d, want %d", got, 64)
			}

			// The digest is what a host binding the same tools would get.
			catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", report.Bindings,
				purramcp.DiscoveryOptions{Monitor: monitor})
			if err != nil {
				t.Fatal(err)
			}
			if got := catalog.Snapshot().RevisionDigest; got != report.RevisionDigest {
				t.Errorf("catalog.Snapshot().RevisionDigest = %q, want %q", got, report.RevisionDigest)
			}
		})
	}
}

func TestInspect_ToolReasons(t *testing.T) {
	long := strings.Repeat("d", 8193)
	obj := map[string]any{"type": "object"}
	cases := []struct {
		name string
		tool *mcp.Tool
		lim  purramcp.Limits
		want [4]string // code, schema, path, keyword
	}{
		{"ok", &mcp.Tool{Name: "a", InputSchema: obj}, purramcp.Limits{}, [4]string{}},
		{"bad name", &mcp.Tool{Name: "a b", InputSchema: obj}, purramcp.Limits{},
			[4]string{purramcp.CodeBindingInvalid, "", "$", "name"}},
		{"description", &mcp.Tool{Name: "a", Description: long, InputSchema: obj}, purramcp.Limits{},
			[4]string{purramcp.CodeCatalogLimitExceeded, "", "$", "MaxDescriptionBytes"}},
		{"schema bytes", &mcp.Tool{Name: "a", InputSchema: obj}, purramcp.Limits{MaxSchemaBytes: 16},
			[4]string{purramcp.CodeSchemaUnsupported, "inputSchema", "$", "MaxSchemaBytes"}},
		{"not an object", &mcp.Tool{Name: "a", InputSchema: true}, purramcp.Limits{},
			[4]string{purramcp.CodeSchemaUnsupported, "inputSchema", "$", "schema"}},
		{"root type", &mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "array"}}, purramcp.Limits{},
			[4]string{purramcp.CodeSchemaUnsupported, "inputSchema", "$", "type"}},
		{"unsafe number", &mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object", "maximum": 1e300}}, purramcp.Limits{},
			[4]string{purramcp.CodeSchemaUnsupported, "inputSchema", "$", "schema"}},
		{"output pattern", &mcp.Tool{Name: "a", InputSchema: obj, OutputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"s": map[string]any{"type": "string", "pattern": "x"}}}}, purramcp.Limits{},
			[4]string{purramcp.CodeSchemaUnsupported, "outputSchema", "$.properties.s", "pattern"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := purramcp.InspectTool(tc.tool, tc.lim, purramcp.SchemaPolicy{})
			if err != nil {
				t.Fatalf("%v: %v", tc.name, err)
			}
			if want := tc.want[0] == ""; r.Bindable != want {
				t.Errorf("%v: got %v, want %v", tc.name, r.Bindable, want)
			}
			if got := [4]string{r.Code, r.Schema, r.Path, r.Keyword}; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%v: got %v, want %v", tc.name, got, tc.want)
			}
		})
	}
	_, err := purramcp.InspectTool(nil, purramcp.Limits{}, purramcp.SchemaPolicy{})
	if !errors.Is(err, purramcp.ErrBindingInvalid) {
		t.Errorf("error %v, want one matching %v", err, purramcp.ErrBindingInvalid)
	}
	_, err = purramcp.InspectTool(&mcp.Tool{Name: "a"}, purramcp.Limits{MaxPages: -1}, purramcp.SchemaPolicy{})
	if !errors.Is(err, purramcp.ErrBindingInvalid) {
		t.Errorf("error %v, want one matching %v", err, purramcp.ErrBindingInvalid)
	}
}

// TestInspect_Hints: a report carries what the tool says of itself, each
// hint true only when the tool sets it true, whether or not it binds, and
// leaves both out of its JSON.
func TestInspect_Hints(t *testing.T) {
	yes, no := true, false
	obj := map[string]any{"type": "object"}
	for _, tc := range []struct {
		name                  string
		tool                  *mcp.Tool
		readOnly, destructive bool
	}{
		{"none", &mcp.Tool{Name: "a", InputSchema: obj}, false, false},
		{"read-only", &mcp.Tool{Name: "a", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, true, false},
		{"not destructive", &mcp.Tool{Name: "a", InputSchema: obj,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no}}, true, false},
		{"destructive", &mcp.Tool{Name: "a", InputSchema: obj, Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, false, true},
		{"unbindable", &mcp.Tool{Name: "a b", InputSchema: obj,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}}, true, true},
	} {
		r, err := purramcp.InspectTool(tc.tool, purramcp.Limits{}, purramcp.SchemaPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		if r.ReadOnlyHint != tc.readOnly || r.DestructiveHint != tc.destructive {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, r.ReadOnlyHint, r.DestructiveHint, tc.readOnly, tc.destructive)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "Hint") {
			t.Errorf("%s: JSON %s shows a hint", tc.name, b)
		}
	}
}

// TestInspect_DigestBound: 256 bindable tools whose listing fits the limits
// but whose digest input passes its bound (binding them all fails
// DiscoverTools mcp_catalog_limit_exceeded) are still each reported, with
// their default bindings and no digest; 10 bytes less padding per field
// gives the digest DiscoverTools gives.
func TestInspect_DigestBound(t *testing.T) {
	n := purramcp.DefaultLimits().MaxTools
	for _, tc := range []struct {
		pad    int
		digest bool
	}{{memoryPadOverDigest, false}, {memoryPad, true}} {
		server, _ := memoryServer(n, tc.pad)
		cs, monitor := connectSDK(t, server, "")
		report, err := purramcp.InspectCatalog(t.Context(), cs, "memory", purramcp.DiscoveryOptions{Monitor: monitor})
		if err != nil {
			t.Fatalf("pad %d: %v", tc.pad, err)
		}
		bindable := 0
		for _, r := range report.Tools {
			if r.Bindable {
				bindable++
			}
		}
		if bindable != n || len(report.Bindings) != n {
			t.Errorf("pad %d: %d bindable, %d bindings, want %d", tc.pad, bindable, len(report.Bindings), n)
		}
		catalog, err := purramcp.DiscoverTools(t.Context(), cs, "memory", report.Bindings, purramcp.DiscoveryOptions{Monitor: monitor})
		if !tc.digest {
			if report.RevisionDigest != "" {
				t.Errorf("pad %d: RevisionDigest = %q, want \"\"", tc.pad, report.RevisionDigest)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
				t.Errorf("pad %d: DiscoverTools: got %q, want %q", tc.pad, got, purramcp.CodeCatalogLimitExceeded)
			}
			continue
		}
		if err != nil {
			t.Fatalf("pad %d: %v", tc.pad, err)
		}
		if got := catalog.Snapshot().RevisionDigest; got != report.RevisionDigest {
			t.Errorf("pad %d: RevisionDigest = %q, want %q", tc.pad, report.RevisionDigest, got)
		}
	}
}

// TestInspect_OneListing: a server that shows the first listing a 6-byte
// description and every later one a 6,000-byte one cannot make the report
// and the digest disagree: InspectCatalog lists once, and its digest is the
// one DiscoverTools gives for that first listing.
func TestInspect_OneListing(t *testing.T) {
	f := loadMCPFixture(t)
	short := string(withField(t, f.Tool, "description", "short!"))
	long := string(withField(t, f.Tool, "description", strings.Repeat("L", 6000)))
	raw := &rawServer{pages: []string{page("", short), page("", long)}}
	h := rawHarness(t, raw)
	report, err := purramcp.InspectCatalog(t.Context(), h.session, "fixture", purramcp.DiscoveryOptions{Monitor: h.monitor})
	if err != nil {
		t.Fatal(err)
	}
	lists, calls := h.counts()
	if lists != 1 {
		t.Errorf("one listing: got %v, want %v", lists, 1)
	}
	if calls != 0 {
		t.Errorf("calls = %v, want 0", calls)
	}
	if got := len(report.Tools); got != 1 {
		t.Fatalf("len(report.Tools) = %d, want %d", got, 1)
	}
	if report.Tools[0].DescriptionBytes != 6 {
		t.Errorf("report.Tools[0].DescriptionBytes = %v, want %v", report.Tools[0].DescriptionBytes, 6)
	}

	// The same bindings over a server that only ever shows the short listing.
	ref := rawHarness(t, &rawServer{pages: []string{page("", short)}})
	catalog, err := purramcp.DiscoverTools(t.Context(), ref.session, "fixture", report.Bindings, purramcp.DiscoveryOptions{Monitor: ref.monitor})
	if err != nil {
		t.Fatal(err)
	}
	if want := catalog.Snapshot().RevisionDigest; report.RevisionDigest != want {
		t.Errorf("digest of the reported listing: got %q, want %q", report.RevisionDigest, want)
	}
}

// TestInspect_SuggestedTitleBounded: a remote title longer than
// MaxDescriptionBytes (202,499 bytes, as a hostile server sent) never reaches
// a suggested binding's Policy.Title or the model-visible description; the
// remote name stands in. A title that fits is kept.
func TestInspect_SuggestedTitleBounded(t *testing.T) {
	f := loadMCPFixture(t)
	huge := strings.Repeat("T", 202_499)
	for _, tc := range []struct {
		id, title, want string
		lim             purramcp.Limits
	}{
		{"huge_title", huge, "remote.search", purramcp.Limits{}},
		{"title_over_limit", strings.Repeat("t", 101), "remote.sea", purramcp.Limits{MaxDescriptionBytes: 10}},
		{"title_fits", "  Search things ", "Search things", purramcp.Limits{}},
	} {
		tool := withField(t, withField(t, f.Tool, "title", tc.title), "description", "")
		h := rawHarness(t, &rawServer{pages: []string{page("", string(tool))}})
		report, err := purramcp.InspectCatalog(t.Context(), h.session, "fixture", purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.lim})
		if err != nil {
			t.Fatalf("%v: %v", tc.id, err)
		}
		b, ok := report.Bindings["remote.search"]
		if !ok {
			t.Fatalf("%v", tc.id)
		}
		if b.Policy.Title != tc.want {
			t.Errorf("%v: got %q, want %q", tc.id, b.Policy.Title, tc.want)
		}
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", report.Bindings, purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.lim})
		if err != nil {
			t.Fatalf("%v: %v", tc.id, err)
		}
		if got := catalog.Registrations()[0].Description; got != tc.want {
			t.Errorf("%s: model-visible description: got %q, want %q", tc.id, got, tc.want)
		}
	}
}

// reachPolicies are the columns of the reach table (README, docs/reach.md).
var reachPolicies = []purramcp.SchemaPolicy{
	{},
	{DialectEquivalence: true},
	{Annotations: true},
	{DialectEquivalence: true, Annotations: true},
	{ExtendedKeywords: true},
	{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true},
}

// reachWant is, per captured catalog (testdata/catalogs, written by
// scripts/reach.sh), its tool count and its bindable tools under each of
// reachPolicies, as InspectTool measures them.
var reachWant = map[string][7]int{
	"agentdeskai__browser-tools-mcp":                   {14, 9, 14, 9, 14, 9, 14},
	"antv__mcp-server-chart":                           {27, 0, 0, 0, 26, 0, 27},
	"browsermcp__mcp":                                  {12, 0, 12, 0, 12, 0, 12},
	"chrome-devtools-mcp":                              {32, 25, 25, 28, 28, 26, 32},
	"circleci__mcp-server-circleci":                    {13, 0, 10, 0, 12, 0, 13},
	"cyanheads__git-mcp-server":                        {28, 2, 2, 21, 21, 2, 28},
	"exa-mcp-server":                                   {2, 0, 2, 0, 2, 0, 2},
	"executeautomation__playwright-mcp-server":         {33, 28, 28, 28, 28, 33, 33},
	"kimtaeyoon83__mcp-server-youtube-transcript":      {1, 0, 0, 1, 1, 0, 1},
	"mastra__mcp-docs-server":                          {9, 0, 8, 0, 9, 0, 9},
	"mcp-server-kubernetes":                            {23, 5, 5, 23, 23, 5, 23},
	"modelcontextprotocol__server-everything":          {13, 0, 7, 0, 13, 0, 13},
	"modelcontextprotocol__server-filesystem":          {14, 0, 10, 0, 14, 0, 14},
	"modelcontextprotocol__server-github":              {26, 0, 26, 0, 26, 0, 26},
	"modelcontextprotocol__server-memory":              {9, 0, 9, 0, 9, 0, 9},
	"modelcontextprotocol__server-postgres":            {1, 1, 1, 1, 1, 1, 1},
	"modelcontextprotocol__server-sequential-thinking": {1, 0, 1, 0, 1, 0, 1},
	"mongodb-mcp-server":                               {27, 11, 11, 14, 14, 17, 27},
	"notionhq__notion-mcp-server":                      {24, 0, 0, 0, 0, 0, 24},
	"openbnb__mcp-server-airbnb":                       {2, 2, 2, 2, 2, 2, 2},
	"pinecone-database__mcp":                           {9, 0, 5, 0, 6, 0, 9},
	"playwright__mcp":                                  {25, 21, 21, 24, 24, 22, 25},
	"shopify__dev-mcp":                                 {5, 0, 2, 0, 2, 0, 4},
	"task-master-ai":                                   {7, 0, 5, 0, 7, 0, 7},
	"upstash__context7-mcp":                            {2, 2, 2, 2, 2, 2, 2},
}

// TestReach_Catalogs: the bindable tools of the captured real-server
// catalogs, per policy, exactly; and the total under all three policies.
func TestReach_Catalogs(t *testing.T) {
	files, err := filepath.Glob("testdata/catalogs/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(files); got != len(reachWant) {
		t.Fatalf("one row per captured catalog: len = %d, want %d", got, len(reachWant))
	}
	var total [7]int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var saved struct {
			Tools []*mcp.Tool `json:"tools"` // decoded as a go-sdk client decodes tools/list
		}
		if err := json.Unmarshal(raw, &saved); err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		var got [7]int
		got[0] = len(saved.Tools)
		for i, policy := range reachPolicies {
			for _, tool := range saved.Tools {
				r, err := purramcp.InspectTool(tool, purramcp.Limits{}, policy)
				if err != nil {
					t.Fatal(err)
				}
				if r.Bindable {
					got[i+1]++
				}
			}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !reflect.DeepEqual(got, reachWant[name]) {
			t.Errorf("%v: got %v, want %v", name, got, reachWant[name])
		}
		for i := range got {
			total[i] += got[i]
		}
	}
	t.Logf("reach: %v", total)
	if got, limit := total[6]*100, total[0]*95; got < limit {
		t.Errorf("at least 95%% of all tools bind with all three policies: got %v, want >= %v", got, limit)
	}
}
