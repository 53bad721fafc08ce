package fleet

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// dialAt sets up one session as dial does, at protocol version pin when
// the server still speaks it. pin is the version a lock recorded for the
// server ("" or a version go-sdk does not speak: no pin). A server that
// refuses pin in the handshake (a JSON-RPC error, or a version the monitor
// refuses) or answers another version is connected again without a pin,
// at the newest version both speak, so that the catalog discovered on the
// session shows the change of version as drift. Any other failure is
// returned as it is.
func dialAt(ctx context.Context, sc ServerConfig, ring *stderrRing, timeout time.Duration,
	info *mcp.Implementation, copts *mcp.ClientOptions, k *oauth.Keeper, pin string) (*conn, error) {
	if !pinnable(pin) {
		return dial(ctx, sc, ring, timeout, info, copts, k, "")
	}
	c, err := dial(ctx, sc, ring, timeout, info, copts, k, pin)
	switch {
	case err == nil && c.monitor.ProtocolVersion() == pin:
		return c, nil
	case err == nil:
		c.close() // the server answered another version
	case !eraRefused(err):
		return nil, err
	}
	return dial(ctx, sc, ring, timeout, info, copts, k, "")
}

// pinnable reports whether pin is a version to ask for: one go-sdk speaks
// other than its newest, which it asks for without a pin.
func pinnable(pin string) bool {
	versions := mcp.SupportedProtocolVersions()
	return pin != "" && pin != versions[0] && slices.Contains(versions, pin)
}

// eraRefused reports whether a failed handshake was the server refusing
// the version asked for: it answered with a JSON-RPC error, or with a
// version the monitor does not accept.
func eraRefused(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) || purramcp.CodeOf(err) == purramcp.CodeProtocolUnsupported
}
