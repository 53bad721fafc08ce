package purramcp_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// referenceCodes maps every mcp_* code of adapter.md and dist/index.js to
// its sentinel (style.md N2).
var referenceCodes = map[string]error{
	"mcp_binding_invalid":        purramcp.ErrBindingInvalid,
	"mcp_binding_missing":        purramcp.ErrBindingMissing,
	"mcp_catalog_limit_exceeded": purramcp.ErrCatalogLimitExceeded,
	"mcp_catalog_stale":          purramcp.ErrCatalogStale,
	"mcp_connection_closed":      purramcp.ErrConnectionClosed,
	"mcp_invalid_arguments":      purramcp.ErrInvalidArguments,
	"mcp_name_conflict":          purramcp.ErrNameConflict,
	"mcp_not_initialized":        purramcp.ErrNotInitialized,
	"mcp_pagination_invalid":     purramcp.ErrPaginationInvalid,
	"mcp_protocol_conflict":      purramcp.ErrProtocolConflict,
	"mcp_protocol_error":         purramcp.ErrProtocolError,
	"mcp_protocol_unsupported":   purramcp.ErrProtocolUnsupported,
	"mcp_result_invalid":         purramcp.ErrResultInvalid,
	"mcp_result_too_large":       purramcp.ErrResultTooLarge,
	"mcp_result_unsupported":     purramcp.ErrResultUnsupported,
	"mcp_schema_unsupported":     purramcp.ErrSchemaUnsupported,
	"mcp_scope_denied":           purramcp.ErrScopeDenied,
	"mcp_timeout":                purramcp.ErrTimeout,
	"mcp_tool_error":             purramcp.ErrToolError,
	"mcp_tool_unsupported":       purramcp.ErrToolUnsupported,
	"mcp_tools_unavailable":      purramcp.ErrToolsUnavailable,
	"mcp_transport_error":        purramcp.ErrTransportError,
}

// additionCodes are purramcp's own codes, with no purra-mcp 1.0.0
// counterpart: each arises only from an opt-in DiscoveryOptions field.
var additionCodes = map[string]error{
	"mcp_annotation_conflict": purramcp.ErrAnnotationConflict, // RequireReadOnlyHint
	"mcp_catalog_unapproved":  purramcp.ErrCatalogUnapproved,  // Approve
}

// allCodes is every code the package reports.
var allCodes = func() map[string]error {
	all := maps.Clone(referenceCodes)
	maps.Copy(all, additionCodes)
	return all
}()

func TestErrors_CodesAndSentinels(t *testing.T) {
	require.Len(t, referenceCodes, 22)
	require.Len(t, additionCodes, 2)
	require.Len(t, allCodes, 24, "no addition reuses a reference code")
	assert.Equal(t, purramcp.CodeAnnotationConflict, "mcp_annotation_conflict")
	assert.Equal(t, purramcp.CodeCatalogUnapproved, "mcp_catalog_unapproved")
	for code, sentinel := range allCodes {
		assert.Equal(t, code, purramcp.CodeOf(sentinel), "sentinel → code")
		assert.Equal(t, code, purramcp.CodeOf(sentinel))
		fresh := &purramcp.Error{Code: code}
		assert.ErrorIs(t, fresh, sentinel, "code → sentinel")
		assert.ErrorIs(t, fmt.Errorf("wrapped: %w", fresh), sentinel)
		assert.Equal(t, code, purramcp.CodeOf(fmt.Errorf("wrapped: %w", fresh)))
		assert.True(t, strings.HasSuffix(fresh.Error(), code), "Error() ends with the code")
		assert.Equal(t, "purramcp: MCP tool boundary rejected the operation: "+code, fresh.Error())
		for other, otherSentinel := range allCodes {
			if other != code {
				assert.NotErrorIs(t, fresh, otherSentinel, "%s is not %s", code, other)
			}
		}
		var as *purramcp.Error
		require.ErrorAs(t, fmt.Errorf("x: %w", fresh), &as)
		assert.Equal(t, code, as.Code)
		assert.Nil(t, errors.Unwrap(fresh), "an *Error wraps nothing")
	}
}

func TestErrors_ErrCanceled(t *testing.T) {
	assert.ErrorIs(t, purramcp.ErrCanceled, context.Canceled)
	assert.ErrorIs(t, purramcp.ErrCanceled, purramcp.ErrCanceled)
	wrapped := fmt.Errorf("run: %w", purramcp.ErrCanceled)
	assert.ErrorIs(t, wrapped, purramcp.ErrCanceled)
	assert.ErrorIs(t, wrapped, context.Canceled)
	assert.NotErrorIs(t, purramcp.ErrCanceled, context.DeadlineExceeded)
	assert.NotErrorIs(t, context.Canceled, purramcp.ErrCanceled, "one value")
	assert.Equal(t, "", purramcp.CodeOf(purramcp.ErrCanceled))
	for _, sentinel := range allCodes {
		assert.NotErrorIs(t, purramcp.ErrCanceled, sentinel)
	}
}

func TestErrors_CodeOf(t *testing.T) {
	assert.Equal(t, "", purramcp.CodeOf(nil))
	assert.Equal(t, "", purramcp.CodeOf(errors.New("plain")))
	assert.Equal(t, "", purramcp.CodeOf(purramcp.Deny("no")))
	ce := &purramcp.ContractError{Code: "structured_output_schema_mismatch", Path: "$", Keyword: "type"}
	assert.Equal(t, "structured_output_schema_mismatch", purramcp.CodeOf(fmt.Errorf("x: %w", ce)))
	_, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "id", SchemaVersion: "1", Schema: map[string]any{"type": "array"}})
	assert.Equal(t, "structured_output_schema_invalid", purramcp.CodeOf(err))
	var nilErr *purramcp.Error
	assert.False(t, nilErr.Is(purramcp.ErrTimeout))
	assert.False(t, errors.Is(purramcp.ErrTimeout, nilErr))
	assert.False(t, errors.Is(nilErr, purramcp.ErrTimeout))
}

func TestErrors_SentinelsCannotBeRetargeted(t *testing.T) {
	// A sentinel is not an *Error: there is no field an importer could change.
	var e *purramcp.Error
	assert.False(t, errors.As(purramcp.ErrCatalogStale, &e))
	assert.Equal(t, purramcp.CodeCatalogStale, purramcp.CodeOf(purramcp.ErrCatalogStale))
	assert.ErrorIs(t, &purramcp.Error{Code: purramcp.CodeCatalogStale}, purramcp.ErrCatalogStale)
	assert.ErrorIs(t, purramcp.ErrCatalogStale, &purramcp.Error{Code: purramcp.CodeCatalogStale})
	assert.NotErrorIs(t, &purramcp.Error{Code: purramcp.CodeTimeout}, purramcp.ErrCatalogStale)
	assert.Equal(t, (&purramcp.Error{Code: purramcp.CodeTimeout}).Error(), purramcp.ErrTimeout.Error())
}

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
