package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func TestParseMixed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		json bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, false},
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true},
		{[]string{"--json", "a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "--", "--json", "b"}, []string{"a", "--json", "b"}, false},
		{[]string{"--", "--json"}, []string{"--json"}, false},
		{nil, nil, false},
	} {
		s := &streams{out: io.Discard, err: io.Discard}
		fs := newFlags("t", "", "", s)
		asJSON := fs.Bool("json", false, "")
		pos, code, ok := parseMixed(fs, tc.args)
		require.True(t, ok, "%v", tc.args)
		assert.Equal(t, exitOK, code)
		assert.Equal(t, tc.pos, pos, "%v", tc.args)
		assert.Equal(t, tc.json, *asJSON, "%v", tc.args)
	}
	fs := newFlags("t", "", "", &streams{out: io.Discard, err: io.Discard})
	_, code, ok := parseMixed(fs, []string{"a", "--nope"})
	assert.False(t, ok)
	assert.Equal(t, exitUsage, code)
}

func TestParsePolicy(t *testing.T) {
	p, err := parsePolicy([]string{"extended", "dialect"})
	require.NoError(t, err)
	assert.Equal(t, purramcp.SchemaPolicy{DialectEquivalence: true, ExtendedKeywords: true}, p)
	assert.Equal(t, []string{"dialect", "extended"}, fleet.PolicyWords(p))
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
