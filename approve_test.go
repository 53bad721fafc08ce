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

// TestApprove_PinnedDigest: the approver runs once, after discovery, with a
// deep copy of the finished snapshot; a pin of the fixture digest binds it
// and the catalog is the one without an approver.
func TestApprove_PinnedDigest(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	plain, err := discoverDefault(t, h, purramcp.Limits{})
	require.NoError(t, err)
	require.Equal(t, f.RevisionDigest, plain.Snapshot().RevisionDigest)

	var seen []purramcp.Snapshot
	pin := purramcp.PinDigests(f.RevisionDigest)
	catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: func(ctx context.Context, s purramcp.Snapshot) error {
		seen = append(seen, s)
		verdict := pin(ctx, s)
		s.Entries[0].InputSchema["type"] = "string" // the approver's own copy
		s.Entries[0].Description = "changed"
		return verdict
	}})
	require.NoError(t, err)
	require.Len(t, seen, 1, "once per successful discovery")
	assert.Equal(t, f.RevisionDigest, catalog.Snapshot().RevisionDigest)
	assert.Equal(t, plain.Snapshot(), catalog.Snapshot(), "the approver changed nothing")
	assert.Equal(t, "changed", seen[0].Entries[0].Description)
	lists, calls := h.counts()
	assert.Equal(t, 2, lists, "one listing each, the approver sends nothing")
	assert.Zero(t, calls)
	res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Empty(t, res.ErrorCode)
}

// TestApprove_Rejected: any approver error fails mcp_catalog_unapproved with
// no catalog; the approver's error is neither wrapped nor shown.
func TestApprove_Rejected(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	hostErr := errors.New("not approved: " + secret)
	for _, tc := range []struct {
		id      string
		approve func(context.Context, purramcp.Snapshot) error
	}{
		{"host_error", func(context.Context, purramcp.Snapshot) error { return hostErr }},
		{"wrapped_host_error", func(context.Context, purramcp.Snapshot) error { return fmt.Errorf("x: %w", hostErr) }},
		{"adapter_code", func(context.Context, purramcp.Snapshot) error { return purramcp.ErrTimeout }},
		{"canceled_value", func(context.Context, purramcp.Snapshot) error { return purramcp.ErrCanceled }},
		{"other_pin", purramcp.PinDigests(strings.Repeat("0", 64))},
		{"pin_upper_case", purramcp.PinDigests(strings.ToUpper(f.RevisionDigest))},
		{"pin_padded", purramcp.PinDigests(" " + f.RevisionDigest)},
		{"pin_nothing", purramcp.PinDigests()},
	} {
		t.Run(tc.id, func(t *testing.T) {
			catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: tc.approve})
			assert.Nil(t, catalog, tc.id)
			require.Error(t, err, tc.id)
			assert.Equal(t, purramcp.CodeCatalogUnapproved, purramcp.CodeOf(err), tc.id)
			assert.ErrorIs(t, err, purramcp.ErrCatalogUnapproved, tc.id)
			assert.NotErrorIs(t, err, hostErr, tc.id)
			assert.NotErrorIs(t, err, purramcp.ErrTimeout, tc.id)
			assert.NotErrorIs(t, err, purramcp.ErrCanceled, tc.id)
			assert.Equal(t, &purramcp.Error{Code: purramcp.CodeCatalogUnapproved}, err, tc.id)
			assertNoSecret(t, tc.id, nil, err)
		})
	}
	_, calls := h.counts()
	assert.Zero(t, calls)
}

// TestPinDigests: exact matches only, the list copied.
func TestPinDigests(t *testing.T) {
	digests := []string{"a", "b"}
	pin := purramcp.PinDigests(digests...)
	digests[0] = "c"
	for digest, want := range map[string]bool{"a": true, "b": true, "c": false, "A": false, "a ": false, "": false} {
		err := pin(t.Context(), purramcp.Snapshot{RevisionDigest: digest})
		assert.Equal(t, want, err == nil, "%q", digest)
		if err != nil {
			assert.ErrorIs(t, err, purramcp.ErrCatalogUnapproved)
		}
	}
	assert.Error(t, purramcp.PinDigests()(t.Context(), purramcp.Snapshot{}), "no pin accepts nothing, not even an empty digest")
}

// TestApprove_AfterEveryOtherCheck: a discovery that fails any other way
// never reaches the approver and keeps its own code.
func TestApprove_AfterEveryOtherCheck(t *testing.T) {
	f := loadMCPFixture(t)
	called := 0
	approve := func(context.Context, purramcp.Snapshot) error { called++; return nil }
	for _, tc := range []struct {
		id    string
		raw   *rawServer
		want  string
		limit purramcp.Limits
	}{
		{"binding_missing", &rawServer{pages: []string{page("", otherTool)}}, purramcp.CodeBindingMissing, purramcp.Limits{}},
		{"schema", &rawServer{pages: []string{page("", `{"name":"remote.search","inputSchema":{"type":"object","properties":{"q":{"type":"string","pattern":"a"}}}}`)}},
			purramcp.CodeSchemaUnsupported, purramcp.Limits{}},
		{"pagination", &rawServer{pages: []string{page("p")}}, purramcp.CodePaginationInvalid, purramcp.Limits{}},
		{"description", &rawServer{pages: []string{page("", string(f.Tool))}}, purramcp.CodeCatalogLimitExceeded, purramcp.Limits{MaxDescriptionBytes: 3}},
		{"no_tools", &rawServer{noTools: true, pages: []string{page("", string(f.Tool))}}, purramcp.CodeToolsUnavailable, purramcp.Limits{}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, tc.raw)
			_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: approve, Limits: tc.limit})
			assert.Equal(t, tc.want, purramcp.CodeOf(err), tc.id)
		})
	}
	assert.Zero(t, called)
	h := rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool))}})
	h.monitor.Close()
	_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: approve})
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(err))
	assert.Zero(t, called)
}

// TestApprove_Context: the approver gets the caller's ctx; a ctx that ends
// while it runs fails ErrCanceled, whatever it returns, and one that ended
// before never reaches it.
func TestApprove_Context(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	type key struct{}
	for _, verdict := range []error{nil, errors.New("no")} {
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "caller"))
		catalog, err := approving(t, ctx, h, purramcp.DiscoveryOptions{Approve: func(ctx context.Context, _ purramcp.Snapshot) error {
			assert.Equal(t, "caller", ctx.Value(key{}))
			cancel()
			return verdict
		}})
		assert.Nil(t, catalog)
		assert.Equal(t, purramcp.ErrCanceled, err)
		cancel()
	}

	// A ctx that ended before: no request, no approval.
	called := false
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := approving(t, ctx, h, purramcp.DiscoveryOptions{Approve: func(context.Context, purramcp.Snapshot) error {
		called = true
		return nil
	}})
	assert.Equal(t, purramcp.ErrCanceled, err)
	assert.False(t, called)
}

// TestApprove_ListChangeWhileApproving: a change while the approver runs is
// a change during discovery: mcp_catalog_stale without retries, a fresh
// attempt (and a second approval) with them; a session that ends while it
// runs fails mcp_connection_closed and is never retried.
func TestApprove_ListChangeWhileApproving(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	calls := 0
	changeOnce := func(context.Context, purramcp.Snapshot) error {
		calls++
		if calls == 1 {
			h.monitor.OnNotification(listChanged)
		}
		return nil
	}
	catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: changeOnce})
	assert.Nil(t, catalog)
	assert.Equal(t, purramcp.CodeCatalogStale, purramcp.CodeOf(err))
	assert.Equal(t, 1, calls)

	calls = 0
	rejectAndChange := func(ctx context.Context, s purramcp.Snapshot) error {
		_ = changeOnce(ctx, s)
		if calls == 1 {
			return errors.New("the change decides, not this")
		}
		return nil
	}
	for _, approve := range []func(context.Context, purramcp.Snapshot) error{changeOnce, rejectAndChange} {
		calls = 0
		listsBefore, _ := h.counts()
		catalog, err = approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: approve, StaleRetries: 1})
		require.NoError(t, err)
		assert.Equal(t, 2, calls, "approved again on the second attempt")
		assert.False(t, catalog.Stale(), "the returned catalog saw no change")
		lists, _ := h.counts()
		assert.Equal(t, 2, lists-listsBefore, "one listing per attempt")
	}

	calls = 0
	closing := func(context.Context, purramcp.Snapshot) error { calls++; h.monitor.Close(); return nil }
	_, err = approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: closing, StaleRetries: 8})
	assert.Equal(t, purramcp.CodeConnectionClosed, purramcp.CodeOf(err))
	assert.Equal(t, 1, calls, "no retry for a closed session")
}
