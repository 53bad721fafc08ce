package purramcp_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

func TestLimits_Defaults(t *testing.T) {
	if got, want := purramcp.DefaultLimits(), (purramcp.Limits{MaxPages: 32, MaxTools: 256, MaxCatalogBytes: 1048576, MaxSchemaBytes: 65536,
		MaxDescriptionBytes: 8192, MaxResultBytes: 65536, MaxContentBlocks: 128, Timeout: 30 * time.Second}); !reflect.DeepEqual(got, want) {
		t.Errorf("purramcp.DefaultLimits() = %v, want %v", got, want)
	}
	got, err := purramcp.ResolveLimits(purramcp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := purramcp.DefaultLimits(); !reflect.DeepEqual(got, want) {
		t.Errorf("zero means default: got %v, want %v", got, want)
	}
}

// TestLimits_Ranges: each field 0, 1..default; Timeout 1ms..5m; anything
// else fails mcp_binding_invalid.
func TestLimits_Ranges(t *testing.T) {
	d := purramcp.DefaultLimits()
	fields := map[string]func(*purramcp.Limits) *int{
		"MaxPages":            func(l *purramcp.Limits) *int { return &l.MaxPages },
		"MaxTools":            func(l *purramcp.Limits) *int { return &l.MaxTools },
		"MaxCatalogBytes":     func(l *purramcp.Limits) *int { return &l.MaxCatalogBytes },
		"MaxSchemaBytes":      func(l *purramcp.Limits) *int { return &l.MaxSchemaBytes },
		"MaxDescriptionBytes": func(l *purramcp.Limits) *int { return &l.MaxDescriptionBytes },
		"MaxResultBytes":      func(l *purramcp.Limits) *int { return &l.MaxResultBytes },
		"MaxContentBlocks":    func(l *purramcp.Limits) *int { return &l.MaxContentBlocks },
	}
	for name, field := range fields {
		max := *field(&d)
		for _, v := range []int{1, max / 2, max} {
			var l purramcp.Limits
			*field(&l) = v
			got, err := purramcp.ResolveLimits(l)
			if err != nil {
				t.Fatalf("%s=%d: %v", name, v, err)
			}
			if got := *field(&got); got != v {
				t.Errorf("%v: got %v, want %v", name, got, v)
			}
		}
		for _, v := range []int{-1, max + 1, -max} {
			var l purramcp.Limits
			*field(&l) = v
			_, err := purramcp.ResolveLimits(l)
			if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
				t.Errorf("%s=%d: got %q, want %q", name, v, got, purramcp.CodeBindingInvalid)
			}
		}
	}
	for _, v := range []time.Duration{time.Millisecond, 100 * time.Millisecond, 2 * time.Second, 5 * time.Minute} {
		got, err := purramcp.ResolveLimits(purramcp.Limits{Timeout: v})
		if err != nil {
			t.Fatalf("Timeout=%v: %v", v, err)
		}
		if got.Timeout != v {
			t.Errorf("got.Timeout = %v, want %v", got.Timeout, v)
		}
	}
	for _, v := range []time.Duration{-time.Second, time.Millisecond - 1, 5*time.Minute + 1} {
		_, err := purramcp.ResolveLimits(purramcp.Limits{Timeout: v})
		if got := purramcp.CodeOf(err); got != purramcp.CodeBindingInvalid {
			t.Errorf("Timeout=%v: got %q, want %q", v, got, purramcp.CodeBindingInvalid)
		}
	}
}

// acceptedLimits runs the default discovery and one call under limits at
// both versions: limits the reference passes are accepted and work.
func acceptedLimits(t *testing.T, id string, limits purramcp.Limits) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, limits)
		if err != nil {
			t.Fatalf("%s at %s: %+v accepted: %v", id, version, limits, err)
		}
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		if err != nil {
			t.Fatalf("%s at %s: %v", id, version, err)
		}
		if res.ErrorCode != "" {
			t.Errorf("%s at %s: got %q, want empty", id, version, res.ErrorCode)
		}
	})
}

// TestBehaviorB1_LoweredResultLimits: maxResultBytes 256 and
// maxContentBlocks 1 (rows H12, H13) are accepted.
func TestBehaviorB1_LoweredResultLimits(t *testing.T) {
	acceptedLimits(t, "B1", purramcp.Limits{MaxResultBytes: 256})
	acceptedLimits(t, "B1", purramcp.Limits{MaxContentBlocks: 1})
}

// TestBehaviorB2_Timeouts: timeouts of 100ms and 2s (the in-flight tests)
// are accepted.
func TestBehaviorB2_Timeouts(t *testing.T) {
	acceptedLimits(t, "B2", purramcp.Limits{Timeout: 100 * time.Millisecond})
	acceptedLimits(t, "B2", purramcp.Limits{Timeout: 2 * time.Second})
}

// TestBehaviorB3_CatalogLimitValues: maxPages 1, maxTools 1,
// maxCatalogBytes 64 and maxDescriptionBytes 1 are accepted as values: the
// first two bind the one-page fixture, the last two fail on its content
// (mcp_catalog_limit_exceeded after the list, never mcp_binding_invalid).
func TestBehaviorB3_CatalogLimitValues(t *testing.T) {
	acceptedLimits(t, "B3", purramcp.Limits{MaxPages: 1})
	acceptedLimits(t, "B3", purramcp.Limits{MaxTools: 1})
	f := loadMCPFixture(t)
	for _, limits := range []purramcp.Limits{{MaxCatalogBytes: 64}, {MaxDescriptionBytes: 1}} {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
		_, err := discoverDefault(t, h, limits)
		if got := purramcp.CodeOf(err); got != purramcp.CodeCatalogLimitExceeded {
			t.Errorf("B3 %+v: got %q, want %q", limits, got, purramcp.CodeCatalogLimitExceeded)
		}
		lists, _ := h.counts()
		if lists != 1 {
			t.Errorf("B3 %+v: the value passed validation: got %v, want %v", limits, lists, 1)
		}
	}
}

// TestBehaviorB4_SchemaBytes60: maxSchemaBytes 60 is accepted: a 17-byte
// schema binds, the 74-byte declared one fails (F13).
func TestBehaviorB4_SchemaBytes60(t *testing.T) {
	small := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object"}}`)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, small), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{MaxSchemaBytes: 60})
		if err != nil {
			t.Fatalf("B4 at %s: %v", version, err)
		}
		if got := len(catalog.Registrations()); got != 1 {
			t.Errorf("B4 at %s: len = %d, want %d", version, got, 1)
		}
	})
}

// Memory under load: a catalog and 1,000 sequential Runs over a real go-sdk
// session keep the heap bounded. HeapAlloc is read after runtime.GC(), so the figures are live
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
		// bound: the revisionDigest's own budget (1 MiB of detached bytes)
		// also counts each entry's localName, policy
		// and concurrencySafe, and is reached first (memoryPadOverDigest).
		memoryCase(t, purramcp.DefaultLimits().MaxTools, memoryPad)
	})
}

// requireNearCatalogLimit checks that the server's one tools/list page
// holds MaxTools tools in 95–100% of MaxCatalogBytes.
func requireNearCatalogLimit(t *testing.T, cs *mcp.ClientSession, limits purramcp.Limits) {
	page, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list page: %d tools, %d bytes (MaxCatalogBytes %d)", len(page.Tools), len(encoded), limits.MaxCatalogBytes)
	if got := len(page.Tools); got != limits.MaxTools {
		t.Fatalf("len(page.Tools) = %d, want %d", got, limits.MaxTools)
	}
	if got, limit := len(encoded), limits.MaxCatalogBytes*95/100; got <= limit {
		t.Fatalf("the catalog is close to MaxCatalogBytes: got %v, want > %v", got, limit)
	}
	if got := len(encoded); got > limits.MaxCatalogBytes {
		t.Fatalf("len(encoded) = %v, want <= %v", got, limits.MaxCatalogBytes)
	}
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
	if err != nil {
		t.Fatalf("n=%d: %v", n, err)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != n {
		t.Fatalf("len(regs) = %d, want %d", got, n)
	}
	discovered := heapAlloc()

	run := func(i int) {
		res, err := regs[i%n].Run(t.Context(), args, purramcp.ToolContext{CallID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res, want) {
			t.Fatalf("run %d: got %v, want %v", i, res, want)
		}
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

	if got, want := calls.Load(), int64(100+memoryRuns); got != want {
		t.Errorf("one tools/call per Run: got %v, want %v", got, want)
	}
	catalogHeap := int64(discovered) - int64(before)
	growth := int64(after) - int64(warm)
	t.Logf("n=%d: heap before discovery %s, after %s (catalog and registrations %s), after warm-up %s, after %d Runs %s (growth %+d bytes), peak %s; %d bytes and %d allocations per Run",
		n, mib(before), mib(discovered), mib(uint64(max(catalogHeap, 0))), mib(warm), memoryRuns, mib(after), growth, mib(peak),
		(statsAfter.TotalAlloc-statsBefore.TotalAlloc)/memoryRuns, (statsAfter.Mallocs-statsBefore.Mallocs)/memoryRuns)
	if limit := int64(runGrowthBound); growth >= limit {
		t.Errorf("n=%d: %d Runs retain no per-run state: got %v, want < %v", n, memoryRuns, growth, limit)
	}
	if limit := int64(catalogBound); catalogHeap >= limit {
		t.Errorf("n=%d: the catalog's and registrations' live heap: got %v, want < %v", n, catalogHeap, limit)
	}
}
