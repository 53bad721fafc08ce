package purramcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// inspectVerdicts are the reasons InspectTool gives for the six schemaCases.
var inspectVerdicts = map[string][3]string{ // schema, path, keyword
	"unknown-default-annotation":        {"inputSchema", "$.properties.query", "default"},
	"unknown-vendor-output-annotation":  {"outputSchema", "$", "x-fastmcp-wrap-result"},
	"other-input-dialect":               {"inputSchema", "$", "$schema"},
	"other-output-dialect":              {"outputSchema", "$", "$schema"},
	"nested-dialect":                    {"inputSchema", "$.properties.q", "$schema"},
	"reference-with-recognized-dialect": {"inputSchema", "$", "$ref"},
}

func TestInspect_FixtureCatalogVerdicts(t *testing.T) {
	f := loadMCPFixture(t)
	tools := []json.RawMessage{f.Tool, f.DeclaredDialectTool}
	tools[1] = withField(t, tools[1], "name", "remote.declared")
	for _, sc := range f.SchemaCases {
		t.Run(sc.ID, func(t *testing.T) {
			tools = append(tools, withField(t, sc.Tool, "name", "case."+sc.ID))
		})
	}
	for _, version := range testVersions {
		t.Run(version, func(t *testing.T) {
			s := newSDKServer(t, nil, tools...)
			session, monitor := connectSDK(t, s.server, version)
			report, err := purramcp.InspectCatalog(t.Context(), session, "fixture",
				purramcp.DiscoveryOptions{Monitor: monitor})
			require.NoError(t, err)
			require.Len(t, report.Tools, 8)
			assert.Equal(t, version, report.ProtocolVersion)
			byName := map[string]purramcp.ToolReport{}
			for _, r := range report.Tools {
				byName[r.Name] = r
			}
			for _, name := range []string{"remote.search", "remote.declared"} {
				r := byName[name]
				assert.True(t, r.Bindable, "%s bindable", name)
				assert.Empty(t, r.Code+r.Schema+r.Path+r.Keyword, "%s has no reason", name)
				assert.Equal(t, 16, r.DescriptionBytes)
			}
			assert.Equal(t, 187, byName["remote.search"].InputSchemaBytes, "reference-behaviors §1: 187 bytes compact")
			assert.Equal(t, 109, byName["remote.search"].OutputSchemaBytes, "reference-behaviors §1: 109 bytes compact")
			for id, want := range inspectVerdicts {
				r := byName["case."+id]
				assert.False(t, r.Bindable, id)
				assert.Equal(t, "mcp_schema_unsupported", r.Code, id)
				assert.Equal(t, want, [3]string{r.Schema, r.Path, r.Keyword}, id)
			}
			require.Len(t, report.Bindings, 2)
			assert.Equal(t, "remote_search", report.Bindings["remote.search"].LocalName)
			assert.Equal(t, "remote_declared", report.Bindings["remote.declared"].LocalName)
			assert.Len(t, report.RevisionDigest, 64)

			// The digest is what a host binding the same tools would get.
			catalog, err := purramcp.DiscoverTools(t.Context(), session, "fixture", report.Bindings,
				purramcp.DiscoveryOptions{Monitor: monitor})
			require.NoError(t, err)
			assert.Equal(t, report.RevisionDigest, catalog.Snapshot().RevisionDigest)
		})
	}
}

func TestInspect_ToolReasons(t *testing.T) {
	long := strings.Repeat("d", 8193)
	obj := map[string]any{"type": "object"}
	cases := []struct {
		name string
		tool *mcp.Tool
		lim  purramcp.Limits
		want [4]string // code, schema, path, keyword
	}{
		{"ok", &mcp.Tool{Name: "a", InputSchema: obj}, purramcp.Limits{}, [4]string{}},
		{"bad name", &mcp.Tool{Name: "a b", InputSchema: obj}, purramcp.Limits{},
			[4]string{"mcp_binding_invalid", "", "$", "name"}},
		{"description", &mcp.Tool{Name: "a", Description: long, InputSchema: obj}, purramcp.Limits{},
			[4]string{"mcp_catalog_limit_exceeded", "", "$", "MaxDescriptionBytes"}},
		{"schema bytes", &mcp.Tool{Name: "a", InputSchema: obj}, purramcp.Limits{MaxSchemaBytes: 16},
			[4]string{"mcp_schema_unsupported", "inputSchema", "$", "MaxSchemaBytes"}},
		{"not an object", &mcp.Tool{Name: "a", InputSchema: true}, purramcp.Limits{},
			[4]string{"mcp_schema_unsupported", "inputSchema", "$", "schema"}},
		{"root type", &mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "array"}}, purramcp.Limits{},
			[4]string{"mcp_schema_unsupported", "inputSchema", "$", "type"}},
		{"unsafe number", &mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object", "maximum": 1e300}}, purramcp.Limits{},
			[4]string{"mcp_schema_unsupported", "inputSchema", "$", "schema"}},
		{"output pattern", &mcp.Tool{Name: "a", InputSchema: obj, OutputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"s": map[string]any{"type": "string", "pattern": "x"}}}}, purramcp.Limits{},
			[4]string{"mcp_schema_unsupported", "outputSchema", "$.properties.s", "pattern"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := purramcp.InspectTool(tc.tool, tc.lim, purramcp.SchemaPolicy{})
			require.NoError(t, err, tc.name)
			assert.Equal(t, tc.want[0] == "", r.Bindable, tc.name)
			assert.Equal(t, tc.want, [4]string{r.Code, r.Schema, r.Path, r.Keyword}, tc.name)
		})
	}
	_, err := purramcp.InspectTool(nil, purramcp.Limits{}, purramcp.SchemaPolicy{})
	assert.ErrorIs(t, err, purramcp.ErrBindingInvalid)
	_, err = purramcp.InspectTool(&mcp.Tool{Name: "a"}, purramcp.Limits{MaxPages: -1}, purramcp.SchemaPolicy{})
	assert.ErrorIs(t, err, purramcp.ErrBindingInvalid)
}
