//go:build purrabench

package purramcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/strictjson"
)

// The interleaved measurement: one process, each round runs the
// adapter path and its raw go-sdk baseline k times each, in alternating
// order, and the figure is the median of the per-round time ratios with its
// interquartile range. Alternating keeps both sides of a pair under the same
// load on a shared machine, where separate benchmark runs drift apart. The
// Run pairs alternate op by op (adapter, raw, raw, adapter, ...: each op
// timed on its own, so a burst of outside load hits both sides alike,
// which batches of sub-millisecond calls do not); the others alternate
// batches of k ops (adapter first on even rounds, raw first on odd ones),
// so that neither side's working set is evicted by the other's between its
// ops. Allocations are counted over whole batches: three untimed batch
// rounds after the timed ones for op-by-op pairs.
//
// It is a measurement, not a test: it never fails on speed, only on a wrong
// result, and runs only when asked:
//
//	PURRAMCP_INTERLEAVE=1 go test -tags purrabench -run '^TestInterleaved$' -v -timeout 30m .
//
// PURRAMCP_INTERLEAVE_ROUNDS sets the rounds (default 30) and
// PURRAMCP_INTERLEAVE_ONLY a substring of the pair names to run.

// interleaveSide is one side of a pair. before, when set, runs untimed ahead
// of each batch of k ops (e.g. to open k fresh sessions); op(i) is the timed
// work of the batch's i-th op; after, when set, runs untimed after the batch
// (e.g. to check what the last op returned and close the sessions).
type interleaveSide struct {
	before func(k int) error
	op     func(i int) error
	after  func() error
}

// interleavePair is one adapter path and its raw baseline. byOp alternates
// the sides op by op (neither side may have before or after).
type interleavePair struct {
	name         string
	k            int
	byOp         bool
	adapter, raw interleaveSide
}

// interleaveResult is what one pair measured.
type interleaveResult struct {
	ratios                 []float64 // per round: adapter time / raw time
	adapterNs, rawNs       []float64 // per round: ns per op
	adapterAlloc, rawAlloc []float64 // per round: heap allocations per op
	adapterBytes, rawBytes []float64 // per round: heap bytes per op
}

// runBatch runs s k times and returns ns, allocations and bytes per op. The
// allocation counts are process-wide, so they include the in-memory server's
// work on both sides alike.
func runBatch(s interleaveSide, k int) (ns, allocs, bytes float64, err error) {
	if s.before != nil {
		if err := s.before(k); err != nil {
			return 0, 0, 0, err
		}
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	for i := range k {
		if err := s.op(i); err != nil {
			return 0, 0, 0, err
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&m1)
	if s.after != nil {
		if err := s.after(); err != nil {
			return 0, 0, 0, err
		}
	}
	n := float64(k)
	return float64(elapsed.Nanoseconds()) / n, float64(m1.Mallocs-m0.Mallocs) / n,
		float64(m1.TotalAlloc-m0.TotalAlloc) / n, nil
}

// interleave measures p over rounds rounds, after one untimed warm-up round.
func interleave(p interleavePair, rounds int) (interleaveResult, error) {
	if p.byOp {
		if p.adapter.before != nil || p.adapter.after != nil || p.raw.before != nil || p.raw.after != nil {
			return interleaveResult{}, fmt.Errorf("%s: an op-by-op pair has no setup", p.name)
		}
		return interleaveOps(p, rounds)
	}
	var r interleaveResult
	for round := -1; round < rounds; round++ {
		a, b, err := batchRound(p, round)
		if err != nil {
			return r, err
		}
		if round < 0 {
			continue // warm-up
		}
		r.ratios = append(r.ratios, a[0]/b[0])
		r.adapterNs, r.rawNs = append(r.adapterNs, a[0]), append(r.rawNs, b[0])
		r.adapterAlloc, r.rawAlloc = append(r.adapterAlloc, a[1]), append(r.rawAlloc, b[1])
		r.adapterBytes, r.rawBytes = append(r.adapterBytes, a[2]), append(r.rawBytes, b[2])
	}
	return r, nil
}

// batchRound runs one batch of each side of p, adapter first on even
// rounds, and returns ns, allocations and bytes per op of each.
func batchRound(p interleavePair, round int) (a, b [3]float64, err error) {
	runtime.GC()
	if round%2 == 0 {
		if a[0], a[1], a[2], err = runBatch(p.adapter, p.k); err == nil {
			b[0], b[1], b[2], err = runBatch(p.raw, p.k)
		}
	} else {
		if b[0], b[1], b[2], err = runBatch(p.raw, p.k); err == nil {
			a[0], a[1], a[2], err = runBatch(p.adapter, p.k)
		}
	}
	if err != nil {
		err = fmt.Errorf("%s, round %d: %w", p.name, round, err)
	}
	return a, b, err
}

// interleaveOps measures a pair without setup op by op: each round times k
// ops of each side, alternating sides op by op (the side that goes first
// alternates too), after one untimed warm-up round; then three untimed
// batch rounds count allocations.
func interleaveOps(p interleavePair, rounds int) (interleaveResult, error) {
	var r interleaveResult
	timed := func(op func(int) error, i int) (time.Duration, error) {
		start := time.Now()
		err := op(i)
		return time.Since(start), err
	}
	for round := -1; round < rounds; round++ {
		runtime.GC()
		var ta, tb time.Duration
		for i := range p.k {
			first, second := p.adapter.op, p.raw.op
			if (round+i)%2 != 0 {
				first, second = second, first
			}
			d1, err := timed(first, i)
			if err != nil {
				return r, fmt.Errorf("%s, round %d: %w", p.name, round, err)
			}
			d2, err := timed(second, i)
			if err != nil {
				return r, fmt.Errorf("%s, round %d: %w", p.name, round, err)
			}
			if (round+i)%2 != 0 {
				d1, d2 = d2, d1
			}
			ta, tb = ta+d1, tb+d2
		}
		if round < 0 {
			continue // warm-up
		}
		n := float64(p.k)
		r.ratios = append(r.ratios, float64(ta)/float64(tb))
		r.adapterNs, r.rawNs = append(r.adapterNs, float64(ta.Nanoseconds())/n), append(r.rawNs, float64(tb.Nanoseconds())/n)
	}
	for round := range 3 {
		a, b, err := batchRound(p, round)
		if err != nil {
			return r, err
		}
		r.adapterAlloc, r.rawAlloc = append(r.adapterAlloc, a[1]), append(r.rawAlloc, b[1])
		r.adapterBytes, r.rawBytes = append(r.adapterBytes, a[2]), append(r.rawBytes, b[2])
	}
	return r, nil
}

// quantile is the q-quantile of xs by linear interpolation between order
// statistics (xs is not modified).
func quantile(xs []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

func median(xs []float64) float64 { return quantile(xs, 0.5) }

// TestInterleaved runs every pair and logs one line per pair:
// median ratio, IQR, rounds, median ns/op and allocations/op of both sides.
func TestInterleaved(t *testing.T) {
	if os.Getenv("PURRAMCP_INTERLEAVE") == "" {
		t.Skip("a measurement, not a test: set PURRAMCP_INTERLEAVE=1 to run it")
	}
	rounds := 30
	if s := os.Getenv("PURRAMCP_INTERLEAVE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PURRAMCP_INTERLEAVE_ROUNDS=%q: want a positive integer", s)
		}
		rounds = n
	}
	only := os.Getenv("PURRAMCP_INTERLEAVE_ONLY")
	for _, b := range interleaveWorkloads() {
		if only != "" && !strings.Contains(b.name, only) {
			continue
		}
		p := b.build(t)
		p.name = b.name
		r, err := interleave(p, rounds)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%-34s ratio %.3f (IQR %.3f–%.3f, %d rounds, k=%d); adapter %s/op %.0f allocs %.0f B; "+
			"raw %s/op %.0f allocs %.0f B; extra allocs %+.0f",
			p.name, median(r.ratios), quantile(r.ratios, 0.25), quantile(r.ratios, 0.75), len(r.ratios), p.k,
			time.Duration(median(r.adapterNs)), median(r.adapterAlloc), median(r.adapterBytes),
			time.Duration(median(r.rawNs)), median(r.rawAlloc), median(r.rawBytes),
			median(r.adapterAlloc)-median(r.rawAlloc))
		t.Log(line)
	}
}

// interleaveWorkload names one pair and builds it (connecting its sessions
// and checking its expected answers); TestInterleaved measures it.
type interleaveWorkload struct {
	name  string
	build func(*testing.T) interleavePair
}

// interleaveWorkloads are the pairs TestInterleaved measures: the
// fixture pairs first, then the real-catalog ones below.
func interleaveWorkloads() []interleaveWorkload {
	return []interleaveWorkload{
		{"Run/CallTool 2025-11-25", func(t *testing.T) interleavePair {
			return interleaveRunPairOn(t, "2025-11-25", interleaveSearchServer())
		}},
		{"Run/CallTool 2026-07-28", func(t *testing.T) interleavePair {
			return interleaveRunPairOn(t, "2026-07-28", interleaveSearchServer())
		}},
		{"Run/CallTool 2025-11-25 near-empty", func(t *testing.T) interleavePair {
			return interleaveRunPairOn(t, "2025-11-25", nearEmptyServer())
		}},
		{"Run/CallTool 2026-07-28 near-empty", func(t *testing.T) interleavePair {
			return interleaveRunPairOn(t, "2026-07-28", nearEmptyServer())
		}},
		{"Run/CallTool 2025-11-25 reference wiring", func(t *testing.T) interleavePair {
			return interleaveRunPairOn(t, "2025-11-25 reference", interleaveSearchServer())
		}},
		{"Run/CallTool 2026-07-28 reference wiring", func(t *testing.T) interleavePair {
			return interleaveRunPairOn(t, "2026-07-28 reference", interleaveSearchServer())
		}},
		{"first DiscoverTools/ListTools", interleaveFirstDiscoveryPair},
		{"rediscovery DiscoverTools/ListTools", interleaveRediscoveryPair},
		{"IdentityDigest/SHA-256 records", func(t *testing.T) interleavePair { return interleaveDigestPair(t, decodedRecords(t)) }},
		{"IdentityDigest/SHA-256 catalog", func(t *testing.T) interleavePair { return interleaveDigestPair(t, decodedCatalog(t)) }},
		{"first DiscoverTools/ListTools unique leaves", interleaveFirstUniqueDiscoveryPair},
		{"Run/CallTool 2025-11-25 text only", func(t *testing.T) interleavePair {
			return interleaveRunPairWith(t, "2025-11-25", textServer(), "docs.lines", benchArguments)
		}},
		{"Run/CallTool 2026-07-28 text only", func(t *testing.T) interleavePair {
			return interleaveRunPairWith(t, "2026-07-28", textServer(), "docs.lines", benchArguments)
		}},
		{"Run/CallTool 2025-11-25 large arguments", func(t *testing.T) interleavePair {
			return interleaveRunPairWith(t, "2025-11-25", interleaveSearchServer(), "docs.search", largeArguments)
		}},
		{"first DiscoverTools/ListTools real catalogs", func(t *testing.T) interleavePair {
			return interleaveRealDiscoveryPair(t, purramcp.SchemaPolicy{})
		}},
		{"first DiscoverTools/ListTools real catalogs widest policy", func(t *testing.T) interleavePair {
			return interleaveRealDiscoveryPair(t, widestPolicy)
		}},
	}
}

// TestInterleaved_WorkloadsAnswer runs every pair of the harness for one
// round of one op per side, as a test: each side checks its answers (the
// catalog's digest and size, the result's blocks and count), so a workload
// that no longer answers as the harness expects fails here, not only when
// somebody measures.
func TestInterleaved_WorkloadsAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every workload's sessions and catalogs")
	}
	for _, w := range interleaveWorkloads() {
		t.Run(w.name, func(t *testing.T) {
			p := w.build(t)
			p.name, p.k = w.name, 1
			if _, err := interleave(p, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// interleaveSearchServer serves docs.search under benchTool's schemas,
// answering benchCallResult.
func interleaveSearchServer() *mcp.Server {
	return benchServe(0, benchTool("docs.search", "Searches the document index."))
}

// interleaveRunPairOn is Run of docs.search against a raw CallTool of it, on
// one session at version (without the bounding layer for "… reference"),
// server serving the tool under benchTool's schemas (an input and an output
// schema), both with benchArguments.
func interleaveRunPairOn(t *testing.T, version string, server *mcp.Server) interleavePair {
	return interleaveRunPairWith(t, version, server, "docs.search", benchArguments)
}

// interleaveRunPairWith is Run of server's tool remote with args against a
// raw CallTool of the same, on one session at version. Both sides check
// every answer against the first one the raw side got: its number of text
// blocks and, when it has structured content, its count member.
func interleaveRunPairWith(t *testing.T, version string, server *mcp.Server, remote string, args json.RawMessage) interleavePair {
	cs, monitor, closeSession, err := connectInMemory(server, version, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeSession)
	catalog, err := purramcp.DiscoverTools(context.Background(), cs, "bench",
		map[string]purramcp.ToolBinding{remote: {LocalName: "bench_tool",
			Policy: purramcp.ToolPolicy{Mode: "read", Title: "Bench tool"}, Scope: purramcp.Unscoped}},
		purramcp.DiscoveryOptions{Monitor: monitor})
	if err != nil {
		t.Fatal(err)
	}
	run := catalog.Registrations()[0].Run
	call := purramcp.ToolContext{CallID: "call-1", ToolName: "bench_tool", RunID: "run-1"}
	ctx := context.Background()
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: remote, Arguments: args})
	if err != nil || first.IsError {
		t.Fatalf("CallTool = %+v, %v", first, err)
	}
	texts := len(first.Content)
	var count any // what every call answers: the count member, nil without structured content
	if first.StructuredContent != nil {
		count = first.StructuredContent.(map[string]any)["count"]
	}
	return interleavePair{k: 100, byOp: true,
		adapter: interleaveSide{op: func(int) error {
			res, err := run(ctx, args, call)
			if err != nil || res.ErrorCode != "" || len(res.Content.Text) != texts || res.Content.Structured["count"] != count {
				return fmt.Errorf("Run = %+v, %v", res, err)
			}
			return nil
		}},
		raw: interleaveSide{op: func(int) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: remote, Arguments: args})
			if err != nil || res.IsError || len(res.Content) != texts {
				return fmt.Errorf("CallTool = %+v, %v", res, err)
			}
			if count == nil && res.StructuredContent != nil {
				return fmt.Errorf("CallTool structured content = %v, want none", res.StructuredContent)
			}
			if m, ok := res.StructuredContent.(map[string]any); count != nil && (!ok || m["count"] != count) {
				return fmt.Errorf("CallTool structured content = %v", res.StructuredContent)
			}
			return nil
		}},
	}
}

// discoverySides returns the adapter and raw sides over session(i). Every
// op checks its outcome cheaply (no error, not stale; the raw side its
// tools, pages and last name); the digest, which needs a deep-copied
// snapshot, is checked untimed on the last catalog of each batch, before
// done runs.
func discoverySides(w discoveryWorkload, digest string,
	session func(i int) (*mcp.ClientSession, *purramcp.CatalogMonitor), done func()) (adapter, raw interleaveSide) {
	ctx := context.Background()
	var last *purramcp.Catalog
	adapter.op = func(i int) error {
		cs, monitor := session(i)
		catalog, err := purramcp.DiscoverTools(ctx, cs, "bench", w.bindings,
			purramcp.DiscoveryOptions{Monitor: monitor, Policy: w.policy})
		if err != nil || catalog.Stale() {
			return fmt.Errorf("DiscoverTools: %v (stale: %v)", err, err == nil && catalog.Stale())
		}
		last = catalog
		return nil
	}
	adapter.after = func() error {
		defer done()
		if got := last.Snapshot(); got.RevisionDigest != digest || len(got.Entries) != len(w.bindings) {
			return fmt.Errorf("catalog: %d entries, digest %s; want %d, %s", len(got.Entries), got.RevisionDigest,
				len(w.bindings), digest)
		}
		return nil
	}
	raw.op = func(i int) error {
		cs, _ := session(i)
		tools, pages, err := benchListAll(ctx, cs)
		if err != nil || len(tools) != w.tools || len(pages) != w.pages || tools[len(tools)-1].Name != w.last {
			return fmt.Errorf("ListTools: %d tools, %d pages, %v", len(tools), len(pages), err)
		}
		return nil
	}
	raw.after = func() error { done(); return nil }
	return adapter, raw
}

// interleaveFirstDiscoveryPair is the first DiscoverTools of a fresh session
// against the first raw listing of a fresh session: k sessions are opened
// untimed before each batch and closed after it. Checking the digest copies
// the snapshot out; the raw side checks its count and last name.
func interleaveFirstDiscoveryPair(t *testing.T) interleavePair {
	return interleaveFirstDiscoveryOf(t, benchWorkload(distinctCatalog()))
}

// interleaveFirstDiscoveryOf is interleaveFirstDiscoveryPair over w.
func interleaveFirstDiscoveryOf(t *testing.T, w discoveryWorkload) interleavePair {
	digest := interleaveDigest(t, w)
	type fresh struct {
		cs      *mcp.ClientSession
		monitor *purramcp.CatalogMonitor
		close   func()
	}
	var sessions []fresh
	open := func(monitored bool) func(int) error {
		return func(k int) error {
			sessions = sessions[:0]
			for range k {
				cs, monitor, closeSession, err := connectInMemory(w.server, "", monitored)
				if err != nil {
					return err
				}
				sessions = append(sessions, fresh{cs, monitor, closeSession})
			}
			return nil
		}
	}
	closeAll := func() {
		for _, s := range sessions {
			s.close()
		}
	}
	adapter, raw := discoverySides(w, digest, func(i int) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
		return sessions[i].cs, sessions[i].monitor
	}, closeAll)
	adapter.before, raw.before = open(true), open(false)
	return interleavePair{k: 3, adapter: adapter, raw: raw}
}

// interleaveRediscoveryPair discovers the same catalog again and again on
// one session against raw paging of the same session.
func interleaveRediscoveryPair(t *testing.T) interleavePair {
	w := benchWorkload(distinctCatalog())
	digest := interleaveDigest(t, w)
	cs, monitor, closeSession, err := connectInMemory(w.server, "", true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeSession)
	adapter, raw := discoverySides(w, digest, func(int) (*mcp.ClientSession, *purramcp.CatalogMonitor) {
		return cs, monitor
	}, func() {})
	if err := adapter.op(0); err != nil { // the first discovery of this session
		t.Fatal(err)
	}
	return interleavePair{k: 3, adapter: adapter, raw: raw}
}

// interleaveDigestPair is IdentityDigest of value against one SHA-256 of
// its own pre-image, each checked against the same digest.
func interleaveDigestPair(t *testing.T, value map[string]any) interleavePair {
	want, err := purramcp.IdentityDigest(value)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := strictjson.Snapshot(value, benchIdentityLimits)
	if err != nil {
		t.Fatal(err)
	}
	preImage := identity.PreImage(snap)
	var wantSum [sha256.Size]byte
	if _, err := hex.Decode(wantSum[:], []byte(want)); err != nil {
		t.Fatal(err)
	}
	return interleavePair{k: 40,
		adapter: interleaveSide{op: func(int) error {
			if got, err := purramcp.IdentityDigest(value); err != nil || got != want {
				return fmt.Errorf("IdentityDigest = %q, %v; want %q", got, err, want)
			}
			return nil
		}},
		raw: interleaveSide{op: func(int) error {
			if sha256.Sum256(preImage) != wantSum {
				return fmt.Errorf("SHA-256 of the pre-image is not the identity digest")
			}
			return nil
		}},
	}
}

// interleaveFirstUniqueDiscoveryPair is interleaveFirstDiscoveryPair over
// the unique-leaves catalog: the first discovery when no two tools share
// any part of a schema.
func interleaveFirstUniqueDiscoveryPair(t *testing.T) interleavePair {
	return interleaveFirstDiscoveryOf(t, benchWorkload(uniqueLeavesCatalog()))
}

// Workloads of the interleaved harness beyond the fixture pairs, so that its
// figures are not one catalog's and one result's: the tools of the captured
// real-server catalogs (testdata/catalogs), a tool without an output schema
// whose result is text only, and arguments near the input schema's bounds.

// realCatalogWorkload serves the tools of the captured real-server catalogs
// that InspectTool finds bindable under policy, in file order, at most
// benchCatalogSize of them, benchPageSize per page, and binds them all.
// go-sdk lists them by name. Each remote name is prefixed with its catalog's index (two servers may
// name a tool alike); a name that is no valid remote name then is skipped.
func realCatalogWorkload(t *testing.T, policy purramcp.SchemaPolicy) discoveryWorkload {
	files, err := filepath.Glob("testdata/catalogs/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/catalogs: %d files, %v", len(files), err)
	}
	var tools []*mcp.Tool
	bindings := make(map[string]purramcp.ToolBinding)
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var saved struct {
			Tools []*mcp.Tool `json:"tools"` // decoded as a go-sdk client decodes tools/list
		}
		if err := json.Unmarshal(raw, &saved); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range saved.Tools {
			if len(tools) == benchCatalogSize {
				break
			}
			tool.Name = fmt.Sprintf("s%02d.%s", i, tool.Name)
			if !validRemoteName(tool.Name) {
				continue
			}
			r, err := purramcp.InspectTool(tool, purramcp.Limits{}, policy)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Bindable {
				continue
			}
			local := fmt.Sprintf("tool_%03d", len(tools))
			bindings[tool.Name] = purramcp.ToolBinding{LocalName: local,
				Policy: purramcp.ToolPolicy{Mode: "read", Title: tool.Name}, Scope: purramcp.Unscoped}
			tools = append(tools, tool)
		}
	}
	if len(tools) < 100 {
		t.Fatalf("only %d bindable real-server tools under %+v", len(tools), policy)
	}
	last := slices.MaxFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) }).Name
	return discoveryWorkload{server: benchServe(benchPageSize, tools...), bindings: bindings, policy: policy,
		tools: len(tools), pages: (len(tools) + benchPageSize - 1) / benchPageSize, last: last}
}

// validRemoteName reports whether name is a remote tool name a binding
// accepts: 1–128 of A–Z, a–z, 0–9, '_', '.' and '-'.
func validRemoteName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// interleaveRealDiscoveryPair is the first discovery of the real-server
// tools bindable under policy against their first raw listing, each on a
// fresh session.
func interleaveRealDiscoveryPair(t *testing.T, policy purramcp.SchemaPolicy) interleavePair {
	return interleaveFirstDiscoveryOf(t, realCatalogWorkload(t, policy))
}

// widestPolicy is every opt-in schema policy at once: the most real-server
// tools bind under it.
var widestPolicy = purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true}

// textServer serves docs.lines, a tool with the search tool's input schema
// and no output schema, whose result is eight text blocks and no structured
// content.
func textServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "docs.lines", Description: "Returns matching lines.",
		InputSchema: json.RawMessage(benchInputSchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			content := make([]mcp.Content, 8)
			for i := range content {
				content[i] = &mcp.TextContent{Text: fmt.Sprintf("line %d: the quarterly report is due on Friday", i)}
			}
			return &mcp.CallToolResult{Content: content}, nil
		})
	return server
}

// largeArguments are search arguments near benchInputSchema's bounds: a
// query of 510 bytes and 16 distinct tags.
var largeArguments = func() json.RawMessage {
	tags := make([]string, 16)
	for i := range tags {
		tags[i] = fmt.Sprintf(`"finance-%02d"`, i)
	}
	query := strings.Repeat("quarterly report ", 30)
	return json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":100,"tags":[%s]}`, query, strings.Join(tags, ",")))
}()
