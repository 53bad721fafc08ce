package purramcp

import (
	"slices"
	"strings"

	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
)

// Schema identity of every remote contract and the one root dialect the
// adapter recognizes.
const (
	remoteSchemaID      = "mcp.object"
	remoteSchemaVersion = "1"
	dialectKey          = "$schema"
	dialect202012       = "https://json-schema.org/draft/2020-12/schema"
)

// A schemaFault says where a remote schema fails the profile: Path is the
// JSON path of the failing node and Keyword the failing keyword, or the name
// of the limit. Discovery reports every fault as mcp_schema_unsupported; only
// the inspector shows where.
type schemaFault struct{ path, keyword string }

func (f *schemaFault) Error() string { return "purramcp: remote schema unsupported" }

// sizedRemoteContract applies the remote-schema rules to one schema whose
// compact JSON size (jssize) the caller measured: an object, within
// MaxSchemaBytes (declaration included), with a root "$schema" only as
// policy admits it, compiling under the profile as widened by policy. It
// returns the compiled contract and the snapshot schema (the root $schema
// kept as declared), which shares nothing with schema or go-sdk, or a
// *schemaFault.
func sizedRemoteContract(schema any, size int, limits Limits, policy SchemaPolicy) (*Contract, *strictjson.Object, error) {
	return sharedRemoteContract(schema, size, limits, policy, nil)
}

// sharedRemoteContract is sizedRemoteContract snapshotting and compiling
// through sharing (nil: none), under its lock; it changes no outcome.
func sharedRemoteContract(schema any, size int, limits Limits, policy SchemaPolicy,
	sharing *profile.Sharing) (*Contract, *strictjson.Object, error) {
	root, ok := schema.(map[string]any)
	if !ok {
		return nil, nil, &schemaFault{"$", "schema"}
	}
	// The whole schema, declaration included, as compact JSON.
	if size > limits.MaxSchemaBytes {
		return nil, nil, &schemaFault{"$", "MaxSchemaBytes"}
	}
	declared, hasDialect := root[dialectKey]
	if hasDialect && !policy.acceptsDialect(declared) {
		return nil, nil, &schemaFault{"$", dialectKey}
	}
	body := root // snapshotted, never modified
	if hasDialect {
		body = make(map[string]any, len(root)-1)
		for k, v := range root {
			if k != dialectKey {
				body[k] = v
			}
		}
	}
	popts := policy.profile()
	popts.Draft07 = hasDialect && isDraft07(declared)
	popts.Sharing = sharing
	if sharing != nil {
		sharing.Lock()
	}
	c, err := newRemoteContract(body, limits, popts)
	if sharing != nil {
		sharing.Unlock()
	}
	if err != nil {
		return nil, nil, err
	}
	snap := c.schema.(*strictjson.Object) // immutable; copied out only by Catalog.Snapshot
	if hasDialect {
		// declared is a string acceptsDialect admitted.
		snap = strictjson.NewObject(append(slices.Clone(snap.Keys), dialectKey), append(slices.Clone(snap.Values), declared))
	}
	return c, snap, nil
}

// newRemoteContract compiles schema under the adapter's limits; a rejection
// is a *schemaFault located by the profile's SchemaError, or at "$" when the
// schema is outside the JSON domain or the schema limits. newContract copies
// schema and never modifies it.
func newRemoteContract(schema map[string]any, limits Limits, popts profile.Options) (*Contract, error) {
	c, err := newContract(ContractOptions{SchemaID: remoteSchemaID, SchemaVersion: remoteSchemaVersion,
		Schema: schema, Limits: ContractLimits{SchemaBytes: limits.MaxSchemaBytes, OutputBytes: limits.MaxResultBytes}},
		popts)
	if err != nil {
		path, keyword := err.location()
		return nil, &schemaFault{path, keyword}
	}
	return c, nil
}

// equivalentDialects are the root "$schema" values DialectEquivalence adds.
var equivalentDialects = map[string]bool{
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-07/schema":        true,
	"https://json-schema.org/draft/2019-09/schema":  true,
	"https://json-schema.org/draft/2019-09/schema#": true,
}

// acceptsDialect reports whether a root "$schema" value binds under p
// (only the exact 2020-12 URI by default).
func (p SchemaPolicy) acceptsDialect(v any) bool {
	s, ok := v.(string)
	return ok && (s == dialect202012 || p.DialectEquivalence && equivalentDialects[s])
}

// isDraft07 reports whether a root "$schema" value names draft-07.
func isDraft07(v any) bool {
	s, _ := v.(string)
	return strings.HasPrefix(s, "http://json-schema.org/draft-07/schema")
}
