package purramcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

func TestLimits_Defaults(t *testing.T) {
	assert.Equal(t, purramcp.Limits{MaxPages: 32, MaxTools: 256, MaxCatalogBytes: 1048576, MaxSchemaBytes: 65536,
		MaxDescriptionBytes: 8192, MaxResultBytes: 65536, MaxContentBlocks: 128, Timeout: 30 * time.Second},
		purramcp.DefaultLimits())
	got, err := purramcp.ResolveLimits(purramcp.Limits{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.DefaultLimits(), got, "zero means default")
}

// TestGap1_LimitRanges: each field 0, 1..default; Timeout 1ms..5m; anything
// else fails mcp_binding_invalid (reference-behaviors.md §5.1).
func TestGap1_LimitRanges(t *testing.T) {
	d := purramcp.DefaultLimits()
	fields := map[string]func(*purramcp.Limits) *int{
		"MaxPages":            func(l *purramcp.Limits) *int { return &l.MaxPages },
		"MaxTools":            func(l *purramcp.Limits) *int { return &l.MaxTools },
		"MaxCatalogBytes":     func(l *purramcp.Limits) *int { return &l.MaxCatalogBytes },
		"MaxSchemaBytes":      func(l *purramcp.Limits) *int { return &l.MaxSchemaBytes },
		"MaxDescriptionBytes": func(l *purramcp.Limits) *int { return &l.MaxDescriptionBytes },
		"MaxResultBytes":      func(l *purramcp.Limits) *int { return &l.MaxResultBytes },
		"MaxContentBlocks":    func(l *purramcp.Limits) *int { return &l.MaxContentBlocks },
	}
	for name, field := range fields {
		max := *field(&d)
		for _, v := range []int{1, max / 2, max} {
			var l purramcp.Limits
			*field(&l) = v
			got, err := purramcp.ResolveLimits(l)
			require.NoError(t, err, "%s=%d", name, v)
			assert.Equal(t, v, *field(&got), name)
		}
		for _, v := range []int{-1, max + 1, -max} {
			var l purramcp.Limits
			*field(&l) = v
			_, err := purramcp.ResolveLimits(l)
			assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "%s=%d", name, v)
		}
	}
	for _, v := range []time.Duration{time.Millisecond, 100 * time.Millisecond, 2 * time.Second, 5 * time.Minute} {
		got, err := purramcp.ResolveLimits(purramcp.Limits{Timeout: v})
		require.NoError(t, err, "Timeout=%v", v)
		assert.Equal(t, v, got.Timeout)
	}
	for _, v := range []time.Duration{-time.Second, time.Millisecond - 1, 5*time.Minute + 1} {
		_, err := purramcp.ResolveLimits(purramcp.Limits{Timeout: v})
		assert.Equal(t, "mcp_binding_invalid", purramcp.CodeOf(err), "Timeout=%v", v)
	}
}

// acceptedLimits runs the default discovery and one call under limits at
// both versions: limits the reference passes are accepted and work.
func acceptedLimits(t *testing.T, id string, limits purramcp.Limits) {
	f := loadMCPFixture(t)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), version)
		catalog, err := discoverDefault(t, h, limits)
		require.NoError(t, err, "%s at %s: %+v accepted", id, version, limits)
		res, err := catalog.Registrations()[0].Run(t.Context(), argsA, purramcp.ToolContext{})
		require.NoError(t, err, "%s at %s", id, version)
		assert.Empty(t, res.ErrorCode, "%s at %s", id, version)
	})
}

// TestBehaviorB1_LoweredResultLimits: maxResultBytes 256 and
// maxContentBlocks 1 (rows H12, H13) are accepted.
func TestBehaviorB1_LoweredResultLimits(t *testing.T) {
	acceptedLimits(t, "B1", purramcp.Limits{MaxResultBytes: 256})
	acceptedLimits(t, "B1", purramcp.Limits{MaxContentBlocks: 1})
}

// TestBehaviorB2_Timeouts: timeouts of 100ms and 2s (the in-flight tests)
// are accepted.
func TestBehaviorB2_Timeouts(t *testing.T) {
	acceptedLimits(t, "B2", purramcp.Limits{Timeout: 100 * time.Millisecond})
	acceptedLimits(t, "B2", purramcp.Limits{Timeout: 2 * time.Second})
}

// TestBehaviorB3_CatalogLimitValues: maxPages 1, maxTools 1,
// maxCatalogBytes 64 and maxDescriptionBytes 1 are accepted as values: the
// first two bind the one-page fixture, the last two fail on its content
// (mcp_catalog_limit_exceeded after the list, never mcp_binding_invalid).
func TestBehaviorB3_CatalogLimitValues(t *testing.T) {
	acceptedLimits(t, "B3", purramcp.Limits{MaxPages: 1})
	acceptedLimits(t, "B3", purramcp.Limits{MaxTools: 1})
	f := loadMCPFixture(t)
	for _, limits := range []purramcp.Limits{{MaxCatalogBytes: 64}, {MaxDescriptionBytes: 1}} {
		h := sdkHarness(t, newSDKServer(t, nil, f.Tool), "")
		_, err := discoverDefault(t, h, limits)
		assert.Equal(t, "mcp_catalog_limit_exceeded", purramcp.CodeOf(err), "B3 %+v", limits)
		lists, _ := h.counts()
		assert.Equal(t, 1, lists, "B3 %+v: the value passed validation", limits)
	}
}

// TestBehaviorB4_SchemaBytes60: maxSchemaBytes 60 is accepted: a 17-byte
// schema binds, the 74-byte declared one fails (F13).
func TestBehaviorB4_SchemaBytes60(t *testing.T) {
	small := json.RawMessage(`{"name":"remote.search","inputSchema":{"type":"object"}}`)
	forEachVersion(t, func(t *testing.T, version string) {
		h := sdkHarness(t, newSDKServer(t, nil, small), version)
		catalog, err := discoverDefault(t, h, purramcp.Limits{MaxSchemaBytes: 60})
		require.NoError(t, err, "B4 at %s", version)
		assert.Len(t, catalog.Registrations(), 1, "B4 at %s", version)
	})
}

// TestContractLimits_ZeroDefaultRange: the contract limits follow the same
// rule as Limits through one resolver: zero takes the A2.1 default, 1
// through the default is kept, 0 − 1 and default + 1 fail CodeSchemaInvalid.
func TestContractLimits_ZeroDefaultRange(t *testing.T) {
	newContract := func(l purramcp.ContractLimits) (*purramcp.Contract, error) {
		return purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1",
			Schema: map[string]any{"type": "object"}, Limits: l})
	}
	defaults := purramcp.ContractLimits{SchemaBytes: 65536, OutputBytes: 1048576, SchemaDepth: 32, OutputDepth: 64,
		SchemaNodes: 4096, OutputNodes: 65536, ValidationSteps: 100000}
	c, err := newContract(purramcp.ContractLimits{})
	require.NoError(t, err)
	assert.Equal(t, defaults, c.Limits(), "zero means default")
	fields := map[string]func(*purramcp.ContractLimits) *int{
		"SchemaBytes":     func(l *purramcp.ContractLimits) *int { return &l.SchemaBytes },
		"OutputBytes":     func(l *purramcp.ContractLimits) *int { return &l.OutputBytes },
		"SchemaDepth":     func(l *purramcp.ContractLimits) *int { return &l.SchemaDepth },
		"OutputDepth":     func(l *purramcp.ContractLimits) *int { return &l.OutputDepth },
		"SchemaNodes":     func(l *purramcp.ContractLimits) *int { return &l.SchemaNodes },
		"OutputNodes":     func(l *purramcp.ContractLimits) *int { return &l.OutputNodes },
		"ValidationSteps": func(l *purramcp.ContractLimits) *int { return &l.ValidationSteps },
	}
	for name, field := range fields {
		t.Run(name, func(t *testing.T) {
			def := *field(&defaults)
			for _, v := range []int{1, def} {
				var l purramcp.ContractLimits
				*field(&l) = v
				want := defaults
				*field(&want) = v
				if v == 1 && (name == "SchemaBytes" || name == "SchemaNodes") {
					continue // {"type":"object"} itself is 3 nodes and 22 bytes
				}
				c, err := newContract(l)
				require.NoError(t, err, "%s = %d", name, v)
				assert.Equal(t, want, c.Limits(), "%s = %d", name, v)
			}
			for _, v := range []int{-1, def + 1} {
				var l purramcp.ContractLimits
				*field(&l) = v
				_, err := newContract(l)
				var ce *purramcp.ContractError
				require.ErrorAs(t, err, &ce, "%s = %d", name, v)
				assert.Equal(t, purramcp.CodeSchemaInvalid, ce.Code, "%s = %d", name, v)
			}
		})
	}
}
