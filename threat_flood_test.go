package purramcp_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

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
			if catalog != nil {
				t.Errorf("T6 %s: got %v, want nil", tc.id, catalog)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
				t.Errorf("T6 %s: got %q, want %q", tc.id, got, purramcp.CodeCatalogLimitExceeded)
			}
			lists, calls := h.counts()
			if lists != tc.wantLists {
				t.Errorf("T6 %s: tools/list requests: got %v, want %v", tc.id, lists, tc.wantLists)
			}
			if calls != 0 {
				t.Errorf("T6 %s: got %v, want 0", tc.id, calls)
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("T6 %s: session usable: %v", tc.id, err)
			}
		})
	}
	if got, limit := len(onePage), purramcp.DefaultLimits().MaxCatalogBytes; got >= limit {
		t.Errorf("T6: the one-page flood is under the byte limit: got %v, want < %v", got, limit)
	}
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
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("T6 limits %+v: got %q, want %q", limits, got, purramcp.CodeBindingInvalid)
		}
	}
	lists, _ := h.counts()
	if lists != 0 {
		t.Errorf("T6: nothing sent: got %v, want 0", lists)
	}
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
	if catalog != nil {
		t.Errorf("catalog = %v, want nil", catalog)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeSchemaUnsupported {
		t.Errorf("T6 996-deep schema: got %q, want %q", got, purramcp.CodeSchemaUnsupported)
	}
	if err := h.session.Ping(t.Context(), nil); err != nil {
		t.Errorf("T6 996-deep schema: session usable: %v", err)
	}

	synctest.Test(t, func(t *testing.T) {
		h := rawHarness(t, &rawServer{pages: []string{page("", deep(1000))}})
		catalog, err := discoverDefault(t, h, purramcp.Limits{})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if got := purramcp.CodeOf(err); got != purramcp.CodeResultInvalid {
			t.Errorf("T6 1000-deep schema: go-sdk's decode error: got %q, want %q", got, purramcp.CodeResultInvalid)
		}
		synctest.Wait()
		if err := h.monitor.Check(0); err == nil {
			t.Fatalf("T6 1000-deep schema: go-sdk ended the session: got no error")
		}
		_, err = discoverDefault(t, h, purramcp.Limits{})
		if got := purramcp.CodeOf(err); got != purramcp.CodeConnectionClosed {
			t.Errorf("T6 1000-deep schema: got %q, want %q", got, purramcp.CodeConnectionClosed)
		}
		lists, _ := h.counts()
		if lists != 1 {
			t.Errorf("T6 1000-deep schema: got %v, want %v", lists, 1)
		}
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
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("T6 %s: got %q, want %q", tc.id, got, tc.want)
			}
			lists, _ := h.counts()
			if lists != 1 {
				t.Errorf("T6 %s: got %v, want %v", tc.id, lists, 1)
			}
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
	if catalog != nil {
		t.Errorf("catalog = %v, want nil", catalog)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
		t.Errorf("T6 digest budget: got %q, want %q", got, purramcp.CodeCatalogLimitExceeded)
	}
	if got := calls.Load(); got != 0 {
		t.Errorf("calls.Load() = %v, want 0", got)
	}
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
			if err != nil {
				t.Fatalf("%v: %v", tc.id, err)
			}
			if want := (purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: tc.want}); !reflect.DeepEqual(res, want) {
				t.Errorf("T6 %s: got %v, want %v", tc.id, res, want)
			}
			_, calls := h.counts()
			if calls != 1 {
				t.Errorf("T6 %s: got %v, want %v", tc.id, calls, 1)
			}
			if err := h.session.Ping(t.Context(), nil); err != nil {
				t.Errorf("T6 %s: session usable: %v", tc.id, err)
			}
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
					if catalog != nil {
						t.Errorf("catalog = %v, want nil", catalog)
					}
					if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
						t.Errorf("%v: got %q, want %q", id, got, purramcp.CodeCatalogStale)
					}
				} else {
					synctest.Wait()
					if !catalog.Stale() {
						t.Fatalf("%s: ends up stale", id)
					}
					res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
					if err != nil {
						t.Fatal(err)
					}
					if res.ErrorCode != purramcp.CodeCatalogStale {
						t.Errorf("%v: got %q, want %q", id, res.ErrorCode, purramcp.CodeCatalogStale)
					}
				}
				lists, calls := h.counts()
				if lists > 3 {
					t.Errorf("%s: at most the three pages: got %v, want <= %v", id, lists, 3)
				}
				if calls != 0 {
					t.Errorf("%v: got %v, want 0", id, calls)
				}
				synctest.Wait()
				if got, want := h.monitor.Revision(), uint64(storm*lists); got != want {
					t.Fatalf("%s: every notification counted: got %v, want %v", id, got, want)
				}
				if err := h.session.Ping(t.Context(), nil); err != nil {
					t.Errorf("%v: %v", id, err)
				}
			})
		}
	}
}
