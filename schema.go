package purramcp

import (
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
)

// OutputSchemaProfile names the strict object-schema profile every Contract
// enforces: a closed subset of JSON Schema 2020-12 (type, properties,
// required, additionalProperties false, items, enum, const, bounds on
// numbers, strings, arrays and objects, anyOf of object alternatives and
// their descriptions) that validates without coercion, defaults or repair,
// under byte, depth, node and work limits. It is part of every contract
// digest.
const OutputSchemaProfile = "purra.output-schema/v1"

// Contract modes, recorded in the contract digest. Validation is the same
// in both: purramcp always validates locally.
const (
	// ModeLocal (the default) says the output is validated locally only.
	ModeLocal = "local"
	// ModeNativeRequired says the producer must also enforce the schema
	// natively (a model provider's structured-output mode).
	ModeNativeRequired = "native_required"
)

// ContractLimits bounds a Contract's schema and every validation. A zero field
// takes its default, which is also its maximum; a negative field or one
// above its maximum makes NewContract fail with CodeSchemaInvalid.
type ContractLimits struct {
	// SchemaBytes caps the detached-byte measure of the schema. Default 65536.
	SchemaBytes int
	// OutputBytes caps the UTF-8 size of a Parse text and the detached-byte
	// measure of any validated value. Default 1048576.
	OutputBytes int
	// SchemaDepth is the deepest level of a schema node. Default 32.
	SchemaDepth int
	// OutputDepth is the deepest level of a validated value. Default 64.
	OutputDepth int
	// SchemaNodes caps schema nodes, keys included. Default 4096.
	SchemaNodes int
	// OutputNodes caps value nodes, keys included. Default 65536.
	OutputNodes int
	// ValidationSteps is the work budget of one validation: each schema
	// node visited, each enum or const comparison and each uniqueItems
	// comparison costs steps. Default 100000.
	ValidationSteps int
}

// resolve fills defaults and reports whether every field is in range.
func (l ContractLimits) resolve() (ContractLimits, bool) {
	ok := resolveField(&l.SchemaBytes, defaultSchemaBytes) && resolveField(&l.OutputBytes, defaultOutputBytes) &&
		resolveField(&l.SchemaDepth, defaultSchemaDepth) && resolveField(&l.OutputDepth, defaultOutputDepth) &&
		resolveField(&l.SchemaNodes, defaultSchemaNodes) && resolveField(&l.OutputNodes, defaultOutputNodes) &&
		resolveField(&l.ValidationSteps, defaultValidationSteps)
	if !ok {
		return ContractLimits{}, false
	}
	return l, true
}

// ContractOptions configures NewContract. The options are copied: later
// changes to Schema by the caller change nothing.
type ContractOptions struct {
	// SchemaID and SchemaVersion identify the schema. Each must be valid
	// UTF-8 of at most 128 bytes and not blank under JavaScript trim().
	// They are kept and hashed verbatim, untrimmed.
	SchemaID, SchemaVersion string
	// Schema is the schema, in the value domain of IdentityDigest. Its root
	// must be an object whose "type" is "object".
	Schema any
	// Mode is "" or ModeLocal (the default), or ModeNativeRequired.
	Mode string
	// Limits bounds the schema and every validation.
	Limits ContractLimits
}

// A Contract is a compiled purra.output-schema/v1 contract: a strict,
// closed schema profile that validates without coercion, defaults or
// repair. It is immutable and safe for concurrent use.
type Contract struct {
	id, version, mode string
	limits            ContractLimits
	schema            any // *strictjson.Object, the normalized snapshot (A5)
	compiled          *profile.Schema
	// inlined is the schema actually compiled when an extended policy
	// inlined $ref (nil otherwise: schema is what was compiled).
	inlined *strictjson.Object
	// digests computes schemaDigest and contractDigest on first use: most
	// contracts (output and envelope contracts of a catalog) never show them.
	digests        sync.Once
	schemaDigest   string
	contractDigest string
}

// A ContractError reports why a contract could not be built or a value
// failed it. It never carries input text: only a code and a location.
type ContractError struct {
	// Code is one of the contract Code* constants (CodeSchemaInvalid, ...).
	Code string
	// Path locates a failed constraint: "$" for the root, then ".name" for
	// each object member and "[i]" for each array item on the way. It is
	// "$" for every failure that is not a constraint, for
	// additionalProperties (so that an undeclared key is never echoed) and
	// for a path over 512 bytes.
	Path string
	// Keyword is the failed keyword ("type", "required", "enum", ...) for
	// CodeSchemaMismatch; otherwise "schema", "mode", "document" (Parse
	// text), "value" (a ValidateValue input outside the JSON domain or the
	// value limits) or "validation_steps".
	Keyword string
}

// Error returns one fixed text, whatever the failure.
func (e *ContractError) Error() string { return "Structured output contract validation failed" }

// Is reports whether target is a *ContractError with the same Code. A nil
// *ContractError matches nothing, and a nil *ContractError target is matched
// by nothing (neither has a code), as for [*Error].
func (e *ContractError) Is(target error) bool {
	t, ok := target.(*ContractError)
	return ok && t != nil && e != nil && t.Code == e.Code
}

func contractError(code, keyword, path string) *ContractError {
	return &ContractError{Code: code, Path: path, Keyword: keyword}
}

var errSchemaInvalid = contractError(CodeSchemaInvalid, "schema", "$")

// NewContract checks and compiles opts in this order: the identity strings,
// the limits, a snapshot of the schema under the schema limits, the root
// type, every keyword against the profile, then the mode. Failures are *ContractError with
// CodeSchemaInvalid (keyword "schema") or, for an unknown mode only,
// CodeModeUnsupported (keyword "mode").
func NewContract(opts ContractOptions) (*Contract, error) {
	c, err := newContract(opts, profile.Options{})
	if err != nil {
		return nil, err.ContractError
	}
	return c, nil
}

// contractFailure is a ContractError with, for a schema the profile rejects,
// the *profile.SchemaError that locates it. Only the adapter's inspector reads
// the cause; NewContract returns the ContractError alone.
type contractFailure struct {
	*ContractError
	cause error
}

// location returns the path and keyword the profile names for a rejected
// schema, or "$" and "schema" when the failure is elsewhere (the JSON
// domain, a limit, an identity string).
func (f *contractFailure) location() (path, keyword string) {
	var se *profile.SchemaError
	if errors.As(f.cause, &se) {
		return se.Path, se.Keyword
	}
	return "$", "schema"
}

// newContract is NewContract with the profile widened by popts; only
// discovery under an explicit SchemaPolicy passes anything but the zero value.
func newContract(opts ContractOptions, popts profile.Options) (*Contract, *contractFailure) {
	if !validIdentityString(opts.SchemaID) || !validIdentityString(opts.SchemaVersion) {
		return nil, &contractFailure{ContractError: fresh(errSchemaInvalid)}
	}
	limits, ok := opts.Limits.resolve()
	if !ok {
		return nil, &contractFailure{ContractError: fresh(errSchemaInvalid)}
	}
	schema, err := strictjson.SnapshotShared(opts.Schema, strictjson.Limits{
		Depth: limits.SchemaDepth, Nodes: limits.SchemaNodes, Bytes: limits.SchemaBytes}, popts.Sharing.Interner())
	if err != nil {
		return nil, &contractFailure{ContractError: fresh(errSchemaInvalid), cause: err}
	}
	if popts.ExtendedKeywords {
		popts.MaxNodes, popts.MaxDepth, popts.MaxBytes = limits.SchemaNodes, limits.SchemaDepth, limits.SchemaBytes
	}
	compiled, err := profile.CompileWith(schema, popts)
	if err != nil {
		return nil, &contractFailure{ContractError: fresh(errSchemaInvalid), cause: err}
	}
	mode := opts.Mode
	if mode == "" {
		mode = ModeLocal
	}
	if mode != ModeLocal && mode != ModeNativeRequired {
		return nil, &contractFailure{ContractError: contractError(CodeModeUnsupported, "mode", "$")}
	}
	c := &Contract{id: opts.SchemaID, version: opts.SchemaVersion, mode: mode,
		limits: limits, schema: schema, compiled: compiled, inlined: compiled.Inlined()}
	return c, nil
}

func fresh(e *ContractError) *ContractError { c := *e; return &c }

// identityDigest hashes the contract identity purra-mcp 1.0.0 defines: the
// profile, schema id, schema version, mode, schema digest and the limits in
// ContractLimits' field order.
func (c *Contract) identityDigest() string {
	l := c.limits
	d, err := identity.DigestOf(map[string]any{
		"schemaId": c.id, "schemaVersion": c.version, "schemaProfile": OutputSchemaProfile,
		"schemaDigest": c.schemaDigest, "mode": c.mode, "limits": []any{l.SchemaBytes, l.OutputBytes,
			l.SchemaDepth, l.OutputDepth, l.SchemaNodes, l.OutputNodes, l.ValidationSteps},
	}, identityLimits)
	if err != nil {
		panic("purramcp: internal error: contract identity outside the JSON domain")
	}
	return d
}

// validIdentityString checks a schema id or version: at most 128 bytes of
// valid UTF-8 that is not blank under JavaScript's trim().
func validIdentityString(s string) bool {
	return len(s) <= 128 && utf8.ValidString(s) && strings.TrimFunc(s, isJSWhitespace) != ""
}

// isJSWhitespace reports whether JavaScript's String.prototype.trim removes
// r: WhiteSpace and LineTerminator of ECMA-262, which include U+FEFF.
func isJSWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// SchemaID returns the schema id, verbatim.
func (c *Contract) SchemaID() string { return c.id }

// SchemaVersion returns the schema version, verbatim.
func (c *Contract) SchemaVersion() string { return c.version }

// Mode returns ModeLocal or ModeNativeRequired.
func (c *Contract) Mode() string { return c.mode }

// Limits returns the resolved limits, every field set.
func (c *Contract) Limits() ContractLimits { return c.limits }

// Schema returns a fresh deep copy of the normalized schema (A5): nothing
// added or removed, −0 folded into 0, numbers as float64. The caller may
// modify it freely.
func (c *Contract) Schema() map[string]any {
	return strictjson.ToGo(c.schema).(map[string]any)
}

// compiledSchema returns a fresh deep copy of the schema that validates:
// Schema, or under an extended policy that inlined $ref the inlined schema
// ($defs removed).
func (c *Contract) compiledSchema() map[string]any {
	if c.inlined != nil {
		return strictjson.ToGo(c.inlined).(map[string]any)
	}
	return c.Schema()
}

// SchemaDigest returns the purra.json-identity/v1 digest of the normalized
// schema: equal for schemas that differ only in key order or number
// spelling.
func (c *Contract) SchemaDigest() string {
	c.computeDigests()
	return c.schemaDigest
}

func (c *Contract) computeDigests() {
	c.digests.Do(func() {
		c.schemaDigest = identity.Digest(c.schema)
		c.contractDigest = c.identityDigest()
	})
}

// ContractDigest returns the identity digest of the contract: the
// schema digest bound to the id, version, profile, mode and every limit.
func (c *Contract) ContractDigest() string {
	c.computeDigests()
	return c.contractDigest
}

func (c *Contract) outputLimits() strictjson.Limits {
	return strictjson.Limits{Depth: c.limits.OutputDepth, Nodes: c.limits.OutputNodes, Bytes: c.limits.OutputBytes}
}

// Parse reads text as exactly one strict RFC 8259 document (A6) and
// validates it (A7). Any syntax, Unicode, number or resource failure is
// CodeInvalidJSON with keyword "document"; then CodeValidationLimitExceeded
// or CodeSchemaMismatch as for ValidateValue. On success the result is a
// fresh map the caller owns.
func (c *Contract) Parse(text string) (map[string]any, error) {
	v, err := strictjson.Parse(text, c.outputLimits())
	if err != nil {
		return nil, contractError(CodeInvalidJSON, "document", "$")
	}
	return c.check(v)
}

// ValidateValue snapshots an already decoded value (a deep copy under the
// output limits) and validates it.
// A value outside the JSON domain or the output limits is CodeInvalidJSON
// with keyword "value"; a spent work budget is CodeValidationLimitExceeded
// (keyword "validation_steps"); a failed constraint is CodeSchemaMismatch
// with the violated keyword and its path. Duplicate keys an upstream decoder
// already merged cannot be detected here. On success the result is a fresh
// map the caller owns; value itself is never modified.
func (c *Contract) ValidateValue(value any) (map[string]any, error) {
	v, err := strictjson.Snapshot(value, c.outputLimits())
	if err != nil {
		return nil, contractError(CodeInvalidJSON, "value", "$")
	}
	return c.check(v)
}

func (c *Contract) validate(v any) error {
	violation, err := c.compiled.Validate(v, c.limits.ValidationSteps)
	if err != nil {
		return contractError(CodeValidationLimitExceeded, "validation_steps", "$")
	}
	if violation != nil {
		return contractError(CodeSchemaMismatch, violation.Keyword, violation.Render())
	}
	return nil
}

func (c *Contract) check(v any) (map[string]any, error) {
	if err := c.validate(v); err != nil {
		return nil, err
	}
	return strictjson.Own(v).(map[string]any), nil
}
