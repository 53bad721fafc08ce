package purramcp_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// benchNearEmpty is the session BenchmarkRunNearEmpty and
// BenchmarkRawCallToolNearEmpty share: the search tool, answering
// nearEmptyServer's result.
var benchNearEmpty benchShared[benchCall]

func benchNearEmptySetup(b *testing.B) benchCall {
	return benchNearEmpty.get(b, func() (benchCall, error) {
		s, err := benchConnect(nearEmptyServer())
		if err != nil {
			return benchCall{}, err
		}
		catalog, err := purramcp.DiscoverTools(context.Background(), s.session, "bench",
			map[string]purramcp.ToolBinding{"docs.search": {LocalName: "search_documents",
				Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search documents"}, Scope: purramcp.Unscoped}},
			purramcp.DiscoveryOptions{Monitor: s.monitor})
		if err != nil {
			return benchCall{}, err
		}
		return benchCall{benchSession: s, run: catalog.Registrations()[0].Run}, nil
	})
}

// BenchmarkRunNearEmpty is BenchmarkRun on a near-empty result (one short
// text block, no hits), where Run's fixed cost weighs most. Compare with
// BenchmarkRawCallToolNearEmpty.
func BenchmarkRunNearEmpty(b *testing.B) {
	f := benchNearEmptySetup(b)
	call := purramcp.ToolContext{CallID: "call-1", ToolName: "search_documents", RunID: "run-1"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.run(b.Context(), benchArguments, call)
		if err != nil || res.ErrorCode != "" || len(res.Content.Text) != 1 || res.Content.Structured["count"] != 0.0 {
			b.Fatalf("Run = %+v, %v", res, err)
		}
	}
}

// BenchmarkRawCallToolNearEmpty is BenchmarkRunNearEmpty's baseline, as
// BenchmarkRawCallTool is BenchmarkRun's.
func BenchmarkRawCallToolNearEmpty(b *testing.B) {
	f := benchNearEmptySetup(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.session.CallTool(b.Context(), &mcp.CallToolParams{Name: "docs.search", Arguments: benchArguments})
		if err != nil || res.IsError || len(res.Content) != 1 {
			b.Fatalf("CallTool = %+v, %v", res, err)
		}
		if m, ok := res.StructuredContent.(map[string]any); !ok || m["count"] != 0.0 {
			b.Fatalf("CallTool structured content = %v", res.StructuredContent)
		}
	}
}
