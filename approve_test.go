package purramcp_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"purra.dev/purramcp"
)

// TestApprove_PinnedDigest: the approver runs once, after discovery, with a
// deep copy of the finished snapshot; a pin of the fixture digest binds it
// and the catalog is the one without an approver.
func TestApprove_PinnedDigest(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), purramcp.ProtocolVersion20251125)
	plain, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Snapshot().RevisionDigest; got != f.RevisionDigest {
		t.Fatalf("plain.Snapshot().RevisionDigest = %q, want %q", got, f.RevisionDigest)
	}

	var seen []purramcp.Snapshot
	pin := purramcp.PinDigests(f.RevisionDigest)
	catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: func(ctx context.Context, s purramcp.Snapshot) error {
		seen = append(seen, s)
		verdict := pin(ctx, s)
		s.Entries[0].InputSchema["type"] = "string" // the approver's own copy
		s.Entries[0].Description = "changed"
		return verdict
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(seen); got != 1 {
		t.Fatalf("once per successful discovery: len = %d, want %d", got, 1)
	}
	if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
		t.Errorf("catalog.Snapshot().RevisionDigest = %q, want %q", got, f.RevisionDigest)
	}
	if got, want := catalog.Snapshot(), plain.Snapshot(); !reflect.DeepEqual(got, want) {
		t.Errorf("the approver changed nothing: got %v, want %v", got, want)
	}
	if seen[0].Entries[0].Description != "changed" {
		t.Errorf("seen[0].Entries[0].Description = %q, want %q", seen[0].Entries[0].Description, "changed")
	}
	lists, calls := h.counts()
	if lists != 2 {
		t.Errorf("one listing each, the approver sends nothing: got %v, want %v", lists, 2)
	}
	if calls != 0 {
		t.Errorf("calls = %v, want 0", calls)
	}
	res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCode != "" {
		t.Errorf("res.ErrorCode = %q, want empty", res.ErrorCode)
	}
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
			if catalog != nil {
				t.Errorf("%v: got %v, want nil", tc.id, catalog)
			}
			if err == nil {
				t.Fatalf("%v: got no error", tc.id)
			}
			if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogUnapproved {
				t.Errorf("%v: got %q, want %q", tc.id, got, purramcp.CodeCatalogUnapproved)
			}
			if !errors.Is(err, purramcp.ErrCatalogUnapproved) {
				t.Errorf("%v: error %v, want one matching %v", tc.id, err, purramcp.ErrCatalogUnapproved)
			}
			if errors.Is(err, hostErr) {
				t.Errorf("%v: error %v matches %v", tc.id, err, hostErr)
			}
			if errors.Is(err, purramcp.ErrTimeout) {
				t.Errorf("%v: error %v matches %v", tc.id, err, purramcp.ErrTimeout)
			}
			if errors.Is(err, purramcp.ErrCanceled) {
				t.Errorf("%v: error %v matches %v", tc.id, err, purramcp.ErrCanceled)
			}
			if want := (&purramcp.Error{Code: purramcp.CodeCatalogUnapproved}); !reflect.DeepEqual(err, want) {
				t.Errorf("%v: got %v, want %v", tc.id, err, want)
			}
			assertNoSecret(t, tc.id, nil, err)
		})
	}
	_, calls := h.counts()
	if calls != 0 {
		t.Errorf("calls = %v, want 0", calls)
	}
}

// TestPinDigests: exact matches only, the list copied.
func TestPinDigests(t *testing.T) {
	digests := []string{"a", "b"}
	pin := purramcp.PinDigests(digests...)
	digests[0] = "c"
	for digest, want := range map[string]bool{"a": true, "b": true, "c": false, "A": false, "a ": false, "": false} {
		err := pin(t.Context(), purramcp.Snapshot{RevisionDigest: digest})
		if got := err == nil; got != want {
			t.Errorf("%q: got %v, want %v", digest, got, want)
		}
		if err != nil {
			if !errors.Is(err, purramcp.ErrCatalogUnapproved) {
				t.Errorf("error %v, want one matching %v", err, purramcp.ErrCatalogUnapproved)
			}
		}
	}
	if err := purramcp.PinDigests()(t.Context(), purramcp.Snapshot{}); err == nil {
		t.Errorf("no pin accepts nothing, not even an empty digest: got no error")
	}
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
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, got, tc.want)
			}
		})
	}
	if called != 0 {
		t.Errorf("called = %v, want 0", called)
	}
	h := rawHarness(t, &rawServer{pages: []string{page("", string(f.Tool))}})
	h.monitor.Close()
	_, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: approve})
	if got := purramcp.CodeOf(err); got != purramcp.CodeConnectionClosed {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeConnectionClosed)
	}
	if called != 0 {
		t.Errorf("called = %v, want 0", called)
	}
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
			if got := ctx.Value(key{}); !reflect.DeepEqual(got, "caller") {
				t.Errorf("ctx.Value(key{}) = %v, want %v", got, "caller")
			}
			cancel()
			return verdict
		}})
		if catalog != nil {
			t.Errorf("catalog = %v, want nil", catalog)
		}
		if !reflect.DeepEqual(err, purramcp.ErrCanceled) {
			t.Errorf("err = %v, want %v", err, purramcp.ErrCanceled)
		}
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
	if !reflect.DeepEqual(err, purramcp.ErrCanceled) {
		t.Errorf("err = %v, want %v", err, purramcp.ErrCanceled)
	}
	if called {
		t.Errorf("called is true")
	}
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
	if catalog != nil {
		t.Errorf("catalog = %v, want nil", catalog)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogStale {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeCatalogStale)
	}
	if calls != 1 {
		t.Errorf("calls = %v, want %v", calls, 1)
	}

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
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 {
			t.Errorf("approved again on the second attempt: got %v, want %v", calls, 2)
		}
		if catalog.Stale() {
			t.Errorf("the returned catalog saw no change")
		}
		lists, _ := h.counts()
		if got := lists - listsBefore; got != 2 {
			t.Errorf("one listing per attempt: got %v, want %v", got, 2)
		}
	}

	calls = 0
	closing := func(context.Context, purramcp.Snapshot) error { calls++; h.monitor.Close(); return nil }
	_, err = approving(t, t.Context(), h, purramcp.DiscoveryOptions{Approve: closing, StaleRetries: 8})
	if got := purramcp.CodeOf(err); got != purramcp.CodeConnectionClosed {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeConnectionClosed)
	}
	if calls != 1 {
		t.Errorf("no retry for a closed session: got %v, want %v", calls, 1)
	}
}
