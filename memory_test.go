package purramcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// Memory under load (issue "Prove it under load and attack", item 4): a
// catalog and 1,000 sequential Runs over a real go-sdk session keep the heap
// bounded. HeapAlloc is read after runtime.GC(), so the figures are live
// heap: the catalog, both ends of the in-memory session and the test's own
// state. A peak sampler reads HeapAlloc without GC every millisecond.

// memoryRuns is the number of sequential Runs measured.
const memoryRuns = 1000

// Bounds, with the reasoning behind each (figures measured with go1.26 on
// linux/amd64, the same with and without -race):
//   - runGrowthBound: after a warm-up, 1,000 Runs may leave at most 256 KiB
//     more live heap, 256 bytes per Run. Measured growth is 10–25 KiB in all
//     (go-sdk and runtime bookkeeping), while retaining just each Run's
//     result envelope adds about 480 KiB and fails; each Run allocates about
//     390 KB, mostly go-sdk's JSON decoding at both ends of the in-process
//     session, so keeping any share of it per Run shows.
//   - catalogBound: the maximum catalog (a tools/list page of ~1 MiB) and
//     its registrations keep about 3.0 MiB live: every bound schema lives as
//     a compiled contract, a snapshot copy and a registration copy, each as
//     Go maps. 5 MiB leaves room for map layout changes, while keeping
//     go-sdk's decoded page as well (about 2–4 MiB) would fail.
const (
	runGrowthBound = 256 << 10
	catalogBound   = 5 << 20
)

// heapAlloc returns HeapAlloc after two collections (the second frees what
// finalizers released in the first).
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// peakSampler records the largest HeapAlloc it sees until stopped.
type peakSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done sync.WaitGroup
}

func startPeakSampler() *peakSampler {
	p := &peakSampler{stop: make(chan struct{})}
	p.done.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > p.peak.Load() {
				p.peak.Store(m.HeapAlloc)
			}
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	})
	return p
}

func (p *peakSampler) finish() uint64 {
	close(p.stop)
	p.done.Wait()
	return p.peak.Load()
}

// mib formats a byte count in MiB.
func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// Paddings of memoryTool: memoryPad gives the largest all-bound catalog
// used here; memoryPadOverDigest (a page of 1,015,698 bytes, still under
// MaxCatalogBytes) fails discovery at the digest's budget.
const (
	memoryPad           = 1_790
	memoryPadOverDigest = 1_800
)

// memoryTool is tool i of the maximum catalog: a description and a padded
// input schema sized so that 256 of them, as one tools/list page, come just
// under MaxCatalogBytes.
func memoryTool(i, pad int) *mcp.Tool {
	input := fmt.Sprintf(`{"type":"object","properties":{"q":{"type":"string","description":%q},`+
		`"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},`+
		`"required":["q"],"additionalProperties":false}`, strings.Repeat("q", pad))
	output := `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`
	return &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: strings.Repeat("d", pad),
		InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)}
}

// memoryServer is a go-sdk server with n tools padded by pad bytes twice,
// whose every call answers {"content":[text "ok"],"structuredContent":{"count":1}}
// and only counts (it keeps nothing per call).
func memoryServer(n, pad int) (*mcp.Server, *atomic.Int64) {
	var calls atomic.Int64
	server := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
	for i := range n {
		server.AddTool(memoryTool(i, pad), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}},
				StructuredContent: map[string]any{"count": 1}}, nil
		})
	}
	return server, &calls
}

// memoryBindings binds every tool of memoryServer.
func memoryBindings(n int) map[string]purramcp.ToolBinding {
	bindings := make(map[string]purramcp.ToolBinding, n)
	for i := range n {
		name := fmt.Sprintf("tool_%03d", i)
		bindings[name] = purramcp.ToolBinding{LocalName: name, Scope: purramcp.Unscoped,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Tool " + name}}
	}
	return bindings
}

// TestMemory_BoundedHeap discovers a catalog and runs memoryRuns sequential
// calls round-robin over its registrations, measuring the live heap before
// discovery, after it, after a warm-up and after the runs. The heaviest
// variant (the maximum catalog) is skipped with -short, saying so.
func TestMemory_BoundedHeap(t *testing.T) {
	t.Run("one_tool", func(t *testing.T) { memoryCase(t, 1, 200) })
	t.Run("max_catalog", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: skipping the maximum-catalog memory variant (256 tools, ~1 MiB of tools/list, 1,000 Runs); one_tool still runs")
		}
		// 256 tools of ~3.9 KiB each, all bound: the page is 1,010,578 bytes,
		// 96% of MaxCatalogBytes. It cannot come closer with every tool
		// bound: the revisionDigest's own budget (1 MiB of detached bytes,
		// schema-profile.md B1.1) also counts each entry's localName, policy
		// and concurrencySafe, and is reached first (memoryPadOverDigest).
		memoryCase(t, purramcp.DefaultLimits().MaxTools, memoryPad)
	})
}

// requireNearCatalogLimit checks that the server's one tools/list page
// holds MaxTools tools in 95–100% of MaxCatalogBytes.
func requireNearCatalogLimit(t *testing.T, cs *mcp.ClientSession, limits purramcp.Limits) {
	page, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	encoded, err := json.Marshal(page)
	require.NoError(t, err)
	t.Logf("tools/list page: %d tools, %d bytes (MaxCatalogBytes %d)", len(page.Tools), len(encoded), limits.MaxCatalogBytes)
	require.Len(t, page.Tools, limits.MaxTools)
	require.Greater(t, len(encoded), limits.MaxCatalogBytes*95/100, "the catalog is close to MaxCatalogBytes")
	require.LessOrEqual(t, len(encoded), limits.MaxCatalogBytes)
}

func memoryCase(t *testing.T, n, pad int) {
	server, calls := memoryServer(n, pad)
	cs, monitor := connectSDK(t, server, "")
	limits := purramcp.DefaultLimits()
	if n > 1 {
		requireNearCatalogLimit(t, cs, limits)
	}
	args := json.RawMessage(`{"q":"cats","n":3,"tags":["a","b"]}`)
	want := purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{"ok"}, Structured: map[string]any{"count": 1.0}},
		EffectState: "not_started"}

	before := heapAlloc()
	sampler := startPeakSampler()
	catalog, err := purramcp.DiscoverTools(t.Context(), cs, "memory", memoryBindings(n), purramcp.DiscoveryOptions{Monitor: monitor})
	require.NoError(t, err, "n=%d", n)
	regs := catalog.Registrations()
	require.Len(t, regs, n)
	discovered := heapAlloc()

	run := func(i int) {
		res, err := regs[i%n].Run(t.Context(), args, purramcp.ToolContext{CallID: fmt.Sprint(i)})
		require.NoError(t, err)
		require.Equal(t, want, res, "run %d", i)
	}
	for i := range 100 { // warm-up: pools and caches settle
		run(i)
	}
	warm := heapAlloc()
	var statsBefore, statsAfter runtime.MemStats
	runtime.ReadMemStats(&statsBefore)
	for i := range memoryRuns {
		run(i)
	}
	runtime.ReadMemStats(&statsAfter)
	after := heapAlloc()
	peak := sampler.finish()
	// Both stay live through every measurement: Registrations returns fresh
	// copies of each input schema (about 0.5 MiB for 256 tools here).
	runtime.KeepAlive(catalog)
	runtime.KeepAlive(regs)

	assert.EqualValues(t, 100+memoryRuns, calls.Load(), "one tools/call per Run")
	catalogHeap := int64(discovered) - int64(before)
	growth := int64(after) - int64(warm)
	t.Logf("n=%d: heap before discovery %s, after %s (catalog and registrations %s), after warm-up %s, after %d Runs %s (growth %+d bytes), peak %s; %d bytes and %d allocations per Run",
		n, mib(before), mib(discovered), mib(uint64(max(catalogHeap, 0))), mib(warm), memoryRuns, mib(after), growth, mib(peak),
		(statsAfter.TotalAlloc-statsBefore.TotalAlloc)/memoryRuns, (statsAfter.Mallocs-statsBefore.Mallocs)/memoryRuns)
	assert.Less(t, growth, int64(runGrowthBound), "n=%d: %d Runs retain no per-run state", n, memoryRuns)
	assert.Less(t, catalogHeap, int64(catalogBound), "n=%d: the catalog's and registrations' live heap", n)
}
