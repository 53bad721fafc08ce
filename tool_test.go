package purramcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

func TestToolResult_Err(t *testing.T) {
	assert.NoError(t, purramcp.ToolResult{}.Err())
	err := purramcp.ToolResult{ErrorCode: purramcp.CodeScopeDenied}.Err()
	assert.ErrorIs(t, err, purramcp.ErrScopeDenied)
	assert.Equal(t, purramcp.CodeScopeDenied, purramcp.CodeOf(err))
	assert.NotErrorIs(t, err, purramcp.ErrToolError)
}

func TestErrors_DenyIsNotRemote(t *testing.T) {
	err := purramcp.Deny("needs admin")
	require.Error(t, err)
	assert.NotErrorIs(t, err, purramcp.ErrScopeDenied, "a denial is the host's decision, not an adapter code")
}
