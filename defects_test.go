package purramcp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// TestRun_ScopeTypedNilErrorDenies: a ScopeFunc returning a typed-nil
// *purramcp.Error (non-nil as an error, but carrying no code), bare or
// wrapped, or an *Error with an empty code, denies: mcp_scope_denied, no
// panic, nothing sent.
func TestRun_ScopeTypedNilErrorDenies(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	for id, scopeErr := range map[string]func() error{
		"typed_nil":         func() error { var e *purramcp.Error; return e },
		"wrapped_typed_nil": func() error { var e *purramcp.Error; return fmt.Errorf("host: %w", e) },
		"empty_code":        func() error { return &purramcp.Error{} },
	} {
		reg := discoverWith(t, h, purramcp.Limits{}, func(b *purramcp.ToolBinding) {
			b.Scope = func(context.Context, map[string]any, purramcp.ToolContext) error { return scopeErr() }
		})
		var res purramcp.ToolResult
		var err error
		require.NotPanics(t, func() { res, err = reg.Run(t.Context(), argsA, purramcp.ToolContext{}) }, id)
		require.NoError(t, err, id)
		assert.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started", ErrorCode: "mcp_scope_denied"}, res, id)
	}
	_, calls := h.counts()
	assert.Zero(t, calls, "nothing sent")
}

// TestContractError_NilTargetMatchesNothing: errors.Is with a typed-nil
// *ContractError target (or receiver) reports false instead of panicking; a
// nil *ContractError has no code, so it matches nothing.
func TestContractError_NilTargetMatchesNothing(t *testing.T) {
	_, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1", Schema: map[string]any{"type": "string"}})
	require.Error(t, err)
	var nilTarget *purramcp.ContractError
	require.NotPanics(t, func() { assert.False(t, errors.Is(err, nilTarget)) })
	require.NotPanics(t, func() { assert.False(t, nilTarget.Is(err)) })
	require.NotPanics(t, func() {
		assert.False(t, errors.Is(fmt.Errorf("w: %w", nilTarget), &purramcp.ContractError{Code: purramcp.CodeSchemaInvalid}))
	})
	assert.True(t, errors.Is(err, &purramcp.ContractError{Code: purramcp.CodeSchemaInvalid}), "a real target still matches")
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
	require.NoError(t, err)
	lists, calls := h.counts()
	assert.Equal(t, 1, lists, "one listing")
	assert.Zero(t, calls)
	require.Len(t, report.Tools, 1)
	assert.Equal(t, 6, report.Tools[0].DescriptionBytes)

	// The same bindings over a server that only ever shows the short listing.
	ref := rawHarness(t, &rawServer{pages: []string{page("", short)}})
	catalog, err := purramcp.DiscoverTools(t.Context(), ref.session, "fixture", report.Bindings, purramcp.DiscoveryOptions{Monitor: ref.monitor})
	require.NoError(t, err)
	assert.Equal(t, catalog.Snapshot().RevisionDigest, report.RevisionDigest, "digest of the reported listing")
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
		require.NoError(t, err, tc.id)
		b, ok := report.Bindings["remote.search"]
		require.True(t, ok, tc.id)
		assert.Equal(t, tc.want, b.Policy.Title, tc.id)
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", report.Bindings, purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.lim})
		require.NoError(t, err, tc.id)
		assert.Equal(t, tc.want, catalog.Registrations()[0].Description, "%s: model-visible description", tc.id)
	}
}
