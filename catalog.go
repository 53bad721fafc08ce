package purramcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/strictjson"
)

// snapshotVersion is the Snapshot shape's SchemaVersion.
const snapshotVersion = 1

// A Snapshot is the immutable identity of a catalog: what was bound, from
// which server, under which protocol version, and the digest of all of it.
// json.Marshal gives the purra-mcp 1.0.0 snapshot shape.
type Snapshot struct {
	// SchemaVersion is 1, the version of this snapshot shape.
	SchemaVersion int `json:"schemaVersion"`
	// ServerID is the host's name for the server, as given to DiscoverTools.
	ServerID string `json:"serverId"`
	// ProtocolVersion is the version the session negotiated.
	ProtocolVersion string `json:"protocolVersion"`
	// RevisionDigest is the purra.json-identity/v1 digest (64 lowercase hex
	// digits of a SHA-256) of the snapshot's identity: schemaVersion,
	// serverId, protocolVersion and every entry. Equal catalogs give equal
	// digests, in Go and in purra-mcp 1.0.0 alike; any change to a bound
	// name, description, schema or policy changes it.
	RevisionDigest string `json:"revisionDigest"`
	// Entries has one entry per binding, sorted by LocalName.
	Entries []ToolEntry `json:"entries"`
}

// Digest recomputes the revision digest of s from every field but
// RevisionDigest: the purra.json-identity/v1 digest of s's JSON shape
// without revisionDigest, the identity DiscoverTools hashes, so a snapshot a
// catalog returned gives back its own RevisionDigest and any change to it
// another digest. A host or a lock file that stores snapshots checks them
// with it. It fails, as [IdentityDigest] does, for a snapshot outside the
// identity domain (a schema value JSON cannot carry, an unsafe number).
func (s Snapshot) Digest() (string, error) {
	var entries []any // nil Entries hash as null, as their JSON shape is
	if s.Entries != nil {
		entries = make([]any, len(s.Entries))
	}
	for i, e := range s.Entries {
		// The schemas as their JSON: a value a host put there that JSON
		// carries (a []string, a struct) hashes as it would be stored.
		input, err := json.Marshal(e.InputSchema)
		if err != nil {
			return "", err
		}
		output, err := json.Marshal(e.OutputSchema)
		if err != nil {
			return "", err
		}
		entries[i] = entryIdentity(e.RemoteName, e.LocalName, e.Description, json.RawMessage(input),
			json.RawMessage(output), e.Policy, e.ConcurrencySafe)
	}
	return IdentityDigest(snapshotIdentity(s.SchemaVersion, s.ServerID, s.ProtocolVersion, entries))
}

// snapshotIdentity is the identity object the revision digest hashes:
// the snapshot's JSON shape without revisionDigest. Discovery and
// Snapshot.Digest both hash it, so they agree by construction.
func snapshotIdentity(schemaVersion int, serverID, protocol string, entries []any) map[string]any {
	return map[string]any{"schemaVersion": schemaVersion, "serverId": serverID, "protocolVersion": protocol,
		"entries": entries}
}

// entryIdentity is the identity object of one entry, a ToolEntry's JSON
// shape: output is null, never {}, for a tool without an output schema.
func entryIdentity(remote, local, description string, input, output any, policy ToolPolicy,
	concurrencySafe bool) map[string]any {
	return map[string]any{
		"remoteName": remote, "localName": local, "description": description,
		"inputSchema": input, "outputSchema": output,
		"policy":          map[string]any{"mode": policy.Mode, "title": policy.Title, "riskLevel": policy.RiskLevel},
		"concurrencySafe": concurrencySafe,
	}
}

// Clone returns a deep copy of s, its schemas included: changing either
// changes nothing in the other.
func (s Snapshot) Clone() Snapshot {
	if s.Entries != nil {
		s.Entries = slices.Clone(s.Entries)
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.InputSchema != nil {
			e.InputSchema = strictjson.CloneObject(e.InputSchema)
		}
		if e.OutputSchema != nil {
			e.OutputSchema = strictjson.CloneObject(e.OutputSchema)
		}
	}
	return s
}

// A ToolEntry is one bound tool in a Snapshot.
type ToolEntry struct {
	// RemoteName is the tool's name on the server.
	RemoteName string `json:"remoteName"`
	// LocalName is the binding's local name.
	LocalName string `json:"localName"`
	// Description is the server's description ("" when it sent none),
	// remote text kept verbatim.
	Description string `json:"description"`
	// InputSchema is the input schema as the server sent it, a root
	// "$schema" included.
	InputSchema map[string]any `json:"inputSchema"`
	// OutputSchema is the output schema as the server sent it, or nil (JSON
	// null) when the tool has none.
	OutputSchema map[string]any `json:"outputSchema"`
	// Policy is the binding's normalized read policy.
	Policy ToolPolicy `json:"policy"`
	// ConcurrencySafe is the binding's declaration.
	ConcurrencySafe bool `json:"concurrencySafe"`
}

// A Catalog is the result of one discovery: a snapshot and one registration
// per binding. It is immutable; Stale and the registrations are safe for
// concurrent use. It stays bound to the session it was discovered over.
type Catalog struct {
	// serverID, protocol and digest head the snapshot; its entries are the
	// tools' own records.
	serverID, protocol, digest string
	transport                  string         // the monitor's transport kind, for Events
	tools                      []*catalogTool // sorted by local name
	monitor                    *CatalogMonitor
	revision                   uint64
	observer                   func(context.Context, Event)                 // DiscoveryOptions.Observer; nil when none
	callStart                  func(context.Context, Event) context.Context // DiscoveryOptions.CallStart; used only with observer
}

// catalogTool is everything one registration needs, and the one record of
// its snapshot entry: the binding's names, policy and declaration, the
// remote description, and the schemas as the contracts' immutable
// snapshots (inputSnap, outputSnap; the root $schema re-added), copied out
// only by Catalog.Snapshot.
type catalogTool struct {
	binding     binding
	description string // the remote description, verbatim
	inputSnap   *strictjson.Object
	outputSnap  *strictjson.Object // nil when the tool has no output schema
	input       *Contract
	output      *Contract // nil when the tool has no output schema
	envelope    *Contract
	session     *mcp.ClientSession
	limits      Limits
	monitor     *CatalogMonitor
	revision    uint64
	propagator  TracePropagator // DiscoveryOptions.TracePropagator; nil when none
}

// identity is the identity object of one entry (entryIdentity). The
// schemas are the contracts' own snapshots, hashed without copying them
// out.
func (t *catalogTool) identity() map[string]any {
	b := t.binding
	var output any // an absent output schema is null, never {}
	if t.outputSnap != nil {
		output = t.outputSnap
	}
	return entryIdentity(b.remote, b.local, t.description, t.inputSnap, output, b.policy, b.concurrencySafe)
}

// Snapshot returns a deep copy of the catalog's snapshot; the caller may
// modify it freely.
func (c *Catalog) Snapshot() Snapshot {
	s := Snapshot{SchemaVersion: snapshotVersion, ServerID: c.serverID, ProtocolVersion: c.protocol,
		RevisionDigest: c.digest, Entries: make([]ToolEntry, len(c.tools))}
	for i, t := range c.tools {
		b := t.binding
		e := ToolEntry{RemoteName: b.remote, LocalName: b.local, Description: t.description,
			InputSchema: strictjson.ToGo(t.inputSnap).(map[string]any), Policy: b.policy,
			ConcurrencySafe: b.concurrencySafe}
		if t.outputSnap != nil {
			e.OutputSchema = strictjson.ToGo(t.outputSnap).(map[string]any)
		}
		s.Entries[i] = e
	}
	return s
}

// Stale reports whether the catalog can no longer run: the tool list changed
// since discovery or the session ended. Once true it stays true.
func (c *Catalog) Stale() bool { return c.monitor.Check(c.revision) != nil }

// Registrations returns one fresh ToolDefinition per binding, sorted by
// name. Changing the slice or its maps changes nothing in the catalog.
func (c *Catalog) Registrations() []ToolDefinition {
	defs := make([]ToolDefinition, len(c.tools))
	for i, t := range c.tools {
		defs[i] = c.definition(t)
	}
	return defs
}

// definition is a fresh registration of t.
func (c *Catalog) definition(t *catalogTool) ToolDefinition {
	description := t.description
	if description == "" {
		description = t.binding.policy.Title
	}
	return ToolDefinition{
		Name:             t.binding.local,
		Description:      description,
		InputSchema:      t.input.compiledSchema(),
		ArgumentContract: t.input,
		Policy:           t.binding.policy,
		ConcurrencySafe:  t.binding.concurrencySafe,
		Scope:            t.scope,
		Run:              c.runner(t),
	}
}

// Registration returns a fresh registration of the bound tool whose local
// name is name, as Registrations gives it, and whether there is one.
func (c *Catalog) Registration(name string) (ToolDefinition, bool) {
	i, ok := slices.BinarySearchFunc(c.tools, name, func(t *catalogTool, name string) int {
		return strings.Compare(t.binding.local, name)
	})
	if !ok {
		return ToolDefinition{}, false
	}
	return c.definition(c.tools[i]), true
}
