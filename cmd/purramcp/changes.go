package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"purra.dev/purramcp"
)

// Server statuses of a serverDiff.
const (
	statusUnchanged = "unchanged" // the digests are equal
	statusChanged   = "changed"   // both sides have the server, with other digests
	statusAdded     = "added"     // only the new side (the live server) has it
	statusRemoved   = "removed"   // only the old side (the lock) has it
	statusFailed    = "failed"    // the live server could not be discovered
)

// A serverDiff is one server's line in the output of lock and diff, and
// an element of their --json "servers" array.
type serverDiff struct {
	// ID is the server id.
	ID string `json:"id"`
	// Status is unchanged, changed, added, removed or failed.
	Status string `json:"status"`
	// OldDigest is the revisionDigest of the old side (the lock), "" when
	// it has none.
	OldDigest string `json:"oldDigest"`
	// NewDigest is the revisionDigest of the new side (the live server),
	// "" when it has none or failed.
	NewDigest string `json:"newDigest"`
	// Changes are the differences, empty when unchanged or failed.
	Changes []toolChange `json:"changes"`
	// Error says why a failed server failed; Code is its mcp_* code when
	// it has one; Tool names the bound tool at fault when discovery names
	// one; Stderr holds the child's last stderr lines.
	Error  string     `json:"error,omitempty"`
	Code   string     `json:"code,omitempty"`
	Tool   *toolFault `json:"tool,omitempty"`
	Stderr []string   `json:"stderr,omitempty"`
}

// A toolFault is the bound tool a failed discovery names: its remote name,
// and for a schema the schema, path and keyword (for a limit the keyword is
// the Limits field, for a missing tool only the name is set).
type toolFault struct {
	RemoteName string `json:"remoteName"`
	Schema     string `json:"schema,omitempty"`
	Path       string `json:"path,omitempty"`
	Keyword    string `json:"keyword,omitempty"`
}

// A toolChange is one purramcp.Change, with the tool's remote name.
type toolChange struct {
	// Tool is the local name, "" for the snapshot's own serverId or
	// protocolVersion.
	Tool string `json:"tool"`
	// RemoteName is the tool's remote name on the side that has it (the
	// new side when both do), "" for a snapshot field.
	RemoteName string `json:"remoteName"`
	// Kind is added, removed or changed.
	Kind string `json:"kind"`
	// Fields are the snapshot fields that differ, for changed; [] else.
	Fields []string `json:"fields"`
	// OldProtocolVersion and NewProtocolVersion are the two sides'
	// protocol versions when Fields has protocolVersion; absent else.
	OldProtocolVersion string `json:"oldProtocolVersion,omitempty"`
	NewProtocolVersion string `json:"newProtocolVersion,omitempty"`
}

// diffServer compares the snapshots of server id; a nil side does not
// have the server.
func diffServer(id string, old, new *purramcp.Snapshot) serverDiff {
	d := serverDiff{ID: id, Changes: []toolChange{}}
	switch {
	case old == nil && new == nil:
		d.Status = statusUnchanged // unreachable: one side has the server
		return d
	case old == nil:
		d.Status, d.NewDigest = statusAdded, new.RevisionDigest
		old = &purramcp.Snapshot{SchemaVersion: new.SchemaVersion, ServerID: new.ServerID, ProtocolVersion: new.ProtocolVersion}
	case new == nil:
		d.Status, d.OldDigest = statusRemoved, old.RevisionDigest
		new = &purramcp.Snapshot{SchemaVersion: old.SchemaVersion, ServerID: old.ServerID, ProtocolVersion: old.ProtocolVersion}
	default:
		d.OldDigest, d.NewDigest = old.RevisionDigest, new.RevisionDigest
		d.Status = statusChanged
		if old.RevisionDigest == new.RevisionDigest {
			d.Status = statusUnchanged
			return d
		}
	}
	remote := map[string]string{}
	for _, s := range []*purramcp.Snapshot{old, new} {
		for _, e := range s.Entries {
			remote[e.LocalName] = e.RemoteName
		}
	}
	for _, c := range purramcp.DiffSnapshots(*old, *new) {
		fields := c.Fields
		if fields == nil {
			fields = []string{}
		}
		tc := toolChange{Tool: c.LocalName, RemoteName: remote[c.LocalName], Kind: c.Kind, Fields: fields}
		if c.LocalName == "" && slices.Contains(fields, "protocolVersion") {
			tc.OldProtocolVersion, tc.NewProtocolVersion = old.ProtocolVersion, new.ProtocolVersion
		}
		d.Changes = append(d.Changes, tc)
	}
	return d
}

// drift reports whether the server differs between the two sides or
// could not be compared.
func (d serverDiff) drift() bool { return d.Status != statusUnchanged }

// short abbreviates a digest for text output.
func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return orDash(digest)
}

// writeDiffs prints each server's status and changes as text:
//
//	units: changed a1b2c3d4e5f6 -> 0f1e2d3c4b5a
//	  ~ units_list (units.list): description
//
// oldName and newName name the two sides for a server only one has.
func writeDiffs(w io.Writer, colour bool, diffs []serverDiff, oldName, newName string) {
	for _, d := range diffs {
		switch d.Status {
		case statusUnchanged:
			fmt.Fprintf(w, "%s: unchanged %s\n", d.ID, short(d.NewDigest))
		case statusChanged:
			fmt.Fprintf(w, "%s: changed %s -> %s\n", d.ID, short(d.OldDigest), short(d.NewDigest))
		case statusAdded:
			fmt.Fprintf(w, "%s: added %s (not in %s)\n", d.ID, short(d.NewDigest), oldName)
		case statusRemoved:
			fmt.Fprintf(w, "%s: removed %s (not in %s)\n", d.ID, short(d.OldDigest), newName)
		case statusFailed:
			fmt.Fprintf(w, "%s: failed: %s\n", d.ID, d.Error)
		}
		for _, c := range d.Changes {
			fmt.Fprintln(w, "  "+c.text(colour))
		}
	}
}

// text renders a change: "+ name (remote)", "- name (remote)", or
// "~ name (remote): field, field", a change of protocol version as
// "protocolVersion OLD -> NEW".
func (c toolChange) text(colour bool) string {
	name := "(server)"
	if c.Tool != "" {
		name = c.Tool + " (" + shown(c.RemoteName) + ")"
	}
	switch c.Kind {
	case purramcp.ChangeAdded:
		return paint(colour, green, "+ "+name)
	case purramcp.ChangeRemoved:
		return paint(colour, red, "- "+name)
	}
	fields := slices.Clone(c.Fields)
	if i := slices.Index(fields, "protocolVersion"); i >= 0 && c.OldProtocolVersion+c.NewProtocolVersion != "" {
		fields[i] = "protocolVersion " + shown(c.OldProtocolVersion) + " -> " + shown(c.NewProtocolVersion)
	}
	return paint(colour, yellow, "~ "+name+": "+strings.Join(fields, ", "))
}
