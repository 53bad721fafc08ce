package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"purra.dev/purramcp"
)

// lockVersion is the lockVersion of the lock file shape.
const lockVersion = 1

// maxLockBytes bounds a lock file: it holds at most one snapshot per
// server, and purramcp bounds each snapshot's identity to 1 MiB.
const maxLockBytes = 64 << 20

// A Lock records, per server id, the catalog snapshot a person approved.
// Its file, purramcp-lock.json by convention, is JSON:
//
//	{
//	  "lockVersion": 1,
//	  "servers": {
//	    "fs": {
//	      "revisionDigest": "…",
//	      "snapshot": { … the whole purramcp.Snapshot … }
//	    }
//	  }
//	}
//
// with keys sorted and a two-space indent, so that a review of a change is
// a readable diff. The zero Lock is empty and ready to use. A Lock is safe
// for concurrent use; it keeps its own deep copies of the snapshots.
type Lock struct {
	// mu guards servers.
	mu      sync.Mutex
	servers map[string]purramcp.Snapshot
}

// LoadLock reads the lock file at path. A missing file is an empty lock,
// not an error. A file that cannot be read is returned as the os error;
// a malformed one, an unknown field, a lockVersion other than 1, or a
// revisionDigest that does not match its stored snapshot (or a snapshot
// whose serverId is not its key) is a [*ConfigError] naming the path.
func LoadLock(path string) (*Lock, error) {
	data, err := readBounded(path, maxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseLock(data)
}

// ParseLock parses the text of a lock file as [LoadLock] reads it, with the
// same checks and [*ConfigError] failures (a text over 64 MiB fails too).
func ParseLock(data []byte) (*Lock, error) {
	v, err := decodeJSON(data, maxLockBytes)
	if err != nil {
		return nil, err
	}
	top, err := fields(v, nil, "lockVersion", "servers")
	if err != nil {
		return nil, err
	}
	if _, ok := top["lockVersion"]; !ok {
		return nil, errAt(path{"lockVersion"}, "missing")
	}
	if _, err := integer(top["lockVersion"], path{"lockVersion"}, lockVersion, lockVersion); err != nil {
		return nil, err
	}
	l := &Lock{servers: map[string]purramcp.Snapshot{}}
	servers, ok := top["servers"].(object)
	if !ok {
		return nil, errAt(path{"servers"}, "not an object")
	}
	for _, id := range slices.Sorted(maps.Keys(servers)) {
		p := path{"servers", id}
		entry, err := fields(servers[id], p, "revisionDigest", "snapshot")
		if err != nil {
			return nil, err
		}
		digest, err := str(entry["revisionDigest"], p.with("revisionDigest"))
		if err != nil {
			return nil, err
		}
		s, err := parseSnapshot(entry["snapshot"], p.with("snapshot"))
		if err != nil {
			return nil, err
		}
		if s.ServerID != id {
			return nil, errAt(p.with("snapshot").with("serverId"), "not the server id")
		}
		if err := checkDigest(s, digest, p); err != nil {
			return nil, err
		}
		l.servers[id] = s
	}
	return l, nil
}

// ParseSnapshot decodes and checks the text of one snapshot, as
// purramcp.Catalog.Snapshot marshals it: strictly (no unknown or
// duplicate field, exact numbers, valid UTF-8, no larger than a lock
// file may be) and with its
// revisionDigest recomputed from the rest. Every failure is a
// [*ConfigError] whose Path is inside the snapshot ("" for the whole).
// The returned snapshot is the caller's.
func ParseSnapshot(data []byte) (purramcp.Snapshot, error) {
	v, err := decodeJSON(data, maxLockBytes)
	if err != nil {
		return purramcp.Snapshot{}, err
	}
	s, err := parseSnapshot(v, nil)
	if err != nil {
		return purramcp.Snapshot{}, err
	}
	if _, err := verifiedDigest(s, nil); err != nil {
		return purramcp.Snapshot{}, err
	}
	return s, nil
}

// checkDigest checks that the snapshot's own revisionDigest and digest,
// the lock entry's at p, both equal the digest of its identity.
func checkDigest(s purramcp.Snapshot, digest string, p path) error {
	sum, err := verifiedDigest(s, p.with("snapshot"))
	if err != nil {
		return err
	}
	if digest != sum {
		return errAt(p.with("revisionDigest"), "does not match the snapshot")
	}
	return nil
}

// verifiedDigest returns the digest of the identity of the snapshot at p,
// failing when the snapshot's own revisionDigest is not it.
func verifiedDigest(s purramcp.Snapshot, p path) (string, error) {
	sum, err := s.Digest()
	if err != nil {
		return "", errAt(p, "outside the identity domain")
	}
	if s.RevisionDigest != sum {
		return "", errAt(p.with("revisionDigest"), "does not match the snapshot")
	}
	return sum, nil
}

// parseSnapshot decodes a snapshot object at p, strictly.
func parseSnapshot(v any, p path) (purramcp.Snapshot, error) {
	obj, err := fields(v, p, "schemaVersion", "serverId", "protocolVersion", "revisionDigest", "entries")
	if err != nil {
		return purramcp.Snapshot{}, err
	}
	var s purramcp.Snapshot
	if s.SchemaVersion, err = integer(obj["schemaVersion"], p.with("schemaVersion"), 1, 1); err != nil {
		return purramcp.Snapshot{}, err
	}
	for name, dst := range map[string]*string{"serverId": &s.ServerID, "protocolVersion": &s.ProtocolVersion,
		"revisionDigest": &s.RevisionDigest} {
		if *dst, err = str(obj[name], p.with(name)); err != nil {
			return purramcp.Snapshot{}, err
		}
	}
	entries, ok := obj["entries"].([]any)
	if !ok {
		return purramcp.Snapshot{}, errAt(p.with("entries"), "not an array")
	}
	s.Entries = make([]purramcp.ToolEntry, len(entries))
	for i, e := range entries {
		if s.Entries[i], err = parseEntry(e, p.with("entries").with(i)); err != nil {
			return purramcp.Snapshot{}, err
		}
	}
	return s, nil
}

// parseEntry decodes one snapshot entry at p, strictly.
func parseEntry(v any, p path) (purramcp.ToolEntry, error) {
	obj, err := fields(v, p, "remoteName", "localName", "description", "inputSchema", "outputSchema",
		"policy", "concurrencySafe")
	if err != nil {
		return purramcp.ToolEntry{}, err
	}
	var e purramcp.ToolEntry
	for name, dst := range map[string]*string{"remoteName": &e.RemoteName, "localName": &e.LocalName,
		"description": &e.Description} {
		if *dst, err = str(obj[name], p.with(name)); err != nil {
			return purramcp.ToolEntry{}, err
		}
	}
	if e.ConcurrencySafe, err = boolean(obj["concurrencySafe"], p.with("concurrencySafe")); err != nil {
		return purramcp.ToolEntry{}, err
	}
	if e.InputSchema, err = schemaObject(obj["inputSchema"], p.with("inputSchema"), false); err != nil {
		return purramcp.ToolEntry{}, err
	}
	if e.OutputSchema, err = schemaObject(obj["outputSchema"], p.with("outputSchema"), true); err != nil {
		return purramcp.ToolEntry{}, err
	}
	pol, err := fields(obj["policy"], p.with("policy"), "mode", "title", "riskLevel")
	if err != nil {
		return purramcp.ToolEntry{}, err
	}
	for name, dst := range map[string]*string{"mode": &e.Policy.Mode, "title": &e.Policy.Title,
		"riskLevel": &e.Policy.RiskLevel} {
		if *dst, err = str(pol[name], p.with("policy").with(name)); err != nil {
			return purramcp.ToolEntry{}, err
		}
	}
	return e, nil
}

// schemaObject decodes a schema at p into plain Go values; null is nil
// when nullable.
func schemaObject(v any, p path, nullable bool) (map[string]any, error) {
	if v == nil && nullable {
		return nil, nil
	}
	if _, ok := v.(object); !ok {
		return nil, errAt(p, "not an object")
	}
	g, err := toGo(v, p)
	if err != nil {
		return nil, err
	}
	return g.(map[string]any), nil
}

// Digest returns the approved revision digest of server id, and whether
// the lock has one. A nil Lock has none.
func (l *Lock) Digest(id string) (string, bool) {
	if l == nil {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.servers[id]
	return s.RevisionDigest, ok
}

// Snapshot returns a deep copy of the approved snapshot of server id, and
// whether the lock has one.
func (l *Lock) Snapshot(id string) (purramcp.Snapshot, bool) {
	if l == nil {
		return purramcp.Snapshot{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.servers[id]
	if !ok {
		return purramcp.Snapshot{}, false
	}
	return s.Clone(), true
}

// ProtocolVersion returns the protocol version of server id's approved
// snapshot, the version [Fleet] and [ConnectOptions].ProtocolVersion
// connect at; "" when the lock (or a nil Lock) has no entry for id.
func (l *Lock) ProtocolVersion(id string) string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.servers[id].ProtocolVersion
}

// Set records s, deep-copied, as the approved snapshot of server id (its
// RevisionDigest is the approved digest), replacing any earlier one.
// WriteFile checks every digest against its snapshot.
func (l *Lock) Set(id string, s purramcp.Snapshot) {
	s = s.Clone()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.servers == nil {
		l.servers = map[string]purramcp.Snapshot{}
	}
	l.servers[id] = s
}

// IDs returns the server ids the lock holds, sorted; none for a nil lock.
// It is safe for concurrent use.
func (l *Lock) IDs() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.servers))
}

// clone returns a deep copy of l; a nil l gives nil.
func (l *Lock) clone() *Lock {
	if l == nil {
		return nil
	}
	c := &Lock{servers: map[string]purramcp.Snapshot{}}
	for _, id := range l.IDs() {
		if s, ok := l.Snapshot(id); ok {
			c.servers[id] = s
		}
	}
	return c
}

// MarshalJSON returns the lock file's text: keys sorted, two-space indent,
// a trailing newline. It fails with a [*ConfigError] when a snapshot's
// digest does not match it or its serverId is not its key.
func (l *Lock) MarshalJSON() ([]byte, error) {
	servers := map[string]any{}
	for _, id := range l.IDs() {
		s, _ := l.Snapshot(id)
		p := path{"servers", id}
		if s.ServerID != id {
			return nil, errAt(p.with("snapshot").with("serverId"), "not the server id")
		}
		if err := checkDigest(s, s.RevisionDigest, p); err != nil {
			return nil, err
		}
		text, err := json.Marshal(s)
		if err != nil {
			return nil, errAt(p.with("snapshot"), "not JSON")
		}
		var tree any
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber() // numbers are written as they were read
		if err := dec.Decode(&tree); err != nil {
			return nil, errAt(p.with("snapshot"), "not JSON") // unreachable: just encoded
		}
		servers[id] = map[string]any{"revisionDigest": s.RevisionDigest, "snapshot": tree}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"lockVersion": lockVersion, "servers": servers}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil // Encode ends the text with a newline
}

// WriteFile writes the lock file to path atomically: a temporary file in
// the same directory, synced, then renamed over path, so a reader sees the
// old file or the new one, never a part. It fails as MarshalJSON does
// before touching the file system, or with the os error.
func (l *Lock) WriteFile(path string) error {
	data, err := l.MarshalJSON()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
