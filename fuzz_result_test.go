package purramcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/jssize"
)

// Fuzz targets for the MCP boundary (style.md T7): result conversion here,
// discovery pages and bindings in fuzz_discover_test.go. Each iteration
// connects its own in-memory session, closed at the iteration's cleanup,
// and checks that no goroutine outlives it.

// fuzzNoGoroutineGrowth records the goroutine count now and, at the end of
// the iteration (after every later cleanup, so after the session closed),
// waits up to 5s for the count to fall back to it. Register it before the
// server starts.
func fuzzNoGoroutineGrowth(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines outlive the iteration (%d before it)", runtime.NumGoroutine(), before)
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	})
}

// fuzzResultCodes are the codes Run may report for a result the server
// answered: conversion failures and an undecodable result (adapter.md §6).
var fuzzResultCodes = []string{"mcp_result_invalid", "mcp_result_too_large", "mcp_result_unsupported",
	"mcp_tool_error"}

// fuzzResultSchemas are the output schemas FuzzConvertResult chooses from:
// the fixture tool's, none, the declared-dialect tool's (a root $schema),
// benchOutputSchema and the smallest object schema.
func fuzzResultSchemas(t testing.TB, fx mcpFixture) []json.RawMessage {
	t.Helper()
	outputOf := func(tool json.RawMessage) json.RawMessage {
		var rt rawTool
		require.NoError(t, json.Unmarshal(tool, &rt))
		require.NotEmpty(t, rt.OutputSchema)
		return rt.OutputSchema
	}
	return []json.RawMessage{outputOf(fx.Tool), nil, outputOf(fx.DeclaredDialectTool),
		json.RawMessage(benchOutputSchema), json.RawMessage(`{"type":"object"}`)}
}

// fuzzResultSeed is one FuzzConvertResult input.
type fuzzResultSeed struct {
	result                    string
	schema                    uint8
	schemaText                string
	maxResultBytes, maxBlocks uint32
	modern                    bool
}

// fuzzResultSeeds returns every mcp_tools.json call case under the fixture
// schema at both handshakes, with its limits, and every structured_output.json
// case text as structured content under its own schema text.
func fuzzResultSeeds(t testing.TB, fx mcpFixture) []fuzzResultSeed {
	t.Helper()
	var seeds []fuzzResultSeed
	for _, tc := range fx.Cases {
		s := fuzzResultSeed{result: string(tc.Result)}
		if tc.Limits != nil {
			s.maxResultBytes, s.maxBlocks = uint32(tc.Limits.MaxResultBytes), uint32(tc.Limits.MaxContentBlocks)
		}
		seeds = append(seeds, s)
		s.modern = true
		seeds = append(seeds, s)
	}
	for i, tc := range loadOutputVectors(t).Cases {
		seeds = append(seeds, fuzzResultSeed{
			result: `{"content":[{"type":"text","text":"case"}],"structuredContent":` + tc.Text + `}`,
			schema: uint8(i), schemaText: string(tc.Schema), modern: i%2 == 0})
	}
	return seeds
}

// fuzzLimit maps a fuzzed value onto 0 (the default) or 1..max.
func fuzzLimit(v uint32, max int) int {
	if v == 0 {
		return 0
	}
	return 1 + int(v%uint32(max))
}

// FuzzConvertResult serves fuzzed tools/call result JSON from the raw
// scripted server for a tool whose output schema is chosen from the fixture
// or, when it compiles, is fuzzed schema text, under fuzzed MaxResultBytes
// and MaxContentBlocks (adapter.md §6). Run sends exactly one tools/call and
// never returns an error; a failure is a known result code with the empty
// envelope, predicted where the order of §6 decides it (isError, then the
// block count, then the result size, counted independently from the
// go-sdk decoding); a success has the text blocks in order and structured
// content that passes the output contract, and fits both limits. The
// fixture's own cases keep their expected codes.
func FuzzConvertResult(f *testing.F) {
	fx := loadMCPFixture(f)
	schemas := fuzzResultSchemas(f, fx)
	seeds := fuzzResultSeeds(f, fx)
	require.Len(f, seeds, 2*14+62, "seed count")
	for _, s := range seeds {
		f.Add([]byte(s.result), s.schema, s.schemaText, s.maxResultBytes, s.maxBlocks, s.modern)
	}
	f.Add([]byte(`{}`), uint8(1), "", uint32(6), uint32(0), true) // arguments over MaxResultBytes
	expected := map[string]string{}                               // compact fixture result → code, under the fixture schema and limits
	for _, tc := range fx.Cases {
		if tc.ErrorCode == nil || *tc.ErrorCode != "mcp_invalid_arguments" {
			var buf bytes.Buffer
			require.NoError(f, json.Compact(&buf, tc.Result))
			expected[buf.String()] = ""
			if tc.ErrorCode != nil {
				expected[buf.String()] = *tc.ErrorCode
			}
		}
	}
	f.Fuzz(func(t *testing.T, result []byte, schema uint8, schemaText string, maxResultBytes, maxBlocks uint32,
		modern bool) {
		if !json.Valid(result) {
			return // the raw server can only send JSON; undecodable results are behaviour tests
		}
		output, fromFixture := schemas[int(schema)%len(schemas)], true
		if schemaText != "" && json.Valid([]byte(schemaText)) {
			if _, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
				Schema: json.RawMessage(schemaText)}); err == nil {
				output, fromFixture = json.RawMessage(schemaText), false
			}
		}
		limits := purramcp.Limits{MaxResultBytes: fuzzLimit(maxResultBytes, 65536),
			MaxContentBlocks: fuzzLimit(maxBlocks, 128), Timeout: 10 * time.Second}
		fuzzNoGoroutineGrowth(t)
		tool := withField(t, fx.Tool, "outputSchema", nil)
		if output != nil {
			tool = withField(t, fx.Tool, "outputSchema", output)
		}
		raw := &rawServer{modern: modern, pages: []string{toolsPage(t, "", tool)},
			call: func(json.RawMessage) (string, *jsonrpcError) { return string(result), nil }}
		h := rawHarness(t, raw)
		catalog, err := purramcp.DiscoverTools(t.Context(), h.session, "fuzz", searchBinding(),
			purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: limits})
		if !fromFixture && err != nil {
			// A compiled schema may still be over MaxSchemaBytes as compact JSON.
			require.Equal(t, "mcp_schema_unsupported", purramcp.CodeOf(err), "discovery of schema %q", schemaText)
			return
		}
		require.NoError(t, err, "discovery of output schema %s", output)

		reg := catalog.Registrations()[0]
		res, err := reg.Run(t.Context(), fuzzArguments, purramcp.ToolContext{CallID: "call", ToolName: "search"})
		require.NoError(t, err, "Run with result %q", result)
		require.Equal(t, "not_started", res.EffectState, "result %q", result)
		lists, calls := h.counts()
		if _, err := fuzzInputContract(t, fx, limits).Parse(string(fuzzArguments)); err != nil {
			// MaxResultBytes also bounds arguments (adapter.md §4.2).
			require.Equal(t, [2]int{1, 0}, [2]int{lists, calls}, "tools/list and tools/call requests")
			require.Equal(t, "mcp_invalid_arguments", res.ErrorCode, "MaxResultBytes %d", limits.MaxResultBytes)
			return
		}
		require.Equal(t, [2]int{1, 1}, [2]int{lists, calls}, "tools/list and tools/call requests for %q", result)

		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, result))
		if want, ok := expected[buf.String()]; ok && fromFixture && schema%uint8(len(schemas)) == 0 &&
			fuzzFixtureLimits(fx, buf.String(), limits) {
			assert.Equal(t, want, res.ErrorCode, "fixture result %s", result)
		}
		fuzzCheckResult(t, result, output, limits, res)
	})
}

// fuzzArguments are the arguments of every FuzzConvertResult call.
var fuzzArguments = json.RawMessage(`{"q":"a"}`)

// fuzzInputContract is the fixture tool's input contract under limits, as
// discovery compiles it: MaxResultBytes bounds the argument text and value.
func fuzzInputContract(t *testing.T, fx mcpFixture, limits purramcp.Limits) *purramcp.Contract {
	resolved, err := purramcp.ResolveLimits(limits)
	require.NoError(t, err)
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	require.NoError(t, json.Unmarshal(fx.Tool, &tool))
	c, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
		Schema: tool.InputSchema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
	require.NoError(t, err)
	return c
}

// fuzzFixtureLimits reports whether limits are the ones the fixture case
// with this compact result runs under.
func fuzzFixtureLimits(fx mcpFixture, result string, limits purramcp.Limits) bool {
	for _, tc := range fx.Cases {
		var buf bytes.Buffer
		if json.Compact(&buf, tc.Result) != nil || buf.String() != result {
			continue
		}
		var want purramcp.Limits
		if tc.Limits != nil {
			want.MaxResultBytes, want.MaxContentBlocks = tc.Limits.MaxResultBytes, tc.Limits.MaxContentBlocks
		}
		return want.MaxResultBytes == limits.MaxResultBytes && want.MaxContentBlocks == limits.MaxContentBlocks
	}
	return false
}

// fuzzCheckResult checks Run's result against result as go-sdk decodes it.
func fuzzCheckResult(t *testing.T, result []byte, output json.RawMessage, limits purramcp.Limits,
	res purramcp.ToolResult) {
	resolved, err := purramcp.ResolveLimits(limits)
	require.NoError(t, err)
	var decoded mcp.CallToolResult
	decodeErr := json.Unmarshal(result, &decoded)
	if res.ErrorCode != "" {
		require.Contains(t, fuzzResultCodes, res.ErrorCode, "result %q", result)
		require.Equal(t, purramcp.ToolResult{Content: emptyEnvelope, EffectState: "not_started",
			ErrorCode: res.ErrorCode}, res, "failed result for %q", result)
	}
	if decodeErr != nil {
		require.Equal(t, "mcp_result_invalid", res.ErrorCode, "undecodable result %q", result)
		return
	}
	if fuzzDepth(result) > 990 {
		return // go-sdk's 1000-level bound applies to the whole JSON-RPC message
	}
	size, sizeErr := jssize.Size(&decoded) // the full encoding/json measure
	require.NoError(t, sizeErr, "size of the decoded result %q", result)
	switch {
	case decoded.IsError:
		require.Equal(t, "mcp_tool_error", res.ErrorCode, "isError result %q", result)
		return
	case len(decoded.Content) > resolved.MaxContentBlocks || size > resolved.MaxResultBytes:
		require.Equal(t, "mcp_result_too_large", res.ErrorCode, "result %q: %d blocks, %d bytes", result,
			len(decoded.Content), size)
		return
	}
	require.NotEqual(t, "mcp_result_too_large", res.ErrorCode, "result %q: %d blocks, %d bytes", result,
		len(decoded.Content), size)
	if res.ErrorCode != "" {
		return
	}
	text := []string{}
	for _, block := range decoded.Content {
		tc, ok := block.(*mcp.TextContent)
		require.True(t, ok, "result %q succeeded with a %T block", result, block)
		text = append(text, tc.Text)
	}
	require.Equal(t, text, res.Content.Text, "text of result %q", result)
	require.False(t, decoded.NeedsInput(), "result %q succeeded asking for input", result)
	if decoded.StructuredContent == nil {
		require.Nil(t, res.Content.Structured, "structured content of result %q", result)
	} else {
		require.Equal(t, decoded.StructuredContent, any(res.Content.Structured), "structured content of %q", result)
	}
	if output != nil {
		var schema map[string]any // as go-sdk decodes it; the root $schema is not compiled
		require.NoError(t, json.Unmarshal(output, &schema))
		delete(schema, "$schema")
		contract, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "fuzz", SchemaVersion: "1",
			Schema: schema, Limits: purramcp.ContractLimits{OutputBytes: resolved.MaxResultBytes}})
		require.NoError(t, err, "output schema %s", output)
		got, err := contract.ValidateValue(res.Content.Structured)
		require.NoError(t, err, "structured content of result %q under %s", result, output)
		require.Equal(t, res.Content.Structured, got, "structured content of result %q", result)
	}
}

// fuzzDepth is the deepest nesting of arrays and objects in JSON text.
func fuzzDepth(text []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range text {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// fuzzCheckError checks the closed error surface of discovery (style.md E1,
// E2): nil catalog, an *Error with a code in codes and fixed text.
func fuzzCheckError(t *testing.T, catalog *purramcp.Catalog, err error, codes []string, what string) string {
	require.Nil(t, catalog, "%s failed but returned a catalog", what)
	var e *purramcp.Error
	require.True(t, errors.As(err, &e), "%s: error %T %v is not an *Error", what, err, err)
	require.Contains(t, codes, e.Code, "%s", what)
	require.Equal(t, "purramcp: MCP tool boundary rejected the operation: "+e.Code, err.Error(), "%s", what)
	require.False(t, errors.Is(err, purramcp.ErrCanceled), "%s", what)
	return e.Code
}

// fuzzCheckCatalog checks a discovered catalog against its bindings: a
// 64-hex digest that is the identity digest of the snapshot without it,
// entries sorted by local name, one per binding with its normalized policy,
// and registrations in the same order.
func fuzzCheckCatalog(t *testing.T, catalog *purramcp.Catalog, bindings map[string]purramcp.ToolBinding,
	protocol, what string) {
	require.NotNil(t, catalog, "%s", what)
	snap := catalog.Snapshot()
	require.Regexp(t, fuzzDigestPattern, snap.RevisionDigest, "%s", what)
	require.Equal(t, protocol, snap.ProtocolVersion, "%s", what)
	raw, err := json.Marshal(snap)
	require.NoError(t, err, "%s", what)
	var identity map[string]any
	require.NoError(t, json.Unmarshal(raw, &identity), "%s", what)
	delete(identity, "revisionDigest")
	digest, err := purramcp.IdentityDigest(identity)
	require.NoError(t, err, "%s", what)
	require.Equal(t, digest, snap.RevisionDigest, "%s: digest of the snapshot minus revisionDigest", what)

	require.Len(t, snap.Entries, len(bindings), "%s", what)
	require.True(t, slices.IsSortedFunc(snap.Entries, func(a, b purramcp.ToolEntry) int {
		return bytes.Compare([]byte(a.LocalName), []byte(b.LocalName))
	}), "%s: entries sorted by local name", what)
	regs := catalog.Registrations()
	require.Len(t, regs, len(bindings), "%s", what)
	for i, e := range snap.Entries {
		b, ok := bindings[e.RemoteName]
		require.True(t, ok, "%s: entry %q is not bound", what, e.RemoteName)
		require.Equal(t, b.LocalName, e.LocalName, "%s", what)
		require.Equal(t, b.ConcurrencySafe, e.ConcurrencySafe, "%s", what)
		require.Equal(t, purramcp.ToolPolicy{Mode: "read", Title: fuzzTrimJS(b.Policy.Title), RiskLevel: "read"},
			e.Policy, "%s", what)
		require.Equal(t, e.LocalName, regs[i].Name, "%s", what)
	}
	require.False(t, catalog.Stale(), "%s", what)
}
