package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// fuzzPageSeparator separates pages in FuzzDiscoverPage's input; a raw NUL
// is never part of JSON text.
const fuzzPageSeparator = "\x00"

// fuzzPageSeeds returns page sequences built from the fixture: the tool
// alone, beside each schema case renamed, the declared-dialect tool, over
// two and three pages, with a repeated, an empty and an oversized cursor, a
// repeated name, an unbound tool only, and the fixture file itself.
func fuzzPageSeeds(t testing.TB, fx mcpFixture) []string {
	t.Helper()
	other := withField(t, fx.Tool, "name", "remote.other")
	join := func(pages ...string) string { return strings.Join(pages, fuzzPageSeparator) }
	seeds := []string{
		join(toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, "", fx.DeclaredDialectTool)),
		join(toolsPage(t, "", other, fx.Tool)),
		join(toolsPage(t, "c1", other), toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, "c1"), toolsPage(t, "c2", other), toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, "c1", fx.Tool), toolsPage(t, "c1", other)),
		join(toolsPage(t, "c1", fx.Tool)), // the page repeats: its cursor does too
		join(`{"tools":[],"nextCursor":""}`, toolsPage(t, "", fx.Tool)),
		join(toolsPage(t, strings.Repeat("c", 513), fx.Tool)),
		join(toolsPage(t, "", fx.Tool, fx.Tool)),
		join(toolsPage(t, "", other)),
		join(`{"tools":[null]}`, toolsPage(t, "", fx.Tool)),
		string(readVector(t, "mcp_tools.json")),
	}
	for _, sc := range fx.SchemaCases {
		seeds = append(seeds, join(toolsPage(t, "", sc.Tool)),
			join(toolsPage(t, "next", withField(t, sc.Tool, "name", "remote.other")), toolsPage(t, "", fx.Tool)))
	}
	return seeds
}

// FuzzDiscoverPage serves fuzzed tools/list pages (tools, cursors and page
// count, separated by NUL) from the raw scripted server and discovers
// remote.search, and remote.other when other is set, under fuzzed MaxPages
// and MaxCatalogBytes. Discovery returns within its
// bounds, never sends more than MaxPages tools/list and no tools/call, and
// returns either a catalog that fuzzCheckCatalog accepts, read from pages
// that fit MaxCatalogBytes and ending on a page without a cursor, or a
// closed-surface *Error with a code from fuzzPageCodes (a first page over
// MaxCatalogBytes: mcp_catalog_limit_exceeded).
func FuzzDiscoverPage(f *testing.F) {
	fx := loadMCPFixture(f)
	seeds := fuzzPageSeeds(f, fx)
	require.Len(f, seeds, 13+2*6, "seed count")
	for i, s := range seeds {
		f.Add(s, uint8(0), uint32(0), i%2 == 0, i%3 == 0)
	}
	f.Add(seeds[4], uint8(2), uint32(0), false, false) // pages exhausted
	f.Add(seeds[0], uint8(0), uint32(50), true, false) // first page over
	f.Fuzz(func(t *testing.T, text string, maxPages uint8, maxCatalogBytes uint32, modern, other bool) {
		var pages []string
		for _, p := range strings.Split(text, fuzzPageSeparator) {
			if json.Valid([]byte(p)) {
				pages = append(pages, p) // the raw server can only send JSON
			}
		}
		if len(pages) == 0 {
			return
		}
		limits := purramcp.Limits{MaxPages: fuzzLimit(uint32(maxPages), 32),
			MaxCatalogBytes: fuzzLimit(maxCatalogBytes, 1<<20), Timeout: 10 * time.Second}
		resolved, err := purramcp.ResolveLimits(limits)
		require.NoError(t, err)
		bindings := searchBinding()
		if other {
			bindings = otherBinding()
		}
		fuzzNoGoroutineGrowth(t)
		h := rawHarness(t, &rawServer{modern: modern, pages: pages})
		start := time.Now()
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fuzz", bindings,
			purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
		elapsed := time.Since(start)
		lists, calls := h.counts()
		what := "pages " + strings.Join(pages, " | ")
		require.Less(t, elapsed, time.Duration(resolved.MaxPages)*resolved.Timeout, "%s", what)
		require.LessOrEqual(t, lists, resolved.MaxPages, "%s: tools/list requests", what)
		require.GreaterOrEqual(t, lists, 1, "%s: tools/list requests", what)
		require.Zero(t, calls, "%s: tools/call requests", what)

		sizes := fuzzServedSizes(t, pages, lists)
		if err != nil {
			code := fuzzCheckError(t, catalog, err, fuzzPageCodes, what)
			if len(sizes) > 0 && sizes[0] > resolved.MaxCatalogBytes {
				require.Equal(t, purramcp.CodeCatalogLimitExceeded, code, "%s: first page of %d bytes", what, sizes[0])
			}
			return
		}
		fuzzCheckCatalog(t, catalog, bindings, h.monitor.ProtocolVersion(), what)
		require.Len(t, sizes, lists, "%s: go-sdk decodes every page discovery read", what)
		total := 0
		for _, n := range sizes {
			total += n
		}
		require.LessOrEqual(t, total, resolved.MaxCatalogBytes, "%s: catalog bytes", what)
		var last struct {
			NextCursor *string `json:"nextCursor"`
		}
		if json.Unmarshal([]byte(pages[min(lists, len(pages))-1]), &last) == nil && last.NextCursor != nil {
			require.Empty(t, *last.NextCursor, "%s: discovery ended on a page with a cursor", what)
		}
	})
}

// fuzzServedSizes lists the first n pages again from a fresh raw server
// (2025-11-25, so go-sdk caches nothing) and measures each as go-sdk
// delivers it, by the full encoding/json path; it stops at the first page
// go-sdk fails to decode.
func fuzzServedSizes(t *testing.T, pages []string, n int) []int {
	cs, _ := (&rawServer{pages: pages}).start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var sizes []int
	for range n {
		page, err := cs.ListTools(ctx, nil)
		if err != nil {
			break
		}
		size, err := jssize.Size(page)
		require.NoError(t, err, "size of a decoded page")
		sizes = append(sizes, size)
	}
	return sizes
}

// TestBehaviorD1_PaginationSkipsUnbound: cursors [none, "next"]; the unbound
// tool's $ref schema is never compiled and not in the digest (D1, G4).
func TestBehaviorD1_PaginationSkipsUnbound(t *testing.T) {
	f := loadMCPFixture(t)
	unbound := json.RawMessage(`{"name":"unbound","inputSchema":{"type":"object","$ref":"https://example.invalid/private"}}`)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "next", unbound), toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err)
		require.Len(t, catalog.Registrations(), 1)
		cursors := raw.seenCursors()
		require.Len(t, cursors, 2)
		assert.Nil(t, cursors[0], "the first request carries no cursor")
		require.NotNil(t, cursors[1])
		assert.Equal(t, "next", *cursors[1])
		if !modern {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest)
		}
		_, calls := h.counts()
		assert.Zero(t, calls, "D1 modern=%v", modern)
	}
}

// TestBehaviorD2_RepeatedCursor: the same cursor twice fails.
func TestBehaviorD2_RepeatedCursor(t *testing.T) {
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "again")}}
		h := rawHarness(t, raw)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Equal(t, purramcp.CodePaginationInvalid, purramcp.CodeOf(err), "D2 modern=%v", modern)
		lists, calls := h.counts()
		assert.Equal(t, 2, lists, "D2 modern=%v", modern)
		assert.Zero(t, calls, "D2 modern=%v", modern)
	}
}

// TestBehaviorD3_OneListNoRelist: one page without nextCursor is one
// tools/list, and calls never trigger a hidden re-list.
func TestBehaviorD3_OneListNoRelist(t *testing.T) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		reg := discoverWith(t, h, purramcp.Limits{}, nil)
		for range 3 {
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err)
			assert.Empty(t, res.ErrorCode, "D3 at %s", version)
		}
		lists, calls := h.counts()
		assert.Equal(t, 1, lists, "D3 at %s: tools/list requests", version)
		assert.Equal(t, 3, calls, "D3 at %s: tools/call requests", version)
	})
}

// TestDiscover_CursorCycle: A → B → A repeats a cursor seen two pages
// earlier; paging stops there.
func TestDiscover_CursorCycle(t *testing.T) {
	f := loadMCPFixture(t)
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "A", f.Tool), toolsPage(t, "B"), toolsPage(t, "A")}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodePaginationInvalid, purramcp.CodeOf(err), "modern=%v", modern)
		lists, calls := h.counts()
		assert.Equal(t, 3, lists, "modern=%v", modern)
		assert.Zero(t, calls)
		cursors := raw.seenCursors()
		require.Len(t, cursors, 3)
		assert.Nil(t, cursors[0])
		assert.Equal(t, []string{"A", "B"}, []string{*cursors[1], *cursors[2]})
	}
}

// TestGap7_EmptyCursor: purra-mcp rejects a
// present but empty nextCursor. go-sdk decodes "nextCursor":"" and an absent
// nextCursor to the same empty string, so the adapter cannot tell them apart:
// paging ends and discovery succeeds on that page.
func TestGap7_EmptyCursor(t *testing.T) {
	f := loadMCPFixture(t)
	page := `{"tools":[` + string(f.Tool) + `],"nextCursor":""}`
	for _, modern := range modernities {
		raw := &rawServer{modern: modern, pages: []string{page, toolsPage(t, "")}}
		h := rawHarness(t, raw)
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		require.NoError(t, err, "empty cursor ends paging, modern=%v", modern)
		assert.Len(t, catalog.Registrations(), 1)
		lists, _ := h.counts()
		assert.Equal(t, 1, lists, "no second request, modern=%v", modern)
		if !modern {
			assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest)
		}
	}
}

// TestGap7_CursorTooLong: a nextCursor over 512 UTF-8 bytes fails
// mcp_pagination_invalid before it is sent; 512 bytes is allowed.
func TestGap7_CursorTooLong(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		id, cursor string
		ok         bool
	}{
		{"513_ascii", strings.Repeat("c", 513), false},
		{"513_bytes_171_runes", strings.Repeat("猫", 171), false},
		{"512_ascii", strings.Repeat("c", 512), true},
		{"512_bytes_256_runes", strings.Repeat("é", 256), true},
	} {
		raw := &rawServer{pages: []string{toolsPage(t, tc.cursor), toolsPage(t, "", f.Tool)}}
		h := rawHarness(t, raw)
		_, err := discoverDefault(t, h, purramcp.Limits{})
		lists, calls := h.counts()
		assert.Zero(t, calls, tc.id)
		if tc.ok {
			assert.NoError(t, err, "%s is allowed", tc.id)
			assert.Equal(t, 2, lists, tc.id)
			continue
		}
		assert.Equal(t, purramcp.CodePaginationInvalid, purramcp.CodeOf(err), tc.id)
		assert.Equal(t, 1, lists, "%s: the cursor is never sent", tc.id)
	}
}

// TestGap7_DuplicateNameAcrossPages: a remote name repeated on a later page,
// bound or not, fails mcp_name_conflict.
func TestGap7_DuplicateNameAcrossPages(t *testing.T) {
	f := loadMCPFixture(t)
	other := json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`)
	for _, tc := range []struct {
		id    string
		pages []string
	}{
		{"bound", []string{toolsPage(t, "p2", f.Tool), toolsPage(t, "", f.Tool)}},
		{"unbound", []string{toolsPage(t, "p2", other, f.Tool), toolsPage(t, "", other)}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			for _, modern := range modernities {
				h := rawHarness(t, &rawServer{modern: modern, pages: tc.pages})
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				assert.Nil(t, catalog)
				assert.Equal(t, purramcp.CodeNameConflict, purramcp.CodeOf(err), "%s modern=%v", tc.id, modern)
				lists, calls := h.counts()
				assert.Equal(t, 2, lists, "%s modern=%v", tc.id, modern)
				assert.Zero(t, calls)
			}
		})
	}
}

// TestDiscover_OversizedPage: a page over MaxCatalogBytes fails
// mcp_catalog_limit_exceeded, and bytes add up across pages.
func TestDiscover_OversizedPage(t *testing.T) {
	f := loadMCPFixture(t)
	big := func(name string, n int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":{"type":"object"}}`, name, strings.Repeat("d", n)))
	}
	for _, tc := range []struct {
		id        string
		pages     []string
		limits    purramcp.Limits
		wantLists int
	}{
		{"default_limit_one_page", []string{toolsPage(t, "", f.Tool, big("big", purramcp.DefaultLimits().MaxCatalogBytes))}, purramcp.Limits{}, 1},
		{"default_limit_accumulated", []string{toolsPage(t, "p2", f.Tool, big("big1", 600_000)), toolsPage(t, "", big("big2", 600_000))}, purramcp.Limits{}, 2},
		{"lowered_limit_accumulated", []string{toolsPage(t, "p2", f.Tool), toolsPage(t, "", big("big", 100))}, purramcp.Limits{MaxCatalogBytes: 600}, 2},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: tc.pages})
			catalog, err := discoverDefault(t, h, tc.limits)
			assert.Nil(t, catalog)
			assert.Equal(t, purramcp.CodeCatalogLimitExceeded, purramcp.CodeOf(err), tc.id)
			lists, calls := h.counts()
			assert.Equal(t, tc.wantLists, lists, tc.id)
			assert.Zero(t, calls, tc.id)
		})
	}
}

// TestBehaviorE1_MaxPages: the page budget is gone after one page.
func TestBehaviorE1_MaxPages(t *testing.T) {
	catalogLimitCase(t, "E1", purramcp.Limits{MaxPages: 1}, 1)
}

// TestBehaviorE2_MaxTools: page 2 brings the tools seen to 2 > 1.
func TestBehaviorE2_MaxTools(t *testing.T) {
	catalogLimitCase(t, "E2", purramcp.Limits{MaxTools: 1}, 2)
}

// TestBehaviorE3_MaxCatalogBytes: page 1 alone is over 64 bytes.
func TestBehaviorE3_MaxCatalogBytes(t *testing.T) {
	catalogLimitCase(t, "E3", purramcp.Limits{MaxCatalogBytes: 64}, 1)
}

// TestDiscover_PageSizeIsJSSize: the page size discovery charges, with the
// schemas measured apart from the page, equals jssize.Size of the whole page,
// and each schema size it reuses equals jssize.Size of the schema,
// for fixture tools, schema cases, a null schema, annotations, a null tool
// and values JavaScript and Go spell differently.
func TestDiscover_PageSizeIsJSSize(t *testing.T) {
	f := loadMCPFixture(t)
	tools := []*mcp.Tool{sdkTool(t, f.Tool), sdkTool(t, f.DeclaredDialectTool), nil,
		{Name: "odd<&>\u2028", Title: "t\xff", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"minimum": math.Copysign(0, -1), "maximum": 1e21}}}},
		{Name: "null-schema"}}
	for _, sc := range f.SchemaCases {
		tools = append(tools, sdkTool(t, sc.Tool))
	}
	for _, tool := range tools {
		if tool != nil && tool.InputSchema != nil {
			var decoded any // as go-sdk decodes it
			raw, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &decoded))
			tool.InputSchema = decoded
		}
	}
	pages := []*mcp.ListToolsResult{{Tools: tools}, {Tools: tools[:1], NextCursor: "c1"}, {}, {Tools: []*mcp.Tool{}}}
	for i, page := range pages {
		want, err := jssize.Size(page)
		require.NoError(t, err)
		got, schemaSizes, err := purramcp.PageSize(page, math.MaxInt)
		require.NoError(t, err)
		assert.Equal(t, want, got, "page %d", i)
		for _, limit := range []int{0, want / 2, want - 1, want} {
			n, _, err := purramcp.PageSize(page, limit)
			require.NoError(t, err)
			assert.Equal(t, want > limit, n > limit, "page %d under limit %d: %d", i, limit, n)
			if want <= limit {
				assert.Equal(t, want, n, "page %d at limit %d", i, limit)
			}
		}
		require.Len(t, schemaSizes, len(page.Tools), "page %d", i)
		for j, tool := range page.Tools {
			var wantSchemas [2]int
			if tool != nil {
				for k, schema := range []any{tool.InputSchema, tool.OutputSchema} {
					if schema != nil {
						wantSchemas[k], err = jssize.Size(schema)
						require.NoError(t, err)
					}
				}
			}
			assert.Equal(t, wantSchemas, schemaSizes[j], "page %d, tool %d: schema sizes", i, j)
		}
	}
}
