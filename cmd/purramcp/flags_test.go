package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

func TestParsePolicy(t *testing.T) {
	p, err := parsePolicy([]string{"extended", "dialect"})
	require.NoError(t, err)
	assert.Equal(t, purramcp.SchemaPolicy{DialectEquivalence: true, ExtendedKeywords: true}, p)
	assert.Equal(t, []string{"dialect", "extended"}, wordsOf(p))
	assert.Equal(t, `"policy": ["dialect", "extended"]`, policyJSON(p))
	assert.Equal(t, `"policy": []`, policyJSON(purramcp.SchemaPolicy{}))
	for _, bad := range [][]string{{"x"}, {"annotations", "annotations"}, {""}} {
		_, err := parsePolicy(bad)
		assert.Error(t, err, "%v", bad)
	}
	// Every word names what purramcp.SchemaPolicy.String names.
	all, err := parsePolicy([]string{"dialect", "annotations", "extended"})
	require.NoError(t, err)
	assert.Equal(t, "dialect+annotations+extended", all.String())
}
