package purramcp_test

import (
	"testing"

	"purra.dev/purramcp"
)

// TestBehaviorE4_MaxDescriptionBytes: the bound tool's 16-byte description
// is over 1.
func TestBehaviorE4_MaxDescriptionBytes(t *testing.T) {
	catalogLimitCase(t, "E4", purramcp.Limits{MaxDescriptionBytes: 1}, 1)
}

// TestDiscover_RequiredTaskDroppedByGoSDK documents a go-sdk behaviour: purra-mcp
// rejects a bound tool with execution.taskSupport "required"
// (mcp_tool_unsupported), but go-sdk v1.8.0 drops the execution field while
// decoding, so the adapter never sees it and the tool binds as the fixture.
func TestDiscover_RequiredTaskDroppedByGoSDK(t *testing.T) {
	f := loadMCPFixture(t)
	task := withField(t, f.Tool, "execution", map[string]any{"taskSupport": "required"})
	h := rawHarness(t, &rawServer{pages: []string{toolsPage(t, "", task)}})
	catalog, err := discoverDefault(t, h, purramcp.Limits{})
	if err != nil {
		t.Fatalf("go-sdk drops execution.taskSupport: %v", err)
	}
	if got := catalog.Snapshot().RevisionDigest; got != f.RevisionDigest {
		t.Errorf("catalog.Snapshot().RevisionDigest = %q, want %q", got, f.RevisionDigest)
	}
}
