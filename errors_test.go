package purramcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// referenceCodes maps every mcp_* code purra-mcp 1.0.0 reports to its
// sentinel, spelled out: this map pins each code's wire spelling.
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
	assert.Equal(t, purramcp.CodeAnnotationConflict, purramcp.CodeAnnotationConflict)
	assert.Equal(t, purramcp.CodeCatalogUnapproved, purramcp.CodeCatalogUnapproved)
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

// assertDiscoveryError checks err is exactly want as a *DiscoveryError and
// still behaves as the plain *Error of its code: same fixed text, errors.Is
// with the sentinel, errors.As to *Error and CodeOf.
func assertDiscoveryError(t *testing.T, want purramcp.DiscoveryError, sentinel error, err error) {
	t.Helper()
	var d *purramcp.DiscoveryError
	require.True(t, errors.As(err, &d), "%T %v", err, err)
	assert.Equal(t, want, *d)
	text := "purramcp: MCP tool boundary rejected the operation: " + want.Code
	assert.Equal(t, text, err.Error(), "fixed text")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		assert.Equal(t, text, fmt.Sprintf(verb, err), "%s shows no field", verb)
	}
	assert.True(t, errors.Is(err, sentinel))
	assert.True(t, errors.Is(err, &purramcp.Error{Code: want.Code}))
	assert.False(t, errors.Is(err, purramcp.ErrTimeout))
	var e *purramcp.Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, &purramcp.Error{Code: want.Code}, e)
	assert.Equal(t, want.Code, purramcp.CodeOf(err))
}

// TestDiscoveryError_Schema: every shared schema case fails with a
// DiscoveryError carrying what InspectTool reports for the same tool.
func TestDiscoveryError_Schema(t *testing.T) {
	f := loadMCPFixture(t)
	want := map[string]purramcp.DiscoveryError{
		"unknown-default-annotation": {Code: purramcp.CodeSchemaUnsupported, RemoteName: "remote.search",
			Schema: "inputSchema", Path: "$.properties.query", Keyword: "default"},
		"unknown-vendor-output-annotation": {Code: purramcp.CodeSchemaUnsupported, RemoteName: "remote.search",
			Schema: "outputSchema", Path: "$", Keyword: "x-fastmcp-wrap-result"},
	}
	for _, sc := range f.SchemaCases {
		t.Run(sc.ID, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, sc.Tool), "")
			catalog, err := discoverDefault(t, h, purramcp.Limits{})
			assert.Nil(t, catalog)
			report, rerr := purramcp.InspectTool(sdkTool(t, sc.Tool), purramcp.Limits{}, purramcp.SchemaPolicy{})
			require.NoError(t, rerr)
			require.False(t, report.Bindable)
			fromReport := purramcp.DiscoveryError{Code: report.Code, RemoteName: report.Name, Schema: report.Schema,
				Path: report.Path, Keyword: report.Keyword}
			assertDiscoveryError(t, fromReport, purramcp.ErrSchemaUnsupported, err)
			assert.Equal(t, sc.ErrorCode, fromReport.Code)
			if w, ok := want[sc.ID]; ok {
				assert.Equal(t, w, fromReport)
			}
		})
	}
}

// TestDiscoveryError_Limits: a description over its limit
// (mcp_catalog_limit_exceeded) or a schema over its limit
// (mcp_schema_unsupported) names the Limits field, as InspectTool does.
func TestDiscoveryError_Limits(t *testing.T) {
	f := loadMCPFixture(t)
	for _, tc := range []struct {
		name     string
		limits   purramcp.Limits
		want     purramcp.DiscoveryError
		sentinel error
	}{
		{"description", purramcp.Limits{MaxDescriptionBytes: 3}, purramcp.DiscoveryError{Code: purramcp.CodeCatalogLimitExceeded,
			RemoteName: "remote.search", Path: "$", Keyword: "MaxDescriptionBytes"}, purramcp.ErrCatalogLimitExceeded},
		{"schema", purramcp.Limits{MaxSchemaBytes: 20}, purramcp.DiscoveryError{Code: purramcp.CodeSchemaUnsupported,
			RemoteName: "remote.search", Schema: "inputSchema", Path: "$", Keyword: "MaxSchemaBytes"}, purramcp.ErrSchemaUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
			_, err := discoverDefault(t, h, tc.limits)
			assertDiscoveryError(t, tc.want, tc.sentinel, err)
			report, rerr := purramcp.InspectTool(sdkTool(t, f.Tool), tc.limits, purramcp.SchemaPolicy{})
			require.NoError(t, rerr)
			assert.Equal(t, tc.want, purramcp.DiscoveryError{Code: report.Code, RemoteName: report.Name,
				Schema: report.Schema, Path: report.Path, Keyword: report.Keyword})
		})
	}
}

// TestDiscoveryError_Hint: RequireReadOnlyHint names the tool without the
// hint.
func TestDiscoveryError_Hint(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, withField(t, f.Tool, "annotations", nil)), "")
	_, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", searchBinding(),
		purramcp.DiscoveryOptions{Monitor: h.monitor, RequireReadOnlyHint: true})
	assertDiscoveryError(t, purramcp.DiscoveryError{Code: purramcp.CodeAnnotationConflict, RemoteName: "remote.search",
		Path: "$", Keyword: "readOnlyHint"}, purramcp.ErrAnnotationConflict, err)
}

// TestDiscoveryError_Missing: the first missing bound name in sorted order.
func TestDiscoveryError_Missing(t *testing.T) {
	f := loadMCPFixture(t)
	h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
	bindings := searchBinding()
	for _, name := range []string{"zz.gone", "aa.gone"} {
		bindings[name] = purramcp.ToolBinding{LocalName: name[:2], Policy: purramcp.ToolPolicy{Mode: "read", Title: "T"},
			Scope: purramcp.Unscoped}
	}
	_, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", bindings, purramcp.DiscoveryOptions{Monitor: h.monitor})
	assertDiscoveryError(t, purramcp.DiscoveryError{Code: purramcp.CodeBindingMissing, RemoteName: "aa.gone"},
		purramcp.ErrBindingMissing, err)
}

// TestDiscoveryError_RepeatedName: a bound remote name listed twice is a
// DiscoveryError; an unbound one stays a plain *Error.
func TestDiscoveryError_RepeatedName(t *testing.T) {
	f := loadMCPFixture(t)
	other := withField(t, f.Tool, "name", "remote.other")
	for _, tc := range []struct {
		name  string
		tools []json.RawMessage
		bound bool
	}{{"bound", []json.RawMessage{f.Tool}, true}, {"unbound", []json.RawMessage{f.Tool, other, other}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			raw := &rawServer{pages: []string{toolsPage(t, "c1", tc.tools...), toolsPage(t, "", f.Tool)}}
			if !tc.bound {
				raw.pages = raw.pages[:1]
				raw.pages[0] = toolsPage(t, "", tc.tools...)
			}
			h := rawHarness(t, raw)
			_, err := discoverDefault(t, h, purramcp.Limits{})
			if tc.bound {
				assertDiscoveryError(t, purramcp.DiscoveryError{Code: purramcp.CodeNameConflict, RemoteName: "remote.search",
					Path: "$", Keyword: "name"}, purramcp.ErrNameConflict, err)
				return
			}
			var d *purramcp.DiscoveryError
			assert.False(t, errors.As(err, &d))
			assert.Equal(t, &purramcp.Error{Code: purramcp.CodeNameConflict}, err)
		})
	}
}

// TestDiscoveryError_Nil: a nil *DiscoveryError matches nothing.
func TestDiscoveryError_Nil(t *testing.T) {
	var d *purramcp.DiscoveryError
	assert.False(t, d.Is(purramcp.ErrSchemaUnsupported))
	assert.Nil(t, d.Unwrap())
	assert.Equal(t, "<nil>", fmt.Sprintf("%+v", d))
}
