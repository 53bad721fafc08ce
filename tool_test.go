package purramcp_test

import (
	"errors"
	"testing"

	"purra.dev/purramcp"
)

func TestToolResult_Err(t *testing.T) {
	if err := (purramcp.ToolResult{}).Err(); err != nil {
		t.Errorf("ToolResult{}.Err() = %v, want nil", err)
	}
	err := purramcp.ToolResult{ErrorCode: purramcp.CodeScopeDenied}.Err()
	if !errors.Is(err, purramcp.ErrScopeDenied) {
		t.Errorf("error %v, want one matching %v", err, purramcp.ErrScopeDenied)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeScopeDenied {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, purramcp.CodeScopeDenied)
	}
	if errors.Is(err, purramcp.ErrToolError) {
		t.Errorf("error %v matches %v", err, purramcp.ErrToolError)
	}
}

func TestErrors_DenyIsNotRemote(t *testing.T) {
	err := purramcp.Deny("needs admin")
	if err == nil {
		t.Fatalf("err = nil, want an error")
	}
	if errors.Is(err, purramcp.ErrScopeDenied) {
		t.Errorf("a denial is the host's decision, not an adapter code: error %v matches %v", err, purramcp.ErrScopeDenied)
	}
}
