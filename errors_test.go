package purramcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"testing"

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
	"mcp_egress_refused":      purramcp.ErrEgressRefused,      // the fleet's HTTP client
	"mcp_unauthorized":        purramcp.ErrUnauthorized,       // an OAuth-aware HTTP transport (the host's, or the fleet's)
	// the client side of MCP authorization: server status, sign-in, store
	"mcp_auth_required":            purramcp.ErrAuthRequired,
	"mcp_auth_expired":             purramcp.ErrAuthExpired,
	"mcp_auth_discovery_failed":    purramcp.ErrAuthDiscoveryFailed,
	"mcp_auth_registration_failed": purramcp.ErrAuthRegistrationFailed,
	"mcp_auth_denied":              purramcp.ErrAuthDenied,
	"mcp_auth_token_failed":        purramcp.ErrAuthTokenFailed,
	"mcp_auth_store_failed":        purramcp.ErrAuthStoreFailed,
}

// allCodes is every code the package reports.
var allCodes = func() map[string]error {
	all := maps.Clone(referenceCodes)
	maps.Copy(all, additionCodes)
	return all
}()

func TestErrors_CodesAndSentinels(t *testing.T) {
	if got := len(referenceCodes); got != 22 {
		t.Fatalf("len(referenceCodes) = %d, want %d", got, 22)
	}
	if got := len(additionCodes); got != 11 {
		t.Fatalf("len(additionCodes) = %d, want %d", got, 11)
	}
	if got := len(allCodes); got != 33 {
		t.Fatalf("no addition reuses a reference code: len = %d, want %d", got, 33)
	}
	if purramcp.CodeAnnotationConflict != purramcp.CodeAnnotationConflict {
		t.Errorf("purramcp.CodeAnnotationConflict = %q, want %q", purramcp.CodeAnnotationConflict, purramcp.CodeAnnotationConflict)
	}
	if purramcp.CodeCatalogUnapproved != purramcp.CodeCatalogUnapproved {
		t.Errorf("purramcp.CodeCatalogUnapproved = %q, want %q", purramcp.CodeCatalogUnapproved, purramcp.CodeCatalogUnapproved)
	}
	for code, sentinel := range allCodes {
		if got := purramcp.CodeOf(sentinel); got != code {
			t.Errorf("sentinel → code: got %q, want %q", got, code)
		}
		if got := purramcp.CodeOf(sentinel); got != code {
			t.Errorf("purramcp.CodeOf(sentinel) = %q, want %q", got, code)
		}
		fresh := &purramcp.Error{Code: code}
		if !errors.Is(fresh, sentinel) {
			t.Errorf("code → sentinel: error %v, want one matching %v", fresh, sentinel)
		}
		if err := fmt.Errorf("wrapped: %w", fresh); !errors.Is(err, sentinel) {
			t.Errorf("error %v, want one matching %v", err, sentinel)
		}
		if got := purramcp.CodeOf(fmt.Errorf("wrapped: %w", fresh)); got != code {
			t.Errorf("purramcp.CodeOf(fmt.Errorf(\"wrapped: %%w\", fresh)) = %q, want %q", got, code)
		}
		if !strings.HasSuffix(fresh.Error(), code) {
			t.Errorf("Error() ends with the code")
		}
		if got, want := fresh.Error(), "purramcp: MCP tool boundary rejected the operation: "+code; got != want {
			t.Errorf("fresh.Error() = %q, want %q", got, want)
		}
		for other, otherSentinel := range allCodes {
			if other != code {
				if errors.Is(fresh, otherSentinel) {
					t.Errorf("%s is not %s: error %v matches %v", code, other, fresh, otherSentinel)
				}
			}
		}
		var as *purramcp.Error
		if err := fmt.Errorf("x: %w", fresh); !errors.As(err, &as) {
			t.Fatalf("error %v, want one of type %T", err, &as)
		}
		if as.Code != code {
			t.Errorf("as.Code = %q, want %q", as.Code, code)
		}
		if got := errors.Unwrap(fresh); got != nil {
			t.Errorf("an *Error wraps nothing: got %v, want nil", got)
		}
	}
}

func TestErrors_ErrCanceled(t *testing.T) {
	if !errors.Is(purramcp.ErrCanceled, context.Canceled) {
		t.Errorf("error %v, want one matching %v", purramcp.ErrCanceled, context.Canceled)
	}
	if !errors.Is(purramcp.ErrCanceled, purramcp.ErrCanceled) {
		t.Errorf("error %v, want one matching %v", purramcp.ErrCanceled, purramcp.ErrCanceled)
	}
	wrapped := fmt.Errorf("run: %w", purramcp.ErrCanceled)
	if !errors.Is(wrapped, purramcp.ErrCanceled) {
		t.Errorf("error %v, want one matching %v", wrapped, purramcp.ErrCanceled)
	}
	if !errors.Is(wrapped, context.Canceled) {
		t.Errorf("error %v, want one matching %v", wrapped, context.Canceled)
	}
	if errors.Is(purramcp.ErrCanceled, context.DeadlineExceeded) {
		t.Errorf("error %v matches %v", purramcp.ErrCanceled, context.DeadlineExceeded)
	}
	if errors.Is(context.Canceled, purramcp.ErrCanceled) {
		t.Errorf("one value: error %v matches %v", context.Canceled, purramcp.ErrCanceled)
	}
	if got := purramcp.CodeOf(purramcp.ErrCanceled); got != "" {
		t.Errorf("purramcp.CodeOf(purramcp.ErrCanceled) = %q, want %q", got, "")
	}
	for _, sentinel := range allCodes {
		if errors.Is(purramcp.ErrCanceled, sentinel) {
			t.Errorf("error %v matches %v", purramcp.ErrCanceled, sentinel)
		}
	}
}

func TestErrors_CodeOf(t *testing.T) {
	if got := purramcp.CodeOf(nil); got != "" {
		t.Errorf("purramcp.CodeOf(nil) = %q, want %q", got, "")
	}
	if got := purramcp.CodeOf(errors.New("plain")); got != "" {
		t.Errorf("purramcp.CodeOf(errors.New(\"plain\")) = %q, want %q", got, "")
	}
	if got := purramcp.CodeOf(purramcp.Deny("no")); got != "" {
		t.Errorf("purramcp.CodeOf(purramcp.Deny(\"no\")) = %q, want %q", got, "")
	}
	ce := &purramcp.ContractError{Code: "structured_output_schema_mismatch", Path: "$", Keyword: "type"}
	if got := purramcp.CodeOf(fmt.Errorf("x: %w", ce)); got != "structured_output_schema_mismatch" {
		t.Errorf("purramcp.CodeOf(fmt.Errorf(\"x: %%w\", ce)) = %q, want %q", got, "structured_output_schema_mismatch")
	}
	_, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "id", SchemaVersion: "1", Schema: map[string]any{"type": "array"}})
	if got := purramcp.CodeOf(err); got != "structured_output_schema_invalid" {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, "structured_output_schema_invalid")
	}
	var nilErr *purramcp.Error
	if nilErr.Is(purramcp.ErrTimeout) {
		t.Errorf("nilErr.Is(purramcp.ErrTimeout) is true")
	}
	if errors.Is(purramcp.ErrTimeout, nilErr) {
		t.Errorf("errors.Is(purramcp.ErrTimeout, nilErr) is true")
	}
	if errors.Is(nilErr, purramcp.ErrTimeout) {
		t.Errorf("errors.Is(nilErr, purramcp.ErrTimeout) is true")
	}
}

func TestErrors_SentinelsCannotBeRetargeted(t *testing.T) {
	// A sentinel is not an *Error: there is no field an importer could change.
	var e *purramcp.Error
	if errors.As(purramcp.ErrCatalogStale, &e) {
		t.Errorf("errors.As(purramcp.ErrCatalogStale, &e) is true")
	}
	if got := purramcp.CodeOf(purramcp.ErrCatalogStale); got != purramcp.CodeCatalogStale {
		t.Errorf("purramcp.CodeOf(purramcp.ErrCatalogStale) = %q, want %q", got, purramcp.CodeCatalogStale)
	}
	if err := (&purramcp.Error{Code: purramcp.CodeCatalogStale}); !errors.Is(err, purramcp.ErrCatalogStale) {
		t.Errorf("error %v, want one matching %v", err, purramcp.ErrCatalogStale)
	}
	if !errors.Is(purramcp.ErrCatalogStale, (&purramcp.Error{Code: purramcp.CodeCatalogStale})) {
		t.Errorf("error %v, want one matching %v", purramcp.ErrCatalogStale, &purramcp.Error{Code: purramcp.CodeCatalogStale})
	}
	if err := (&purramcp.Error{Code: purramcp.CodeTimeout}); errors.Is(err, purramcp.ErrCatalogStale) {
		t.Errorf("error %v matches %v", err, purramcp.ErrCatalogStale)
	}
	if got, want := purramcp.ErrTimeout.Error(), (&purramcp.Error{Code: purramcp.CodeTimeout}).Error(); got != want {
		t.Errorf("purramcp.ErrTimeout.Error() = %q, want %q", got, want)
	}
}

// assertDiscoveryError checks err is exactly want as a *DiscoveryError and
// still behaves as the plain *Error of its code: same fixed text, errors.Is
// with the sentinel, errors.As to *Error and CodeOf.
func assertDiscoveryError(t *testing.T, want purramcp.DiscoveryError, sentinel error, err error) {
	t.Helper()
	var d *purramcp.DiscoveryError
	if !errors.As(err, &d) {
		t.Fatalf("%T %v", err, err)
	}
	if got := *d; !reflect.DeepEqual(got, want) {
		t.Errorf("*d = %v, want %v", got, want)
	}
	text := "purramcp: MCP tool boundary rejected the operation: " + want.Code
	if got := err.Error(); got != text {
		t.Errorf("fixed text: got %q, want %q", got, text)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if got := fmt.Sprintf(verb, err); got != text {
			t.Errorf("%s shows no field: got %q, want %q", verb, got, text)
		}
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(err, sentinel) is false")
	}
	if !errors.Is(err, &purramcp.Error{Code: want.Code}) {
		t.Errorf("errors.Is(err, &purramcp.Error{Code: want.Code}) is false")
	}
	if errors.Is(err, purramcp.ErrTimeout) {
		t.Errorf("errors.Is(err, purramcp.ErrTimeout) is true")
	}
	var e *purramcp.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(err, &e) is false")
	}
	if want := (&purramcp.Error{Code: want.Code}); !reflect.DeepEqual(e, want) {
		t.Errorf("e = %v, want %v", e, want)
	}
	if got := purramcp.CodeOf(err); got != want.Code {
		t.Errorf("purramcp.CodeOf(err) = %q, want %q", got, want.Code)
	}
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
			if catalog != nil {
				t.Errorf("catalog = %v, want nil", catalog)
			}
			report, rerr := purramcp.InspectTool(sdkTool(t, sc.Tool), purramcp.Limits{}, purramcp.SchemaPolicy{})
			if rerr != nil {
				t.Fatal(rerr)
			}
			if report.Bindable {
				t.Fatalf("report.Bindable is true")
			}
			fromReport := purramcp.DiscoveryError{Code: report.Code, RemoteName: report.Name, Schema: report.Schema,
				Path: report.Path, Keyword: report.Keyword}
			assertDiscoveryError(t, fromReport, purramcp.ErrSchemaUnsupported, err)
			if fromReport.Code != sc.ErrorCode {
				t.Errorf("fromReport.Code = %q, want %q", fromReport.Code, sc.ErrorCode)
			}
			if w, ok := want[sc.ID]; ok {
				if !reflect.DeepEqual(fromReport, w) {
					t.Errorf("fromReport = %v, want %v", fromReport, w)
				}
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
			if rerr != nil {
				t.Fatal(rerr)
			}
			if got := (purramcp.DiscoveryError{Code: report.Code, RemoteName: report.Name,
				Schema: report.Schema, Path: report.Path, Keyword: report.Keyword}); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDiscoveryError_CatalogLimits: a listing over MaxPages, MaxTools or
// MaxCatalogBytes fails DiscoverTools and InspectCatalog with a
// *DiscoveryError naming the Limits field and no tool, whether discovery
// counted the decoded page or the bounding layer rejected it unread (its
// cap is the limit left plus a slack: 64 tools, 4 KiB), over io and HTTP
// (JSON and SSE).
func TestDiscoveryError_CatalogLimits(t *testing.T) {
	var compact bytes.Buffer // one line: an SSE data line holds it
	if err := json.Compact(&compact, loadMCPFixture(t).Tool); err != nil {
		t.Fatal(err)
	}
	tool := compact.String()
	unbound := func(description int) string {
		return `{"name":"unbound","description":"` + strings.Repeat("x", description) + `","inputSchema":{"type":"object"}}`
	}
	var many []string
	for i := range 70 {
		many = append(many, `{"name":"t`+strconv.Itoa(i)+`","inputSchema":{"type":"object"}}`)
	}
	for _, tc := range []struct {
		name    string
		pages   []string
		limits  purramcp.Limits
		keyword string
	}{
		{"pages", []string{page("c1", tool), page("c2"), page("c3"), page("")}, purramcp.Limits{MaxPages: 2}, "MaxPages"},
		{"tools", []string{page("", tool, unbound(1))}, purramcp.Limits{MaxTools: 1}, "MaxTools"},
		{"tools_across_pages", []string{page("c1", tool), page("", unbound(1))}, purramcp.Limits{MaxTools: 1}, "MaxTools"},
		{"bytes", []string{page("", tool, unbound(3000))}, purramcp.Limits{MaxCatalogBytes: 2000}, "MaxCatalogBytes"},
		{"bytes_across_pages", []string{page("c1", tool), page("", unbound(1900))}, purramcp.Limits{MaxCatalogBytes: 2000}, "MaxCatalogBytes"},
		{"layer_bytes", []string{page("", tool, unbound(8000))}, purramcp.Limits{MaxCatalogBytes: 2000}, "MaxCatalogBytes"},
		{"layer_tools", []string{page("", append([]string{tool}, many...)...)}, purramcp.Limits{MaxTools: 1}, "MaxTools"},
	} {
		want := purramcp.DiscoveryError{Code: purramcp.CodeCatalogLimitExceeded, Path: "$", Keyword: tc.keyword}
		t.Run(tc.name, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: tc.pages})
			_, err := discoverDefault(t, h, tc.limits)
			assertDiscoveryError(t, want, purramcp.ErrCatalogLimitExceeded, err)
			h = rawHarness(t, &rawServer{pages: tc.pages})
			report, err := purramcp.InspectCatalog(t.Context(), h.session, "fixture",
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.limits})
			if report != nil {
				t.Errorf("report = %v, want nil", report)
			}
			assertDiscoveryError(t, want, purramcp.ErrCatalogLimitExceeded, err)
			if !strings.HasPrefix(tc.name, "layer_") || len(tc.pages) != 1 {
				return
			}
			for _, sse := range []bool{false, true} {
				h := (&httpPeer{list: tc.pages[0], sseList: sse}).startInMemory(t)
				_, err := discoverDefault(t, h, tc.limits)
				assertDiscoveryError(t, want, purramcp.ErrCatalogLimitExceeded, err)
			}
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
			if errors.As(err, &d) {
				t.Errorf("errors.As(err, &d) is true")
			}
			if want := (&purramcp.Error{Code: purramcp.CodeNameConflict}); !reflect.DeepEqual(err, want) {
				t.Errorf("err = %v, want %v", err, want)
			}
		})
	}
}

// TestDiscoveryError_Nil: a nil *DiscoveryError matches nothing.
func TestDiscoveryError_Nil(t *testing.T) {
	var d *purramcp.DiscoveryError
	if d.Is(purramcp.ErrSchemaUnsupported) {
		t.Errorf("d.Is(purramcp.ErrSchemaUnsupported) is true")
	}
	if got := d.Unwrap(); got != nil {
		t.Errorf("d.Unwrap() = %v, want nil", got)
	}
	if got := fmt.Sprintf("%+v", d); got != "<nil>" {
		t.Errorf("fmt.Sprintf(\"%%+v\", d) = %q, want %q", got, "<nil>")
	}
}

// TestErrors_OneTableOfCodes: errors.go exports every code of the one
// table (internal/codes) exactly once, as Code<Name> = codes.<Name>, each
// comment names its value, and the values are the codes allCodes spells.
func TestErrors_OneTableOfCodes(t *testing.T) {
	fset := token.NewFileSet()
	table, err := parser.ParseFile(fset, "internal/codes/codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{} // name -> code
	for _, decl := range table.Decls {
		for _, spec := range decl.(*ast.GenDecl).Specs {
			vs := spec.(*ast.ValueSpec)
			values[vs.Names[0].Name], _ = strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
		}
	}
	if len(values) != len(allCodes) {
		t.Fatalf("internal/codes holds %d codes, the package reports %d", len(values), len(allCodes))
	}
	root, err := parser.ParseFile(fset, "errors.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, decl := range root.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			sel, ok := vs.Values[0].(*ast.SelectorExpr)
			if !ok {
				continue
			}
			name := strings.TrimPrefix(vs.Names[0].Name, "Code")
			if sel.Sel.Name != name || exported[name] {
				t.Errorf("%s = codes.%s: want each table name once, as Code<Name>", vs.Names[0].Name, sel.Sel.Name)
			}
			exported[name] = true
			code := values[name]
			if _, ok := allCodes[code]; !ok {
				t.Errorf("codes.%s = %q is not a code the package reports", name, code)
			}
			if !strings.Contains(vs.Doc.Text(), strconv.Quote(code)) {
				t.Errorf("the comment of Code%s does not name its value %q", name, code)
			}
		}
	}
	if len(exported) != len(values) {
		t.Errorf("errors.go exports %d of the table's %d codes", len(exported), len(values))
	}
}

// TestOutcomeCode: Run's two failure channels fold into one code.
func TestOutcomeCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  purramcp.ToolResult
		err  error
		want string
	}{
		{"success", purramcp.ToolResult{EffectState: "not_started"}, nil, ""},
		{"known failure", purramcp.FailedResult(purramcp.CodeCatalogStale), nil, "mcp_catalog_stale"},
		{"canceled", purramcp.ToolResult{}, purramcp.ErrCanceled, "canceled"},
		{"wrapped canceled", purramcp.ToolResult{}, fmt.Errorf("x: %w", purramcp.ErrCanceled), "canceled"},
		{"adapter error", purramcp.ToolResult{}, &purramcp.Error{Code: purramcp.CodeTimeout}, "mcp_timeout"},
		{"host failure", purramcp.ToolResult{}, errors.New("host text"), "host_failure"},
		{"zero", purramcp.ToolResult{}, nil, ""},
	} {
		if got := purramcp.OutcomeCode(tc.res, tc.err); got != tc.want {
			t.Errorf("%s: OutcomeCode = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFailedResult: a known failure has the empty envelope, effect
// not_started and the code, and marshals as Run's failures do.
func TestFailedResult(t *testing.T) {
	res := purramcp.FailedResult(purramcp.CodeScopeDenied)
	want := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}}, EffectState: "not_started",
		ErrorCode: "mcp_scope_denied"}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("FailedResult = %#v, want %#v", res, want)
	}
	raw, err := json.Marshal(res.Content)
	if err != nil || string(raw) != `{"text":[],"structured":null}` {
		t.Errorf("envelope %s, %v", raw, err)
	}
}
