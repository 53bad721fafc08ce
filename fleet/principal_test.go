package fleet_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// TestFleet_ToolScopes: a tool with required scopes runs only for a
// Principal granting them all, before the host's own scope, which sees the
// same Principal; a tool without scopes runs for any caller. The digest is
// the one the same config without scopes admits.
func TestFleet_ToolScopes(t *testing.T) {
	m := newMemServer(t)
	plain := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": memConfig(m, "", 0)}}, fleet.Options{})
	cfg := memConfig(m, "", 0)
	cfg.Tools["units.convert"] = fleet.ToolConfig{As: "convert_units", Scopes: []string{"units:convert", "units:read"}}
	var seen []string
	f := startFleet(t, &fleet.Config{Servers: map[string]fleet.ServerConfig{"u": cfg}},
		fleet.Options{Scope: func(_, local string) purramcp.ScopeFunc {
			return func(ctx context.Context, _ map[string]any, _ purramcp.ToolContext) error {
				p, _ := fleet.PrincipalFrom(ctx)
				seen = append(seen, local+":"+p.Subject)
				return nil
			}
		}})
	assert.Equal(t, statusOf(t, plain, "u").Digest, statusOf(t, f, "u").Digest)

	call := func(ctx context.Context, name string) string {
		res, err := registration(t, f, name).Run(ctx, json.RawMessage(convertArgs), purramcp.ToolContext{})
		require.NoError(t, err)
		return res.ErrorCode
	}
	ctx := context.Background()
	full := fleet.WithPrincipal(ctx, fleet.Principal{Subject: "ann", Scopes: []string{"units:read", "units:convert"}})
	partial := fleet.WithPrincipal(ctx, fleet.Principal{Subject: "bob", Scopes: []string{"units:read"}})

	assert.Equal(t, purramcp.CodeScopeDenied, call(ctx, "convert_units"), "no principal")
	assert.Equal(t, purramcp.CodeScopeDenied, call(partial, "convert_units"), "a scope missing")
	assert.Equal(t, int32(0), m.calls.Load())
	assert.Equal(t, "", call(full, "convert_units"))
	assert.Equal(t, int32(1), m.calls.Load())
	assert.Equal(t, []string{"convert_units:ann"}, seen, "the host's scope ran only after the required scopes, with the principal")

	res, err := registration(t, f, "list_units").Run(ctx, nil, purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "", res.ErrorCode, "a tool without scopes runs for any caller")
}

func TestPrincipal_Grants(t *testing.T) {
	p := fleet.Principal{Subject: "s", Scopes: []string{"a", "b"}}
	assert.True(t, p.Grants(nil))
	assert.True(t, p.Grants([]string{"b", "a"}))
	assert.False(t, p.Grants([]string{"a", "c"}))
	assert.True(t, fleet.GrantedIn(context.Background(), nil))
	assert.False(t, fleet.GrantedIn(context.Background(), []string{"a"}))
	scopes := []string{"a"}
	ctx := fleet.WithPrincipal(context.Background(), fleet.Principal{Scopes: scopes})
	scopes[0] = "z" // the context keeps its own copy
	assert.True(t, fleet.GrantedIn(ctx, []string{"a"}))
	assert.True(t, fleet.Granted(nil, nil), "no scope required: granted without a principal")
	assert.False(t, fleet.Granted(nil, []string{"a"}), "a required scope without a principal fails closed")
	assert.True(t, fleet.Granted(&p, []string{"a"}))
	assert.False(t, fleet.Granted(&p, []string{"c"}))
	assert.False(t, fleet.Granted(&fleet.Principal{}, []string{"a"}))
}
