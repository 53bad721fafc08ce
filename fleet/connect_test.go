package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

func TestConnect_DiscoversAsTheFleetDoes(t *testing.T) {
	m := newMemServer(t)
	sc := memConfig(m, "", 0)
	s, err := fleet.Connect(t.Context(), sc, fleet.ConnectOptions{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, "", s.Stderr(), "no child")
	opts := sc.DiscoveryOptions()
	opts.Monitor = s.Monitor()
	catalog, err := purramcp.DiscoverTools(t.Context(), s.ClientSession(), "units", sc.Bindings(), opts)
	require.NoError(t, err)
	assert.Equal(t, unitsSnapshot(t, "units"), catalog.Snapshot())
	var pages int
	snap, err := s.Discover(t.Context(), "units", func(_ context.Context, e purramcp.Event) { pages += e.Pages })
	require.NoError(t, err)
	assert.Equal(t, catalog.Snapshot(), snap, "Discover binds as the config says")
	assert.Equal(t, 1, pages)
	sc.Tools["units.list"] = fleet.ToolConfig{As: "changed"} // Connect copied sc
	again, err := s.Discover(t.Context(), "units", nil)
	require.NoError(t, err)
	assert.Equal(t, snap, again)
	s.Close()
	s.Close() // idempotent
	_, err = s.ClientSession().ListTools(t.Context(), nil)
	assert.Error(t, err, "the session is closed")
}

func TestConnect_Errors(t *testing.T) {
	_, err := fleet.Connect(t.Context(), fleet.ServerConfig{}, fleet.ConnectOptions{})
	var cfgErr *fleet.ConfigError
	require.ErrorAs(t, err, &cfgErr, "nothing to reach")
	assert.ErrorIs(t, err, purramcp.ErrBindingInvalid)
	_, err = fleet.Connect(t.Context(), memConfig(newMemServer(t), "", 0), fleet.ConnectOptions{Timeout: -1})
	require.ErrorAs(t, err, &cfgErr)
	assert.Equal(t, "Timeout", cfgErr.Path)

	down := newMemServer(t)
	down.set("", true)
	_, err = fleet.Connect(t.Context(), memConfig(down, "", 0), fleet.ConnectOptions{})
	var ce *fleet.ConnectError
	require.ErrorAs(t, err, &ce)
	assert.EqualError(t, ce.Err, "memServer: down")
	assert.False(t, ce.TimedOut)

	w := newWedged(t)
	start := time.Now()
	_, err = fleet.Connect(t.Context(), fleet.ServerConfig{Dial: w.dial}, fleet.ConnectOptions{Timeout: 200 * time.Millisecond})
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.TimedOut, "no answer to the handshake")
	assert.Less(t, time.Since(start), 5*time.Second)

	old := newMemServer(t)
	old.versions = []string{purramcp.ProtocolVersion20241105}
	_, err = fleet.Connect(t.Context(), memConfig(old, "", 0), fleet.ConnectOptions{})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, purramcp.CodeProtocolUnsupported, purramcp.CodeOf(err))
	assert.Equal(t, purramcp.ProtocolVersion20241105, ce.Offered)
	legacy := memConfig(old, "", 0)
	legacy.LegacyProtocols = true
	s, err := fleet.Connect(t.Context(), legacy, fleet.ConnectOptions{})
	require.NoError(t, err)
	assert.Equal(t, purramcp.ProtocolVersion20241105, s.Monitor().ProtocolVersion())
	s.Close()

	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = fleet.Connect(canceled, fleet.ServerConfig{Dial: newWedged(t).dial}, fleet.ConnectOptions{})
	require.ErrorAs(t, err, &ce)
	assert.False(t, ce.TimedOut, "the caller's ctx ended, not the timeout")
}

func TestConnect_ChildExitCodeAndStderr(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	sc := fleet.ServerConfig{Command: "sh", Args: []string{"-c", `echo "bad token $TOKEN" >&2; exit 3`},
		Env: map[string]string{"TOKEN": "tok-1234"}}
	_, err := fleet.Connect(t.Context(), sc, fleet.ConnectOptions{Secrets: []string{"tok-1234"}, Timeout: 5 * time.Second})
	var ce *fleet.ConnectError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 3, ce.ExitCode)
	assert.Equal(t, "bad token ***\n", ce.Stderr)
	assert.False(t, ce.TimedOut)
	assert.True(t, errors.Is(err, ce.Err))
	assert.Equal(t, fmt.Sprintf("fleet: connect: %v", ce.Err), err.Error())
}
