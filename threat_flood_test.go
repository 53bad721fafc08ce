package purramcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// Discovery and result floods (T6). Payloads are sized just
// over the limit they meet, so the suite stays fast.

// sdkMaxDepth is go-sdk's JSON nesting cap for a whole message
// (internal/json defaultMaxDepth); a deeper message ends the session.
const sdkMaxDepth = 1000

// TestThreatT6_FloodsHitLimits: every flood a server can send meets a hard
// limit after a bounded number of pages and bytes, fails closed with a
// stable code and leaves the session usable unless go-sdk itself ends it.
func TestThreatT6_FloodsHitLimits(t *testing.T) {
	t.Run("tool_count_and_pages", threatToolFlood)
	t.Run("limits_only_lower", threatLimitsOnlyLower)
	t.Run("deep_schema", threatDeepSchema)
	t.Run("huge_description", threatHugeDescription)
	t.Run("digest_budget", threatDigestBudget)
	t.Run("result_flood", threatResultFlood)
	t.Run("list_changed_storm", threatListChangedStorm)
	t.Run("hostile_frames_rejected_unread", threatHostileFrames)
	t.Run("hostile_http_frames_rejected_unread", threatHTTPFrames)
	t.Run("hostile_http_floods_rejected_unread", threatHTTPFloods)
	t.Run("hostile_sizing_costs_the_limit", threatSizingCost)
	t.Run("float_overflow_fails_the_page", threatFloatOverflow)
	t.Run("huge_notification_params_dropped", threatHugeNotification)
	t.Run("bounding_layer_every_path", threatBoundingLayerEveryPath)
}

// minimalTools renders n minimal tools named prefix0, prefix1, ….
func minimalTools(prefix string, n int) []string {
	tools := make([]string, n)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name":"%s%d","inputSchema":{"type":"object"}}`, prefix, i)
	}
	return tools
}

// threatToolFlood: 10,000 tools on one page fail after that page; 10,000
// tools on 100 pages fail after 3 pages (300 > MaxTools 256); an endless run
// of fresh cursors stops at MaxPages (32). Each page is under
// MaxCatalogBytes, so the count and page limits are what stop them.
func threatToolFlood(t *testing.T) {
	f := loadMCPFixture(t)
	onePage := page("", append([]string{string(f.Tool)}, minimalTools("t", 10_000)...)...)
	var hundredPages, endless []string
	for i := range 100 {
		hundredPages = append(hundredPages, page(fmt.Sprintf("c%d", i+1), minimalTools(fmt.Sprintf("p%d_", i), 100)...))
	}
	for i := range 40 {
		endless = append(endless, page(fmt.Sprintf("c%d", i+1)))
	}
	for _, tc := range []struct {
		id        string
		pages     []string
		wantLists int
	}{
		{"10000_tools_one_page", []string{onePage}, 1},
		{"10000_tools_100_pages", hundredPages, 3},
		{"endless_fresh_cursors", endless, purramcp.DefaultLimits().MaxPages},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: tc.pages})
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			assert.Nil(t, catalog, "T6 %s", tc.id)
			assert.Equal(t, purramcp.CodeCatalogLimitExceeded, purramcp.CodeOf(err), "T6 %s", tc.id)
			lists, calls := h.counts()
			assert.Equal(t, tc.wantLists, lists, "T6 %s: tools/list requests", tc.id)
			assert.Zero(t, calls, "T6 %s", tc.id)
			assert.NoError(t, h.session.Ping(t.Context(), nil), "T6 %s: session usable", tc.id)
		})
	}
	assert.Less(t, len(onePage), purramcp.DefaultLimits().MaxCatalogBytes, "T6: the one-page flood is under the byte limit")
}

// threatLimitsOnlyLower: a host cannot raise a limit to let a flood in;
// every value above its default fails mcp_binding_invalid before any request.
func threatLimitsOnlyLower(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for _, limits := range []purramcp.Limits{
		{MaxTools: 10_000}, {MaxPages: 1_000}, {MaxCatalogBytes: 16 << 20}, {MaxSchemaBytes: 1 << 20},
		{MaxDescriptionBytes: 1 << 20}, {MaxResultBytes: 16 << 20}, {MaxContentBlocks: 10_000},
	} {
		catalog, err := discoverDefault(t, h, limits)
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodeBindingInvalid, purramcp.CodeOf(err), "T6 limits %+v", limits)
	}
	lists, _ := h.counts()
	assert.Zero(t, lists, "T6: nothing sent")
}

// deepSchema is an input schema whose own JSON nesting depth is depth (at
// least 3): {"type":"object","properties":{"a":items…items{"type":"string"}}}.
func deepSchema(depth int) string {
	k := depth - 3
	return `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, k) +
		`{"type":"string"}` + strings.Repeat(`}`, k) + `}}`
}

// threatDeepSchema: a bound schema as deep as go-sdk delivers (the message
// nests exactly sdkMaxDepth levels: response, result, tools, tool, then the
// schema's 996) fails mcp_schema_unsupported at the profile's depth limit,
// with no stack growth to speak of, and the session stays usable. A
// 1,000-deep schema makes the message deeper than go-sdk accepts: go-sdk
// fails the in-flight tools/list with a decode error (mcp_result_invalid,
// since nothing distinguishes it from other undecodable answers) and ends
// the session; the monitor closes with it, so the next discovery fails
// mcp_connection_closed without a request.
func threatDeepSchema(t *testing.T) {
	deep := func(depth int) string {
		return `{"name":"remote.search","inputSchema":` + deepSchema(depth) + `}`
	}
	h := rawHarness(t, &rawServer{pages: []string{page("", deep(sdkMaxDepth-4))}})
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	assert.Nil(t, catalog)
	assert.Equal(t, purramcp.CodeSchemaUnsupported, purramcp.CodeOf(err), "T6 996-deep schema")
	assert.NoError(t, h.session.Ping(t.Context(), nil), "T6 996-deep schema: session usable")

	synctest.Test(t, func(t *testing.T) {
		h := rawHarness(t, &rawServer{pages: []string{page("", deep(1000))}})
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.CodeResultInvalid, purramcp.CodeOf(err), "T6 1000-deep schema: go-sdk's decode error")
		synctest.Wait()
		require.Error(t, h.monitor.Check(0), "T6 1000-deep schema: go-sdk ended the session")
		_, err = discoverDefault(t, h, purramcp.Limits{})
		assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(err), "T6 1000-deep schema")
		lists, _ := h.counts()
		assert.Equal(t, 1, lists, "T6 1000-deep schema")
	})
}

// threatHugeDescription: a description just over MaxCatalogBytes fails on
// the page's byte count, bound or not; a bound description of 8,193 UTF-8
// bytes fails MaxDescriptionBytes while 8,192 bytes binds.
func threatHugeDescription(t *testing.T) {
	f := loadMCPFixture(t)
	max := purramcp.DefaultLimits()
	described := func(name, description string) string {
		return string(withField(t, withField(t, f.Tool, "name", name), "description", description))
	}
	huge := strings.Repeat("d", max.MaxCatalogBytes+1)
	for _, tc := range []struct {
		id, page, want string
	}{
		{"bound_over_catalog_bytes", page("", described("remote.search", huge)), purramcp.CodeCatalogLimitExceeded},
		{"unbound_over_catalog_bytes", page("", string(f.Tool), described("unbound", huge)), purramcp.CodeCatalogLimitExceeded},
		{"bound_8193_bytes", page("", described("remote.search", strings.Repeat("猫", 2731))), purramcp.CodeCatalogLimitExceeded},
		{"bound_8192_bytes", page("", described("remote.search", strings.Repeat("猫", 2730)+"ab")), ""},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: []string{tc.page}})
			_, err := discoverDefault(t, h, purramcp.Limits{})
			assert.Equal(t, tc.want, purramcp.CodeOf(err), "T6 %s", tc.id)
			lists, _ := h.counts()
			assert.Equal(t, 1, lists, "T6 %s", tc.id)
		})
	}
}

// threatDigestBudget: 256 bound tools whose tools/list page (1,015,698
// bytes) is under MaxCatalogBytes still fail mcp_catalog_limit_exceeded,
// because the revisionDigest's input is bounded too (1 MiB of detached
// bytes) and the snapshot adds each binding's
// localName, policy and concurrencySafe; 10 bytes less padding per field
// binds (TestMemory_BoundedHeap).
func threatDigestBudget(t *testing.T) {
	max := purramcp.DefaultLimits()
	server, calls := memoryServer(max.MaxTools, memoryPadOverDigest)
	cs, monitor := connectSDK(t, server, "")
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "memory", memoryBindings(max.MaxTools), purramcp.DiscoveryOptions{Monitor: monitor})
	assert.Nil(t, catalog)
	assert.Equal(t, purramcp.CodeCatalogLimitExceeded, purramcp.CodeOf(err), "T6 digest budget")
	assert.Zero(t, calls.Load())
}

// threatResultFlood: a 2 MiB text result and a result of 10,000 content
// blocks fail mcp_result_too_large; structured content nested as deep as
// go-sdk delivers fails mcp_result_invalid at the output depth limit. Each
// is one tools/call and the session stays usable.
func threatResultFlood(t *testing.T) {
	f := loadMCPFixture(t)
	textOnly := withField(t, f.Tool, "outputSchema", nil)
	block := `{"type":"text","text":"x"}`
	deepObject := strings.Repeat(`{"a":`, sdkMaxDepth-3) + `1` + strings.Repeat(`}`, sdkMaxDepth-3)
	for _, tc := range []struct{ id, result, want string }{
		{"2MiB_text", `{"content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20) + `"}]}`, purramcp.CodeResultTooLarge},
		{"10000_blocks", `{"content":[` + strings.TrimSuffix(strings.Repeat(block+",", 10_000), ",") + `]}`, purramcp.CodeResultTooLarge},
		{"deep_structured", `{"content":[],"structuredContent":` + deepObject + `}`, purramcp.CodeResultInvalid},
	} {
		t.Run(tc.id, func(t *testing.T) {
			raw := &rawServer{pages: []string{page("", string(textOnly))},
				call: func(json.RawMessage) (string, *jsonrpcError) { return tc.result, nil }}
			h := rawHarness(t, raw)
			reg := discoverWith(t, h, purramcp.Limits{}, nil)
			res, err := reg.Run(t.Context(), argsA, purramcp.ToolContext{})
			require.NoError(t, err, tc.id)
			assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: tc.want}, res, "T6 %s", tc.id)
			_, calls := h.counts()
			assert.Equal(t, 1, calls, "T6 %s", tc.id)
			assert.NoError(t, h.session.Ping(t.Context(), nil), "T6 %s: session usable", tc.id)
		})
	}
}

// threatListChangedStorm: the server sends 200 list_changed notifications
// before each of three pages. Every discovery returns (the storm is counted
// without blocking anything): it fails mcp_catalog_stale or, because go-sdk
// does not order notifications against responses, returns a catalog that
// ends up stale; either way nothing is ever called.
func threatListChangedStorm(t *testing.T) {
	f := loadMCPFixture(t)
	const storm = 200
	for _, modern := range modernities {
		for round := range 3 {
			id := fmt.Sprintf("T6 storm modern=%v round %d", modern, round)
			synctest.Test(t, func(t *testing.T) {
				raw := &rawServer{modern: modern, storm: storm,
					pages: []string{page("c1", string(f.Tool)), page("c2"), page("")}}
				h := rawHarness(t, raw)
				catalog, err := discoverDefault(t, h, purramcp.Limits{})
				if err != nil {
					assert.Nil(t, catalog)
					assert.Equal(t, purramcp.CodeCatalogStale, purramcp.CodeOf(err), id)
				} else {
					synctest.Wait()
					require.True(t, catalog.Stale(), "%s: ends up stale", id)
					res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
					require.NoError(t, err)
					assert.Equal(t, purramcp.CodeCatalogStale, res.ErrorCode, id)
				}
				lists, calls := h.counts()
				assert.LessOrEqual(t, lists, 3, "%s: at most the three pages", id)
				assert.Zero(t, calls, id)
				synctest.Wait()
				require.Equal(t, uint64(storm*lists), h.monitor.Revision(), "%s: every notification counted", id)
				assert.NoError(t, h.session.Ping(t.Context(), nil), id)
			})
		}
	}
}
