package purramcp

import (
	"strings"

	"purra.dev/purramcp/internal/profile"
)

// A SchemaPolicy widens, explicitly and per discovery, which remote schemas
// bind. The zero value is the reference behaviour of purra-mcp 1.0.0, and
// neither policy ever weakens what is validated: each admits only keywords
// or declarations that assert nothing the profile does not already assert.
type SchemaPolicy struct {
	// DialectEquivalence accepts a root "$schema" naming draft-07
	// ("http://json-schema.org/draft-07/schema", with or without "#") or
	// 2019-09 ("https://json-schema.org/draft/2019-09/schema", with or
	// without "#") as well as 2020-12. Every keyword the profile allows
	// asserts the same thing in those drafts (the tuple form of items, where
	// they differ, stays rejected). The declaration is kept in the snapshot
	// entry and the digest and removed before compiling, exactly as the
	// 2020-12 one is; "$schema" below the root stays rejected.
	DialectEquivalence bool
	// Annotations accepts the non-asserting keywords default, examples,
	// $comment, deprecated, readOnly, writeOnly, and format (as an
	// annotation: purramcp does not assert it; the server may) wherever a
	// schema node may stand. They never change validation and never fill in
	// a value; they stay in the snapshot, the digest and the registration's
	// input schema, and count against every byte and node limit. A value of
	// the wrong kind (a non-string format, a non-array examples, a
	// non-boolean readOnly) is still rejected.
	Annotations bool
	// ExtendedKeywords accepts, wherever a schema node may stand, asserting
	// keywords outside the reference profile that purramcp itself asserts
	// with JSON Schema 2020-12 semantics, every step charged to the
	// validation budget (Limits never widen): exclusiveMinimum and
	// exclusiveMaximum (numbers; the boolean draft-04 form stays rejected),
	// propertyNames (a schema applied to every key), additionalProperties as
	// a schema (applied to every member not in properties), pattern (an
	// ECMA-262 regular expression with the u flag, matched unanchored,
	// accepted only when purramcp can translate it to Go's linear-time regexp
	// with the same meaning for every input: lookbehind, backreferences, \B,
	// \p{...}, lookahead other than right after a leading ^, repeats over
	// 1000 and patterns over 1024 bytes are rejected; a match costs
	// 1 + (bytes+1)·program size/16 steps), and a root $defs
	// with $ref pointers of the form "#/$defs/Name" (~0 and ~1 escapes)
	// resolved by inlining. A cycle, a dangling or non-local reference, or an
	// inlined schema beyond the schema node, depth or byte limit is rejected, as is
	// a $ref with sibling keywords under a declared draft-07 root (draft-07
	// ignores them). Elsewhere (2020-12: no declared dialect, or a later
	// one) the referenced schema and the siblings both apply: they are
	// inlined as one node asserting exactly their intersection (the tighter
	// bound, the union of required names, the common enum values and types,
	// merged properties/additionalProperties and items), and a reference
	// whose intersection one node cannot assert exactly (two patterns, two
	// anyOf or oneOf, disjoint types or values) is rejected at the $ref. The
	// snapshot and the digest keep the schema as the server sent it; the
	// registration's InputSchema is the inlined schema, $defs removed.
	// Everything else outside the profile (allOf, not, if, prefixItems,
	// unevaluated*, $id, $anchor, ...) stays rejected.
	ExtendedKeywords bool
	// ParamHeaders accepts x-mcp-header (MCP 2026-07-28, SEP-2243) in an
	// input schema, on a property written directly in the root's
	// properties whose type is exactly "string", "integer" or "boolean",
	// when its value is an HTTP field-name token (1*tchar) that no other
	// property of the schema names, compared case-insensitively. It asserts
	// nothing and stays in the snapshot, the digest and the registration's
	// input schema; over streamable HTTP at 2026-07-28 go-sdk sends each
	// such argument of a tools/call as the header Mcp-Param-{name} (absent
	// and null arguments send none; values that are not plain visible
	// ASCII are sent as =?base64?...?=). Anything else is rejected with
	// keyword x-mcp-header and the property's path, never stripped: the
	// keyword below the root's own properties, in an output schema, on a
	// property of another or no type, an invalid or duplicate name.
	ParamHeaders bool
}

// String names the policy as the inspector reports it: "default", or the
// enabled policies joined by "+" in the order "dialect", "annotations",
// "extended", "headers" (for example "dialect+annotations" or
// "annotations+extended").
func (p SchemaPolicy) String() string {
	var names []string
	if p.DialectEquivalence {
		names = append(names, "dialect")
	}
	if p.Annotations {
		names = append(names, "annotations")
	}
	if p.ExtendedKeywords {
		names = append(names, "extended")
	}
	if p.ParamHeaders {
		names = append(names, "headers")
	}
	if len(names) == 0 {
		return "default"
	}
	return strings.Join(names, "+")
}

func (p SchemaPolicy) profile() profile.Options {
	return profile.Options{Annotations: p.Annotations, ExtendedKeywords: p.ExtendedKeywords, ParamHeaders: p.ParamHeaders}
}
