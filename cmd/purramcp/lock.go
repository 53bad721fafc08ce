package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

const lockAbout = `Connect to every configured server (or each --server) at once, discover its
configured tools exactly as the fleet does, print what changed against the
lock file, and write the lock file with the servers that succeeded. Review
the printed changes (and the lock file's diff) before committing it.

With --check (for CI) nothing is written: the exit status is 0 when every
server's live catalog has the digest the lock approved, 1 when any differs,
is not in the lock, is in the lock but no longer configured, or cannot be
reached (the diff names each tool, change and field), and 2 for a usage,
config or lock-file error (malformed, or edited so that a digest no longer
matches its snapshot).

Without --check the exit status is 1 when any server failed (the others are
still written), else 0. Progress goes to stderr, one line per step.`

// A lockReport is what `purramcp lock --json` prints.
type lockReport struct {
	// Lock is the lock file's path.
	Lock string `json:"lock"`
	// Check is true for --check.
	Check bool `json:"check"`
	// OK is true when the exit status is 0.
	OK bool `json:"ok"`
	// Written is true when the lock file was written (never with --check).
	Written bool `json:"written"`
	// Servers has one entry per server compared, sorted by id.
	Servers []serverDiff `json:"servers"`
}

// lockOptions are the flags of lock.
type lockOptions struct {
	config, lock  string
	check, asJSON bool
	only          stringList
	timeout       time.Duration
}

// parseLock parses lock's flags; when ok is false lock ends with code.
func parseLock(args []string, s *streams) (o lockOptions, code int, ok bool) {
	fs := newFlags("lock", "[--check] [--server ID]...", lockAbout, s)
	fs.StringVar(&o.config, "config", defaultConfig, "the config `file`")
	fs.StringVar(&o.lock, "lock", defaultLock, "the lock `file`")
	fs.BoolVar(&o.check, "check", false, "compare the live servers with the lock file and write nothing (CI)")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON (see README.md)")
	fs.Var(&o.only, "server", "only this server `id` (repeatable)")
	timeout := connectTimeoutFlag(fs)
	rest, code, ok := parseMixed(fs, args)
	if !ok {
		return o, code, false
	}
	o.timeout = *timeout
	if len(rest) > 0 {
		s.errorf("lock", "unexpected argument %q (servers are named with --server ID)", rest[0])
		return o, exitUsage, false
	}
	if err := checkTimeout(o.timeout); err != nil {
		s.errorf("lock", "%v", err)
		return o, exitUsage, false
	}
	return o, exitOK, true
}

// load reads the config and the lock and returns the ids of the servers
// to discover: every configured one, or those named with --server.
func (o lockOptions) load() (*config, *fleet.Lock, []string, error) {
	cfg, err := loadConfig(o.config)
	if err != nil {
		return nil, nil, nil, err
	}
	lock, err := loadLock(o.lock)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, id := range o.only {
		if _, ok := cfg.Servers[id]; !ok {
			return nil, nil, nil, &fileError{file: o.config, path: "servers", reason: fmt.Sprintf("no server %q", id),
				todo: "name one of the config's servers with --server"}
		}
	}
	if len(o.only) > 0 {
		return cfg, lock, slices.Compact(slices.Sorted(slices.Values(o.only))), nil
	}
	return cfg, lock, slices.Sorted(maps.Keys(cfg.Servers)), nil
}

// runLock is `purramcp lock` and `purramcp lock --check`.
func runLock(ctx context.Context, args []string, s *streams) int {
	o, code, ok := parseLock(args, s)
	if !ok {
		return code
	}
	cfg, lock, ids, err := o.load()
	if err != nil {
		s.errorf("lock", "%v", err)
		return exitUsage
	}
	var pins *fleet.Lock // --check connects at the locked versions; lock negotiates the newest
	if o.check {
		pins = lock
	}
	live := discoverAll(ctx, cfg, ids, pins, o.timeout, &progress{s: s})
	report := lockReport{Lock: o.lock, Check: o.check, Servers: compare(lock, ids, live)}
	if len(o.only) == 0 {
		report.Servers = append(report.Servers, unconfigured(cfg, lock)...)
		slices.SortFunc(report.Servers, func(a, b serverDiff) int { return strings.Compare(a.ID, b.ID) })
	}
	failed, drift := report.count()
	code = exitOK
	if o.check && drift > 0 || !o.check && failed > 0 {
		code = exitFail
	}
	if !o.check {
		if err := updatedLock(lock, ids, live, len(o.only) == 0).WriteFile(o.lock); err != nil {
			s.errorf("lock", "%v", asFileError(o.lock, err, "check that its directory is writable"))
			return exitUsage
		}
		report.Written = true
	}
	report.OK = code == exitOK
	if o.asJSON {
		if err := writeJSON(s.out, report); err != nil {
			return exitFail
		}
	} else {
		writeDiffs(s.out, s.outColour, report.Servers, "the lock", "the config")
	}
	summarize(s, report, failed, drift)
	return code
}

// unconfigured returns a removed serverDiff for each server of lock that
// cfg no longer has.
func unconfigured(cfg *config, lock *fleet.Lock) []serverDiff {
	var diffs []serverDiff
	for _, id := range lock.IDs() {
		if _, ok := cfg.Servers[id]; !ok {
			old, _ := lock.Snapshot(id)
			diffs = append(diffs, diffServer(id, &old, nil))
		}
	}
	return diffs
}

// count returns how many servers failed and how many differ from the lock
// (failed ones included).
func (r lockReport) count() (failed, drift int) {
	for _, d := range r.Servers {
		if d.Status == statusFailed {
			failed++
		}
		if d.drift() {
			drift++
		}
	}
	return failed, drift
}

// summarize prints the last line on stderr: what was written or checked.
func summarize(s *streams, r lockReport, failed, drift int) {
	switch {
	case r.Check && drift == 0:
		fmt.Fprintf(s.err, "%s: every server matches %s\n", paint(s.errColour, green, "ok"), r.Lock)
	case r.Check && failed == drift:
		fmt.Fprintf(s.err, "%s: %d of %d servers could not be checked against %s; a server that cannot be reached never passes\n",
			paint(s.errColour, red, "failed"), failed, len(r.Servers), r.Lock)
	case r.Check:
		fmt.Fprintf(s.err, "%s: %d of %d servers differ from %s", paint(s.errColour, red, "drift"), drift, len(r.Servers), r.Lock)
		if failed > 0 {
			fmt.Fprintf(s.err, " (%d could not be checked)", failed)
		}
		fmt.Fprintln(s.err, "; review the changes above, then run `purramcp lock` to approve them")
	case failed > 0:
		fmt.Fprintf(s.err, "wrote %s without %d failed server(s); fix them and run `purramcp lock` again\n", r.Lock, failed)
	default:
		fmt.Fprintf(s.err, "wrote %s\n", r.Lock)
	}
}

// A discovered is the outcome of one server's discovery: its snapshot, or
// the failure.
type discovered struct {
	snapshot *purramcp.Snapshot
	err      error
	code     string
	tool     *toolFault
	stderr   []string
}

// discoverAll discovers every server of ids concurrently, each over its
// own connection (at the protocol version pins approved for it while it
// still speaks it; nil pins none), and returns the outcomes by id.
func discoverAll(ctx context.Context, cfg *config, ids []string, pins *fleet.Lock, timeout time.Duration, p *progress) map[string]discovered {
	out := make(map[string]discovered, len(ids))
	var mu sync.Mutex // guards out
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			ep := serverEndpoint(cfg.Servers[id], cfg.secrets)
			ep.pin = pins.ProtocolVersion(id)
			d := discoverServer(ctx, id, ep, timeout, p)
			mu.Lock()
			out[id] = d
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// discoverServer connects to server id and discovers its configured tools
// with the options its config gives, as the fleet does, then closes the
// connection and ends the child.
func discoverServer(ctx context.Context, id string, ep endpoint, timeout time.Duration, p *progress) discovered {
	p.step(id, "connecting")
	c, err := dial(ctx, ep, timeout)
	if err != nil {
		d := discovered{err: err, stderr: stderrOf(err)}
		if ce := (*connectError)(nil); errors.As(err, &ce) && ce.auth != "" {
			// No stored token, or one the server refused.
			d.err = fmt.Errorf("the server asks for an OAuth sign-in (%s): run `purramcp login %s`", ce.auth, id)
		}
		p.fail(id, d)
		return d
	}
	defer c.close()
	p.step(id, "connected, protocol "+c.monitor.ProtocolVersion())
	pages := 0
	snap, err := c.fs.Discover(ctx, id, func(_ context.Context, e purramcp.Event) { pages += e.Pages })
	if err != nil {
		d := discovered{err: discoveryFailure(id, err), code: purramcp.CodeOf(err), tool: failedTool(err), stderr: c.stderrLines()}
		p.fail(id, d)
		return d
	}
	p.step(id, fmt.Sprintf("listed %d page(s), bound %d tools, digest %s", pages, len(snap.Entries), snap.RevisionDigest))
	return discovered{snapshot: &snap}
}

// discoveryFailure explains a failed discovery of server id, naming the
// bound tool at fault when discovery names one, and what to do about it.
func discoveryFailure(id string, err error) error {
	code := purramcp.CodeOf(err)
	inspect := "run `purramcp inspect --server " + id + "`"
	if de := discoveryTool(err); de != nil {
		tool := "tool " + shown(de.RemoteName)
		for _, p := range []string{de.Schema, de.Path, de.Keyword} {
			if p != "" {
				tool += " " + shown(p)
			}
		}
		switch code {
		case purramcp.CodeSchemaUnsupported:
			return fmt.Errorf("discovery failed %s: %s does not bind under the server's policy; %s for the narrowest policy that binds it", code, tool, inspect)
		case purramcp.CodeBindingMissing:
			return fmt.Errorf("discovery failed %s: %s is bound in the config but the server does not list it; remove it from the config or check the server", code, tool)
		case purramcp.CodeAnnotationConflict:
			return fmt.Errorf("discovery failed %s: %s is not annotated readOnlyHint true (or is destructive) and the server sets requireReadOnlyHint", code, tool)
		}
		return fmt.Errorf("discovery failed %s: %s; %s to see each tool", code, tool, inspect)
	}
	switch code {
	case purramcp.CodeProtocolUnsupported:
		return fmt.Errorf("discovery failed %s: the server speaks an older MCP version: set \"legacyProtocols\": true if that is acceptable", code)
	case "":
		return fmt.Errorf("discovery failed: %s", clean(err.Error()))
	}
	return fmt.Errorf("discovery failed %s; %s to see each tool", code, inspect)
}

// failedTool returns what a DiscoveryError in err says of the bound tool
// at fault, or nil.
func failedTool(err error) *toolFault {
	de := discoveryTool(err)
	if de == nil {
		return nil
	}
	return &toolFault{RemoteName: de.RemoteName, Schema: de.Schema, Path: de.Path, Keyword: de.Keyword}
}

// discoveryTool returns the DiscoveryError in err when it names a bound
// tool, or nil (none, or a catalog-wide limit, which names none).
func discoveryTool(err error) *purramcp.DiscoveryError {
	var de *purramcp.DiscoveryError
	if !errors.As(err, &de) || de.RemoteName == "" {
		return nil
	}
	return de
}

// compare turns the outcomes into one serverDiff per id against lock.
func compare(lock *fleet.Lock, ids []string, live map[string]discovered) []serverDiff {
	var diffs []serverDiff
	for _, id := range ids {
		var old *purramcp.Snapshot
		if snap, ok := lock.Snapshot(id); ok {
			old = &snap
		}
		d := live[id]
		if d.err != nil {
			sd := serverDiff{ID: id, Status: statusFailed, Changes: []toolChange{}, Error: d.err.Error(), Code: d.code, Tool: d.tool, Stderr: d.stderr}
			if old != nil {
				sd.OldDigest = old.RevisionDigest
			}
			diffs = append(diffs, sd)
			continue
		}
		diffs = append(diffs, diffServer(id, old, d.snapshot))
	}
	return diffs
}

// updatedLock returns the lock to write: every server of ids that was
// discovered gets its live snapshot; one that failed keeps what lock had.
// With all (no --server), servers no longer configured are left out;
// otherwise every other server of lock is kept.
func updatedLock(lock *fleet.Lock, ids []string, live map[string]discovered, all bool) *fleet.Lock {
	next := &fleet.Lock{}
	if !all {
		for _, id := range lock.IDs() {
			if snap, ok := lock.Snapshot(id); ok {
				next.Set(id, snap)
			}
		}
	}
	for _, id := range ids {
		if d := live[id]; d.snapshot != nil {
			next.Set(id, *d.snapshot)
		} else if snap, ok := lock.Snapshot(id); ok {
			next.Set(id, snap)
		}
	}
	return next
}

// progress writes the per-server progress lines on stderr, a server's
// lines never interleaved with another's within a line.
type progress struct {
	s  *streams
	mu sync.Mutex // guards writes to s.err
}

// step prints one progress line of server id.
func (p *progress) step(id, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.s.err, "%s: %s\n", id, what)
}

// fail prints a server's failure and the child's last stderr lines.
func (p *progress) fail(id string, d discovered) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.s.err, "%s: %s: %s\n", id, paint(p.s.errColour, red, "failed"), d.err)
	if len(d.stderr) > 0 {
		fmt.Fprintf(p.s.err, "%s: last lines of its stderr:\n", id)
		for _, line := range d.stderr {
			fmt.Fprintf(p.s.err, "  | %s\n", line)
		}
	}
}
