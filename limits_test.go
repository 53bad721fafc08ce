package purramcp_test

import (
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

// TestBehaviorB_LimitRanges: each field 0, 1..default; Timeout 1ms..5m
// (reference-behaviors.md B1–B4, §5.1).
func TestBehaviorB_LimitRanges(t *testing.T) {
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
