package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func TestResolveLimits(t *testing.T) {
	d := purramcp.DefaultLimits()
	assert.Equal(t, d, resolveLimits(purramcp.Limits{}))
	l := resolveLimits(purramcp.Limits{MaxTools: 3, Timeout: time.Second})
	assert.Equal(t, 3, l.MaxTools)
	assert.Equal(t, time.Second, l.Timeout)
	assert.Equal(t, d.MaxPages, l.MaxPages)
}

func TestServerEndpoint_HidesTheQuery(t *testing.T) {
	ep := serverEndpoint(fleet.ServerConfig{URL: "https://h/mcp?key=abc", Headers: map[string]string{"X-Key": "k-123"}, LegacyProtocols: true}, []string{"s-123"})
	assert.Equal(t, "https://h/mcp?key=abc", ep.sc.URL)
	assert.True(t, ep.sc.LegacyProtocols)
	assert.ElementsMatch(t, []string{"s-123", "key=abc", "k-123"}, ep.secrets())
}
