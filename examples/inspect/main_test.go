package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// fixtureServer serves the fixture tool of mcp_tools.json and its six
// schemaCases renamed case.<id>, each schema sent verbatim.
func fixtureServer(t *testing.T) *mcp.Server {
	raw, err := os.ReadFile("../../testdata/mcp_tools.json")
	require.NoError(t, err)
	var f struct {
		Tool        map[string]any `json:"tool"`
		SchemaCases []struct {
			ID   string         `json:"id"`
			Tool map[string]any `json:"tool"`
		} `json:"schemaCases"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	server := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	add := func(name string, tool map[string]any) {
		schema := func(key string) json.RawMessage {
			if tool[key] == nil {
				return nil
			}
			b, err := json.Marshal(tool[key])
			require.NoError(t, err)
			return b
		}
		desc, _ := tool["description"].(string)
		mt := &mcp.Tool{Name: name, Description: desc, InputSchema: schema("inputSchema")}
		if out := schema("outputSchema"); out != nil {
			mt.OutputSchema = out
		}
		server.AddTool(mt, func(_ context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			t.Error("inspect must never call a tool")
			return &mcp.CallToolResult{}, nil
		})
	}
	add("remote.search", f.Tool)
	for _, sc := range f.SchemaCases {
		add("case."+sc.ID, sc.Tool)
	}
	return server
}

func inspectFixture(t *testing.T, policy purramcp.SchemaPolicy, asJSON bool) string {
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := fixtureServer(t).Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	defer ss.Close()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), clientT, policy, &out, asJSON))
	return out.String()
}

func TestInspectTable(t *testing.T) {
	out := inspectFixture(t, purramcp.SchemaPolicy{}, false)
	want := map[string]string{
		"remote.search":                          "yes  -  -",
		"case.unknown-default-annotation":        "no   mcp_schema_unsupported inputSchema $.properties.query default  annotations",
		"case.unknown-vendor-output-annotation":  "no   mcp_schema_unsupported outputSchema $ x-fastmcp-wrap-result  -",
		"case.other-input-dialect":               "no   mcp_schema_unsupported inputSchema $ $schema  dialect",
		"case.other-output-dialect":              "no   mcp_schema_unsupported outputSchema $ $schema  -",
		"case.nested-dialect":                    "no   mcp_schema_unsupported inputSchema $.properties.q $schema  -",
		"case.reference-with-recognized-dialect": "no   mcp_schema_unsupported inputSchema $ $ref  -",
	}
	lines := strings.Split(out, "\n")
	for name, verdict := range want {
		found := false
		for _, line := range lines {
			fields := strings.Fields(line)
			if len(fields) > 0 && fields[0] == name {
				found = true
				assert.Equal(t, strings.Fields(verdict), fields[1:len(fields)-3], "row of %s", name)
			}
		}
		assert.True(t, found, "no row for %s in:\n%s", name, out)
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "remote.search ") {
			assert.Equal(t, []string{"remote.search", "yes", "-", "-", "16/8192", "187/65536", "109/65536"}, strings.Fields(line))
		}
	}
	assert.Contains(t, out, "policy default, protocol 2026-07-28: 1 of 7 tools bindable; revisionDigest with all bindable tools bound: ")

	wide := inspectFixture(t, purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true}, false)
	assert.Contains(t, wide, "policy dialect+annotations, protocol 2026-07-28: 3 of 7 tools bindable")
}

func TestInspectJSON(t *testing.T) {
	var report struct {
		ProtocolVersion string `json:"protocolVersion"`
		Tools           []struct {
			Name     string `json:"name"`
			Bindable bool   `json:"bindable"`
			Code     string `json:"code"`
			Keyword  string `json:"keyword"`
		} `json:"tools"`
		RevisionDigest string `json:"revisionDigest"`
	}
	require.NoError(t, json.Unmarshal([]byte(inspectFixture(t, purramcp.SchemaPolicy{}, true)), &report))
	require.Len(t, report.Tools, 7)
	assert.Equal(t, "2026-07-28", report.ProtocolVersion)
	assert.Len(t, report.RevisionDigest, 64)
	for _, r := range report.Tools {
		assert.Equal(t, r.Name == "remote.search", r.Bindable, r.Name)
	}
}

// TestInspectStdioServer runs the inspector against the stdio test server
// (examples/stdio-server), built and launched as a child process, as
// `go run ./examples/inspect -- COMMAND` does.
func TestInspectStdioServer(t *testing.T) {
	defer goleak.VerifyNone(t)
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go on PATH")
	bin := filepath.Join(t.TempDir(), "stdio-server")
	out, err := exec.Command(goTool, "build", "-o", bin, "../stdio-server").CombinedOutput()
	require.NoError(t, err, "go build ../stdio-server: %s", out)

	cmd := exec.Command(bin)
	var report bytes.Buffer
	transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	require.NoError(t, run(t.Context(), transport, purramcp.SchemaPolicy{}, &report, false))
	rows := map[string][]string{}
	for _, line := range strings.Split(report.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "units.") {
			rows[f[0]] = f[1:4]
		}
	}
	assert.Equal(t, map[string][]string{"units.convert": {"yes", "-", "-"}, "units.list": {"yes", "-", "-"}}, rows, report.String())
	assert.Contains(t, report.String(), "policy default, protocol 2026-07-28: 2 of 2 tools bindable")
	require.NotNil(t, cmd.ProcessState, "the server process was waited for")
	assert.True(t, cmd.ProcessState.Success())
}
