package purramcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"purra.dev/purramcp/internal/bounding"
	"purra.dev/purramcp/internal/wire"
)

// listPages pages tools/list for discovery and the
// inspector alike. Before each page: the monitor check, then ctx (no request
// once it has ended); after it: the monitor check again, the catalog byte and
// tool totals, then each tool in order: visit gets the tool, its schema
// sizes and whether its remote name was seen before (visit must then fail
// mcp_name_conflict). An empty
// cursor ends paging; an oversized or repeated one fails; so does running
// out of pages. Pages may be shared with go-sdk's cache: read only.
//
// sent, when not nil, counts the tools/list requests sent.
func listPages(ctx context.Context, session *mcp.ClientSession, m *CatalogMonitor, revision uint64,
	lim Limits, sent *int, visit func(tool *mcp.Tool, schemaSizes [2]int, repeated bool) error) error {
	seen, cursors := map[string]bool{}, map[string]bool{}
	total, cursor := 0, ""
	for range lim.MaxPages {
		if err := m.Check(revision); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ErrCanceled // no request is sent once ctx has ended
		}
		if sent != nil {
			*sent++
		}
		result, err := bounded(ctx, lim.Timeout, m, bounding.ToolsCap(lim.MaxCatalogBytes-total, lim.MaxTools-len(seen)), func(ctx context.Context) (*mcp.ListToolsResult, error) {
			// Fresh params per request (go-sdk writes _meta into
			// them); the first request carries none, so no cursor.
			var params *mcp.ListToolsParams
			if cursor != "" {
				params = &mcp.ListToolsParams{Cursor: cursor}
			}
			return session.ListTools(ctx, params)
		})
		if err != nil {
			return err
		}
		if err := m.Check(revision); err != nil {
			return err
		}
		n, schemaSizes, err := pageCost(result, len(seen), total, lim)
		if err != nil {
			return err
		}
		total += n
		for i, tool := range result.Tools {
			if tool == nil {
				continue // unreachable: go-sdk drops null tools
			}
			repeated := seen[tool.Name]
			seen[tool.Name] = true
			if err := visit(tool, schemaSizes[i], repeated); err != nil {
				return err
			}
		}
		next := result.NextCursor
		if next == "" {
			return nil
		}
		// An oversized or repeated cursor fails: a server cannot loop discovery.
		if len(next) > maxCursorBytes || cursors[next] {
			return fail(CodePaginationInvalid)
		}
		cursors[next] = true
		cursor = next
	}
	return fail(CodeCatalogLimitExceeded) // pages exhausted
}

// pageCost checks one page against the tools seen and the catalog bytes
// counted so far: the tool count first, then the size, counted only up to
// the bytes left; either over fails mcp_catalog_limit_exceeded. It returns
// the page's size and its tools' schema sizes.
func pageCost(result *mcp.ListToolsResult, seen, total int, lim Limits) (int, [][2]int, error) {
	if seen+len(result.Tools) > lim.MaxTools {
		return 0, nil, fail(CodeCatalogLimitExceeded)
	}
	n, schemaSizes, err := wire.PageSize(result, lim.MaxCatalogBytes-total)
	if err != nil || n > lim.MaxCatalogBytes-total {
		return 0, nil, fail(CodeCatalogLimitExceeded)
	}
	return n, schemaSizes, nil
}
