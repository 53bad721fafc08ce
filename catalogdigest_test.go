package purramcp

import (
	"testing"

	"purra.dev/purramcp/internal/strictjson"
)

// TestDigestMemo: the remembered digest is reused only for a catalog that
// hashes exactly the same; a change to any hashed field (server id,
// protocol, names, description, policy, ConcurrencySafe, either schema
// snapshot, the number or order of entries) computes again, and so does
// every catalog after close. A failed digest is never remembered.
func TestDigestMemo(t *testing.T) {
	snap := func(n float64) *strictjson.Object {
		return strictjson.NewObject([]string{"type", "maxProperties"}, []any{"object", n})
	}
	in, out := snap(1), snap(2)
	tool := func() *catalogTool {
		return &catalogTool{binding: binding{remote: "r", local: "l",
			policy: ToolPolicy{Mode: "read", Title: "T", RiskLevel: "read"}, concurrencySafe: true},
			description: "d", inputSnap: in, outputSnap: out}
	}
	var m digestMemo
	calls := 0
	digest := func(serverID, protocol string, tools ...*catalogTool) string {
		t.Helper()
		d, err := m.revisionDigest(serverID, protocol, tools, func() (string, error) {
			calls++
			return "digest-" + string(rune('a'+calls)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest("s", ProtocolVersion20251125, tool(), tool())
	if again := digest("s", ProtocolVersion20251125, tool(), tool()); again != base || calls != 1 {
		t.Fatalf("an equal catalog computed again (%d calls)", calls)
	}
	changes := []func(*catalogTool){
		func(b *catalogTool) { b.binding.remote = "r2" },
		func(b *catalogTool) { b.binding.local = "l2" },
		func(b *catalogTool) { b.description = "d2" },
		func(b *catalogTool) { b.binding.policy.Title = "T2" },
		func(b *catalogTool) { b.binding.policy.RiskLevel = "" },
		func(b *catalogTool) { b.binding.concurrencySafe = false },
		func(b *catalogTool) { b.inputSnap = snap(1) }, // equal value, another snapshot: recomputed, never wrong
		func(b *catalogTool) { b.outputSnap = nil },
	}
	for i, change := range changes {
		changed := tool()
		change(changed)
		before := calls
		digest("s", ProtocolVersion20251125, tool(), changed)
		if calls != before+1 {
			t.Errorf("change %d: the remembered digest was reused", i)
		}
		digest("s", ProtocolVersion20251125, tool(), tool()) // back to base: recomputed once
	}
	for _, c := range []struct {
		server, protocol string
		tools            []*catalogTool
	}{
		{"s2", ProtocolVersion20251125, []*catalogTool{tool(), tool()}},
		{"s", ProtocolVersion20260728, []*catalogTool{tool(), tool()}},
		{"s", ProtocolVersion20251125, []*catalogTool{tool()}},
		{"s", ProtocolVersion20251125, nil},
	} {
		before := calls
		digest(c.server, c.protocol, c.tools...)
		if calls != before+1 {
			t.Errorf("%+v: the remembered digest was reused", c)
		}
	}
	_, err := m.revisionDigest("s", ProtocolVersion20251125, []*catalogTool{tool()}, func() (string, error) {
		return "", fail(CodeCatalogLimitExceeded)
	})
	if CodeOf(err) != CodeCatalogLimitExceeded {
		t.Fatalf("failure: %v", err)
	}
	before := calls
	digest("s", ProtocolVersion20251125, tool())
	if calls != before+1 {
		t.Error("a failed digest was remembered")
	}
	m.Close()
	before = calls
	digest("s", ProtocolVersion20251125, tool())
	digest("s", ProtocolVersion20251125, tool())
	if calls != before+2 {
		t.Error("a closed memo reused a digest")
	}
}
