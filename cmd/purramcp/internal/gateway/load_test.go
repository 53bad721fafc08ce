//go:build purrabench

package gateway_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
)

// TestLoadGatewayVsPassthrough is the load benchmark: N concurrent
// streamable HTTP sessions (stateful, go-sdk v1.8.0 clients) call in a
// closed loop, against the gateway with its default caps and against a
// minimal go-sdk pass-through proxy, both over the same in-memory upstream
// and both served on loopback. Each scenario runs interleaved rounds (the
// order alternating) and reports, for each side, the median of the rounds'
// successful calls per second, p50 and p99 latency and the errors, and the
// median per-round ratios gateway/pass-through. Scenarios: the fast search
// tool at N = 1, 16, 64, 256 and 1,000, and a 200 ms tool at 256. The CPU
// per ok call is the whole process's (clients, the side, the upstream) over
// the round, so it compares the sides even on a loaded machine. Linux only
// (getrusage).
// PURRAMCP_LOAD_SECONDS (default 3) and PURRAMCP_LOAD_ROUNDS (default 3)
// set a round's length and count; PURRAMCP_LOAD_ONLY, a comma-separated
// list such as "64/search,256/slow", runs only those scenarios. Run with
// go test -tags purrabench -run TestLoadGatewayVsPassthrough -v -timeout 30m ./internal/gateway   (in cmd/purramcp)
func TestLoadGatewayVsPassthrough(t *testing.T) {
	seconds := envInt("PURRAMCP_LOAD_SECONDS", 3)
	rounds := envInt("PURRAMCP_LOAD_ROUNDS", 3)
	ctx := t.Context()
	up := newLoadUpstream()
	targets := []*loadTarget{gatewayTarget(t, ctx, up), passthroughTarget(t, ctx, up)}

	scenarios := []struct {
		sessions int
		tool     string
	}{{1, "search"}, {16, "search"}, {64, "search"}, {256, "search"}, {1000, "search"}, {256, "slow"}}
	var table []string
	table = append(table, "| sessions | tool | gateway ok/s | pass-through ok/s | ratio | gateway p50 / p99 | pass-through p50 / p99 | p99 ratio | CPU per ok call, gateway / pass-through | gateway errors | pass-through errors |",
		"|---|---|---|---|---|---|---|---|---|---|---|")
	only := os.Getenv("PURRAMCP_LOAD_ONLY") // "256/slow,64/search": run only these
	for _, sc := range scenarios {
		if only != "" && !slices.Contains(strings.Split(only, ","), fmt.Sprintf("%d/%s", sc.sessions, sc.tool)) {
			continue
		}
		sessions := make([][]*mcp.ClientSession, len(targets))
		for i, tg := range targets {
			sessions[i] = tg.open(t, ctx, sc.sessions)
		}
		stats := make([][]roundStats, len(targets))
		var okRatios, p99Ratios []float64
		for r := range rounds {
			got := make([]roundStats, len(targets))
			for j := range targets {
				i := (r + j) % len(targets) // alternate which goes first
				got[i] = runRound(ctx, sessions[i], sc.tool, time.Duration(seconds)*time.Second)
				stats[i] = append(stats[i], got[i])
			}
			okRatios = append(okRatios, got[0].okPerSec/got[1].okPerSec)
			p99Ratios = append(p99Ratios, float64(got[0].p99)/float64(got[1].p99))
		}
		for i := range targets {
			for _, cs := range sessions[i] {
				_ = cs.Close()
			}
		}
		g, p := summarize(stats[0]), summarize(stats[1])
		row := fmt.Sprintf("| %d | %s | %.0f | %.0f | %.2f | %v / %v | %v / %v | %.2f | %v / %v | %s | %s |",
			sc.sessions, sc.tool, g.okPerSec, p.okPerSec, median(okRatios), g.p50, g.p99, p.p50, p.p99,
			median(p99Ratios), g.cpuPerOK, p.cpuPerOK, g.errors, p.errors)
		t.Log(row)
		table = append(table, row)
	}
	fmt.Printf("%d rounds of %d s per scenario, medians:\n%s\n", rounds, seconds, strings.Join(table, "\n"))
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// newLoadUpstream is the upstream both sides call: remote.search answers at
// once (as the harness's search does), remote.slow after 200 ms.
func newLoadUpstream() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "remote.search",
		Description: "Search documents",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":64}},` +
			`"required":["q"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},` +
			`"required":["count"],"additionalProperties":false}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Q string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + args.Q}},
			StructuredContent: map[string]any{"count": len(args.Q)}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "remote.slow", Description: "Waits 200 ms",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":64}},"additionalProperties":false}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	return s
}

// upstreamTransport connects up in memory and returns the client's end.
func upstreamTransport(t testing.TB, ctx context.Context, up *mcp.Server) mcp.Transport {
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := up.Connect(ctx, serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	return clientT
}

// A loadTarget is one side: its /mcp endpoint and the HTTP client its
// sessions share.
type loadTarget struct {
	endpoint string
	http     *http.Client
}

func newLoadTarget(t testing.TB, h http.Handler) *loadTarget {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 0, 4096
	t.Cleanup(tr.CloseIdleConnections)
	return &loadTarget{endpoint: srv.URL + "/mcp", http: &http.Client{Transport: tr}}
}

// open connects n sessions, 32 at a time.
func (tg *loadTarget) open(t testing.TB, ctx context.Context, n int) []*mcp.ClientSession {
	out := make([]*mcp.ClientSession, n)
	var wg sync.WaitGroup
	// Both sides serve sessions: the pass-through's go-sdk handler is
	// stateful, so the clients ask for the session era on both (a default
	// go-sdk client would be served statelessly by the gateway and fall
	// back to a session on the pass-through, comparing two eras).
	sem := make(chan struct{}, 32)
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			client := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: tg.endpoint, HTTPClient: tg.http,
				DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: loadProtocolVersion})
			if err != nil {
				t.Errorf("connect: %v", err)
				return
			}
			out[i] = cs
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	return out
}

// loadSource is a Source over one catalog of the load upstream.
type loadSource struct {
	catalog *purramcp.Catalog
	snap    purramcp.Snapshot
}

func (s loadSource) Registrations() []purramcp.ToolDefinition { return s.catalog.Registrations() }

func (s loadSource) Upstreams() []gateway.Upstream {
	return []gateway.Upstream{{ID: "docs", State: gateway.StateReady, Digest: s.snap.RevisionDigest, Snapshot: s.snap}}
}

// gatewayTarget serves the gateway, default options, over the upstream.
func gatewayTarget(t testing.TB, ctx context.Context, up *mcp.Server) *loadTarget {
	clientT := upstreamTransport(t, ctx, up)
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "fleet", Version: "1"}, nil)
	cs, err := monitor.Connect(ctx, client, clientT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	b := map[string]purramcp.ToolBinding{}
	for _, name := range []string{"search", "slow"} {
		b["remote."+name] = purramcp.ToolBinding{LocalName: name,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: name}, Scope: purramcp.Unscoped}
	}
	catalog, err := purramcp.DiscoverTools(ctx, cs, "docs", b, purramcp.DiscoveryOptions{Monitor: monitor})
	require.NoError(t, err)
	g, err := gateway.New(loadSource{catalog: catalog, snap: catalog.Snapshot()}, gateway.Options{})
	require.NoError(t, err)
	require.Empty(t, g.Refresh())
	h, err := g.HTTPHandler(gateway.HTTPOptions{})
	require.NoError(t, err)
	return newLoadTarget(t, h)
}

// passthroughTarget serves a go-sdk server whose two tools forward each
// call on one client session to the upstream and return its result as it
// came: no checks, the floor.
func passthroughTarget(t testing.TB, ctx context.Context, up *mcp.Server) *loadTarget {
	clientT := upstreamTransport(t, ctx, up)
	upstreamCS, err := mcp.NewClient(&mcp.Implementation{Name: "proxy", Version: "1"}, nil).Connect(ctx, clientT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = upstreamCS.Close() })
	proxy := mcp.NewServer(&mcp.Implementation{Name: "proxy", Version: "1"}, nil)
	for tool, err := range upstreamCS.Tools(ctx, nil) {
		require.NoError(t, err)
		remote := tool.Name
		proxy.AddTool(&mcp.Tool{Name: strings.TrimPrefix(remote, "remote."), Description: tool.Description,
			InputSchema: tool.InputSchema, OutputSchema: tool.OutputSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return upstreamCS.CallTool(ctx, &mcp.CallToolParams{Name: remote, Arguments: req.Params.Arguments})
			})
	}
	return newLoadTarget(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return proxy }, nil))
}

// roundStats are one side's figures for one round.
type roundStats struct {
	okPerSec float64
	cpuPerOK time.Duration // the process's CPU time (clients, side, upstream) over the ok calls
	p50, p99 time.Duration
	errors   string // "0", or each code or error with its count
}

// runRound runs every session in a closed loop calling tool for d.
func runRound(ctx context.Context, sessions []*mcp.ClientSession, tool string, d time.Duration) roundStats {
	cpu0 := processCPU()
	start := time.Now()
	deadline := start.Add(d)
	lat := make([][]time.Duration, len(sessions))
	errs := make([]map[string]int, len(sessions))
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			errs[i] = map[string]int{}
			for time.Now().Before(deadline) {
				callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				t0 := time.Now()
				res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(`{"q":"cats"}`)})
				took := time.Since(t0)
				cancel()
				switch {
				case err != nil:
					msg := err.Error()
					errs[i][msg[:min(len(msg), 60)]]++
				case res.IsError:
					errs[i][res.Content[0].(*mcp.TextContent).Text]++
				default:
					lat[i] = append(lat[i], took)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	st := roundStats{okPerSec: float64(len(all)) / elapsed.Seconds(), errors: "0"}
	if len(all) > 0 {
		st.cpuPerOK = (cpu / time.Duration(len(all))).Round(time.Microsecond)
		st.p50 = all[len(all)/2].Round(10 * time.Microsecond)
		st.p99 = all[len(all)*99/100].Round(10 * time.Microsecond)
	}
	total := map[string]int{}
	for _, m := range errs {
		for k, v := range m {
			total[k] += v
		}
	}
	if len(total) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(total)) {
			parts = append(parts, fmt.Sprintf("%d %s", total[k], k))
		}
		st.errors = strings.Join(parts, ", ")
	}
	return st
}

// summarize is the median round: the median ok/s, p50 and p99 each, and
// every round's errors.
func summarize(rounds []roundStats) roundStats {
	var ok []float64
	var p50, p99, cpu []time.Duration
	var errs []string
	for _, r := range rounds {
		ok, p50, p99 = append(ok, r.okPerSec), append(p50, r.p50), append(p99, r.p99)
		cpu = append(cpu, r.cpuPerOK)
		if r.errors != "0" {
			errs = append(errs, r.errors)
		}
	}
	if len(errs) == 0 {
		errs = []string{"0"}
	}
	slices.Sort(p50)
	slices.Sort(p99)
	slices.Sort(cpu)
	return roundStats{okPerSec: median(ok), p50: p50[len(p50)/2], p99: p99[len(p99)/2], cpuPerOK: cpu[len(cpu)/2],
		errors: strings.Join(errs, "; ")}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.SortFunc(s, cmp.Compare[float64])
	return s[len(s)/2]
}

// BenchmarkHTTPCall is one call at a time over one streamable HTTP session,
// through the gateway and through the pass-through, over the load upstream:
// gateway minus pass-through in allocs/op is what the gateway adds on the
// HTTP side. Run with
// go test -tags purrabench -run '^$' -bench BenchmarkHTTPCall -benchmem ./internal/gateway   (in cmd/purramcp)
func BenchmarkHTTPCall(b *testing.B) {
	for _, side := range []string{"passthrough", "gateway"} {
		b.Run(side, func(b *testing.B) {
			ctx := b.Context()
			up := newLoadUpstream()
			var tg *loadTarget
			if side == "gateway" {
				tg = gatewayTarget(b, ctx, up)
			} else {
				tg = passthroughTarget(b, ctx, up)
			}
			cs := tg.open(b, ctx, 1)[0]
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: json.RawMessage(`{"q":"cats"}`)})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// loadProtocolVersion is the version every load client asks for: the last
// one with sessions, which both sides serve the same way.
const loadProtocolVersion = "2025-11-25"
