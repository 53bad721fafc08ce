package purramcp

import (
	"errors"

	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/strictjson"
)

// JSONIdentityProfile names the content digest computed by IdentityDigest
// and by every revision, schema and contract digest.
const JSONIdentityProfile = identity.Profile

// identityLimits are the default output limits that bound every identity
// input: depth 64, 65536 nodes, 1 MiB detached.
var identityLimits = strictjson.Limits{Depth: defaultOutputDepth, Nodes: defaultOutputNodes, Bytes: defaultOutputBytes}

// errIdentityInput is the only error IdentityDigest returns. Like the
// reference's it is a plain error, not a coded one: the digest is a
// content identity, not a contract check.
var errIdentityInput = errors.New("purramcp: value outside the purra.json-identity/v1 domain")

// IdentityDigest returns the purra.json-identity/v1 digest of value as 64
// lowercase hex characters: SHA-256 over the profile name, a LF and a typed
// encoding in which object keys are sorted by code point and every number
// is its binary64 bit pattern. It is a content identity, not a credential.
//
// value may be nil, a bool, a string, any Go number or json.Number, []any,
// map[string]any, or json.RawMessage (parsed strictly: no duplicate keys,
// lone surrogates or unsafe integers), nested in any combination. It fails for anything else, for invalid
// UTF-8, NaN, ±Inf, integral numbers beyond ±(2^53−1), duplicate keys or
// bad syntax in raw JSON, and for values over depth 64, 65536 nodes or
// 1 MiB of detached bytes. Keys order and number spelling do not change the
// digest. It is safe for concurrent use and does not modify value.
func IdentityDigest(value any) (string, error) {
	d, err := identity.DigestOf(value, identityLimits)
	if err != nil {
		return "", errIdentityInput
	}
	return d, nil
}
