package purramcp

import "time"

// Default limits, those of purra-mcp 1.0.0. Each default is also the largest value a
// host may set, except Timeout, which may rise to maxTimeout.
const (
	defaultMaxPages            = 32
	defaultMaxTools            = 256
	defaultMaxCatalogBytes     = 1_048_576
	defaultMaxSchemaBytes      = 65_536
	defaultMaxDescriptionBytes = 8_192
	defaultMaxResultBytes      = 65_536
	defaultMaxContentBlocks    = 128
	defaultTimeout             = 30 * time.Second

	minTimeout = time.Millisecond
	maxTimeout = 5 * time.Minute

	// maxCursorBytes bounds a nextCursor, as purra-mcp 1.0.0 does.
	maxCursorBytes = 512
)

// Default contract limits, those of purra-mcp 1.0.0, each also the largest
// value ContractLimits accepts for its field. The three output defaults are
// also the budget of every identity input.
const (
	defaultSchemaBytes     = 65_536
	defaultOutputBytes     = 1_048_576
	defaultSchemaDepth     = 32
	defaultOutputDepth     = 64
	defaultSchemaNodes     = 4_096
	defaultOutputNodes     = 65_536
	defaultValidationSteps = 100_000
)

// resolveField applies the rule every integer limit of Limits and
// ContractLimits follows: zero takes def, 1 through def is kept, anything
// else is out of range and reported false. Values are never clamped.
func resolveField(v *int, def int) bool {
	if *v == 0 {
		*v = def
		return true
	}
	return *v >= 1 && *v <= def
}

// Limits bounds what discovery reads and what a call may return. A zero field
// takes its default; any other value must lie between 1 and the default
// (Timeout: between 1ms and 5m), else discovery fails [ErrBindingInvalid].
// Values are never clamped.
type Limits struct {
	// MaxPages bounds the tools/list requests of one discovery. Default 32.
	MaxPages int
	// MaxTools bounds both the bindings and the remote tools listed across
	// all pages. Default 256.
	MaxTools int
	// MaxCatalogBytes bounds the running total of the compact JSON size of
	// every tools/list result. Default 1 MiB (1,048,576).
	MaxCatalogBytes int
	// MaxSchemaBytes bounds the compact JSON size of each bound tool's input
	// and output schema, and is the contracts' SchemaBytes. Default 65,536.
	MaxSchemaBytes int
	// MaxDescriptionBytes bounds the UTF-8 size of a bound tool's description.
	// Default 8,192.
	MaxDescriptionBytes int
	// MaxResultBytes bounds the compact JSON size of a tools/call result and
	// is the contracts' OutputBytes, so it also bounds argument text.
	// Default 65,536.
	MaxResultBytes int
	// MaxContentBlocks bounds the content blocks of one result. Default 128.
	MaxContentBlocks int
	// Timeout bounds each tools/list and tools/call request, including a
	// transport write that blocks. Default 30s; at most 5m.
	Timeout time.Duration
}

// DefaultLimits returns the defaults: 32 pages, 256 tools, 1,048,576 catalog
// bytes, 65,536 schema bytes, 8,192 description bytes, 65,536 result bytes,
// 128 content blocks and a 30s timeout.
func DefaultLimits() Limits {
	return Limits{
		MaxPages:            defaultMaxPages,
		MaxTools:            defaultMaxTools,
		MaxCatalogBytes:     defaultMaxCatalogBytes,
		MaxSchemaBytes:      defaultMaxSchemaBytes,
		MaxDescriptionBytes: defaultMaxDescriptionBytes,
		MaxResultBytes:      defaultMaxResultBytes,
		MaxContentBlocks:    defaultMaxContentBlocks,
		Timeout:             defaultTimeout,
	}
}

// resolve fills zero fields with defaults and checks every range
// (see Limits); a value out of range fails [ErrBindingInvalid].
func (l Limits) resolve() (Limits, error) {
	fields := [...]struct {
		v   *int
		def int
	}{
		{&l.MaxPages, defaultMaxPages},
		{&l.MaxTools, defaultMaxTools},
		{&l.MaxCatalogBytes, defaultMaxCatalogBytes},
		{&l.MaxSchemaBytes, defaultMaxSchemaBytes},
		{&l.MaxDescriptionBytes, defaultMaxDescriptionBytes},
		{&l.MaxResultBytes, defaultMaxResultBytes},
		{&l.MaxContentBlocks, defaultMaxContentBlocks},
	}
	for _, f := range fields {
		if !resolveField(f.v, f.def) {
			return Limits{}, fail(CodeBindingInvalid)
		}
	}
	switch {
	case l.Timeout == 0:
		l.Timeout = defaultTimeout
	case l.Timeout < minTimeout || l.Timeout > maxTimeout:
		return Limits{}, fail(CodeBindingInvalid)
	}
	return l, nil
}
