package purramcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// fuzzPageCodes are the codes discovery may report against a server that
// answers every tools/list with a result (adapter.md §3.5–§3.8, §5).
var fuzzPageCodes = []string{"mcp_binding_missing", "mcp_catalog_limit_exceeded", "mcp_name_conflict",
	"mcp_pagination_invalid", "mcp_result_invalid", "mcp_schema_unsupported", "mcp_tool_unsupported"}

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
// and MaxCatalogBytes (adapter.md §3.5–§3.8). Discovery returns within its
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
				require.Equal(t, "mcp_catalog_limit_exceeded", code, "%s: first page of %d bytes", what, sizes[0])
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
