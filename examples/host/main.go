// Command host is a minimal, complete purramcp fleet host. It reads a
// config file naming MCP servers and the tools bound from each (by default
// examples/host/purramcp.json, which runs examples/stdio-server with go
// run, so run it from the module root), and a lock file of the catalogs a
// person approved. It starts a fleet, shows each server's state and, for an
// unapproved one, what changed since its locked catalog; with -approve it
// admits those catalogs and writes the lock file. Then it calls
// list_units and convert_units through the fleet's registrations.
//
//	go run ./examples/host -approve   # first run: review, approve, lock
//	go run ./examples/host            # later runs: only the locked catalog is admitted
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// calls stand in for what an agent core would ask for.
var calls = []struct{ tool, args string }{{"list_units", `{}`}, {"convert_units", `{"value":10,"from":"km","to":"mi"}`}}

func main() {
	config := flag.String("config", "examples/host/purramcp.json", "the fleet's config `file`")
	lock := flag.String("lock", "purramcp-lock.json", "the lock `file` of approved catalogs")
	approve := flag.Bool("approve", false, "admit every pending catalog and write the lock file")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *config, *lock, *approve); err != nil {
		log.Fatal(err)
	}
}

// run starts the fleet of configPath under the lock at lockPath (a missing
// file is an empty lock: every catalog is then pending), reports, approves
// when asked, runs calls, and closes the fleet: every child process group
// is ended.
func run(ctx context.Context, w io.Writer, configPath, lockPath string, approve bool) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // bounds the whole run
	defer cancel()
	cfg, err := fleet.LoadConfig(configPath)
	if err != nil {
		return err // a *fleet.ConfigError names the JSON path
	}
	lock, err := fleet.LoadLock(lockPath)
	if err != nil {
		return err
	}
	f, err := fleet.New(cfg, fleet.Options{Lock: lock})
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Start(ctx); err != nil {
		return err
	}
	if err := review(w, f, lockPath, approve); err != nil {
		return err
	}
	for _, st := range f.Status() {
		fmt.Fprintf(w, "%s %s %s %s\n", st.ID, st.State, cmp.Or(st.Code, "-"), cmp.Or(st.Digest, "-"))
	}
	defs := map[string]purramcp.ToolDefinition{}
	for _, d := range f.Registrations() { // only ready servers' tools
		defs[d.Name] = d
	}
	for _, call := range calls {
		def, ok := defs[call.tool]
		if !ok {
			fmt.Fprintf(w, "%s: not registered\n", call.tool)
			continue
		}
		res, err := def.Run(ctx, json.RawMessage(call.args), purramcp.ToolContext{RunID: "run-1"})
		if err != nil {
			return err // ErrCanceled
		}
		envelope, _ := json.Marshal(res.Content) // empty when ErrorCode is set
		fmt.Fprintf(w, "%s %s -> %s %s\n", call.tool, call.args, cmp.Or(res.ErrorCode, "ok"), envelope)
	}
	return nil
}

// review prints what changed in every pending catalog and, with approve,
// admits it and writes the fleet's lock to lockPath.
func review(w io.Writer, f *fleet.Fleet, lockPath string, approve bool) error {
	approved := false
	for _, st := range f.Status() {
		snapshot, changes, ok := f.Pending(st.ID)
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%s pending %s\n", st.ID, snapshot.RevisionDigest)
		for _, c := range changes {
			fmt.Fprintf(w, "  %s %s %v\n", cmp.Or(c.LocalName, "(server)"), c.Kind, c.Fields)
		}
		if approve {
			if err := f.Approve(st.ID, snapshot.RevisionDigest); err != nil {
				return err
			}
			approved = true
		}
	}
	if approved {
		return f.Lock().WriteFile(lockPath)
	}
	return nil
}
