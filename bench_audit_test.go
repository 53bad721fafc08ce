package purramcp_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"purra.dev/purramcp"
)

// benchObservedFixture is BenchmarkRun's session and tool, discovered again
// with SlogObserver writing JSON records to io.Discard.
var benchObservedFixture benchShared[benchCall]

// BenchmarkRunObserved is BenchmarkRun with DiscoveryOptions.Observer set to
// SlogObserver over a JSON handler: the cost of auditing every call,
// measuring its result a second time included.
func BenchmarkRunObserved(b *testing.B) {
	shared := benchCallSetup(b)
	f := benchObservedFixture.get(b, func() (benchCall, error) {
		catalog, err := purramcp.DiscoverTools(context.Background(), shared.session, "bench",
			map[string]purramcp.ToolBinding{"docs.search": {LocalName: "search_documents",
				Policy: purramcp.ToolPolicy{Mode: "read", Title: "Search documents"}, Scope: purramcp.Unscoped}},
			purramcp.DiscoveryOptions{Monitor: shared.monitor,
				Observer: purramcp.SlogObserver(slog.New(slog.NewJSONHandler(io.Discard, nil)))})
		if err != nil {
			return benchCall{}, err
		}
		return benchCall{benchSession: shared.benchSession, run: catalog.Registrations()[0].Run}, nil
	})
	benchRun(b, f, 3)
}
