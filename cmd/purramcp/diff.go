package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

const diffAbout = `Print the changes per server between OLD and NEW, each a lock file or a
snapshot JSON file (one server's purramcp.Snapshot): tools added, removed
or changed, and for a changed tool the snapshot fields that differ.
Every digest is checked against its snapshot first.

Exit status: 0 no changes, 1 changes, 2 a file that cannot be read or is
neither a valid lock file nor a valid snapshot.`

// A diffReport is what `purramcp diff --json` prints.
type diffReport struct {
	// Old and New are the two paths.
	Old string `json:"old"`
	New string `json:"new"`
	// Changed is true when any server differs (exit status 1).
	Changed bool `json:"changed"`
	// Servers has one entry per server on either side, sorted by id.
	Servers []serverDiff `json:"servers"`
}

// maxDiffFileBytes bounds each file diff reads, as the fleet bounds a lock
// file.
const maxDiffFileBytes = 64 << 20

// runDiff is `purramcp diff OLD NEW`.
func runDiff(_ context.Context, args []string, s *streams) int {
	fs := newFlags("diff", "[--json] OLD NEW", diffAbout, s)
	asJSON := fs.Bool("json", false, "print the changes as JSON (see README.md)")
	files, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if len(files) != 2 {
		s.errorf("diff", "want two files, OLD and NEW; got %d arguments", len(files))
		return exitUsage
	}
	sides := [2]map[string]purramcp.Snapshot{}
	for i, path := range files {
		snaps, err := readSnapshots(path)
		if err != nil {
			s.errorf("diff", "%v", err)
			return exitUsage
		}
		sides[i] = snaps
	}
	report := diffReport{Old: files[0], New: files[1], Servers: []serverDiff{}}
	ids := slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for _, side := range sides {
			for id := range side {
				if !yield(id, true) {
					return
				}
			}
		}
	})))
	for _, id := range ids {
		var old, new *purramcp.Snapshot
		if snap, ok := sides[0][id]; ok {
			old = &snap
		}
		if snap, ok := sides[1][id]; ok {
			new = &snap
		}
		d := diffServer(id, old, new)
		report.Changed = report.Changed || d.drift()
		report.Servers = append(report.Servers, d)
	}
	if *asJSON {
		if err := writeJSON(s.out, report); err != nil {
			return exitFail
		}
	} else {
		writeDiffs(s.out, s.outColour, report.Servers, report.Old, report.New)
	}
	if report.Changed {
		return exitFail
	}
	return exitOK
}

// readSnapshots reads a lock file or a snapshot file at path and returns
// its snapshots by server id, every digest checked against its snapshot.
func readSnapshots(path string) (map[string]purramcp.Snapshot, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, asFileError(path, err, "")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &fileError{file: path, reason: "not a JSON object", todo: "give a lock file or a snapshot JSON file"}
	}
	switch {
	case top["lockVersion"] != nil:
		lock, err := fleet.ParseLock(data)
		if err != nil {
			return nil, asFileError(path, err, "restore the lock file from version control")
		}
		out := map[string]purramcp.Snapshot{}
		for _, id := range lock.IDs() {
			if snap, ok := lock.Snapshot(id); ok {
				out[id] = snap
			}
		}
		return out, nil
	case top["revisionDigest"] != nil && top["entries"] != nil:
		snap, err := readSnapshot(data)
		if err != nil {
			return nil, snapshotError(path, err)
		}
		return map[string]purramcp.Snapshot{snap.ServerID: snap}, nil
	}
	return nil, &fileError{file: path, reason: "neither a lock file (lockVersion) nor a snapshot (revisionDigest, entries)",
		todo: "give a lock file or a snapshot JSON file"}
}

// readFile reads at most maxDiffFileBytes of the file at path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > maxDiffFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxDiffFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDiffFileBytes+1)) // a file may grow
	if err == nil && len(data) > maxDiffFileBytes {
		err = fmt.Errorf("larger than %d bytes", maxDiffFileBytes)
	}
	return data, err
}

// readSnapshot checks a snapshot file's text with the fleet's own parser
// (strict JSON, exact numbers, the digest recomputed), once its serverId
// is known to be a non-empty string.
func readSnapshot(data []byte) (purramcp.Snapshot, error) {
	var head struct {
		ServerID string `json:"serverId"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.ServerID == "" {
		return purramcp.Snapshot{}, &fleet.ConfigError{Path: "serverId", Reason: "not a server id"}
	}
	return fleet.ParseSnapshot(data)
}

// snapshotError describes a snapshot file's fault by its path inside the
// snapshot.
func snapshotError(path string, err error) error {
	var ce *fleet.ConfigError
	if !errors.As(err, &ce) {
		return asFileError(path, err, "")
	}
	return &fileError{file: path, path: ce.Path, reason: ce.Reason,
		todo: "the snapshot was edited or damaged: take it again from the server or from version control"}
}
