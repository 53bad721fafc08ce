package purramcp

import (
	"purra.dev/purramcp/internal/cache"
	"purra.dev/purramcp/internal/strictjson"
)

// schemaCache keeps the compiled remote schemas of one monitor's session
// (cache.Schemas), keyed also by the discovery's Limits and SchemaPolicy.
type schemaCache struct {
	cache.Schemas[schemaParams, *Contract]
}

// schemaParams is what a compiled remote schema depends on besides the
// schema.
type schemaParams struct {
	limits Limits
	policy SchemaPolicy
}

// remoteContract is sizedRemoteContract(schema, size, limits, policy)
// through the monitor's schema cache: the same contract and snapshot for an
// equal schema under equal limits and policy, and the same fault otherwise.
// size must be schema's exact jssize size. A nil cache compiles uncached.
func (c *schemaCache) remoteContract(schema any, size int, limits Limits, policy SchemaPolicy) (*Contract, *strictjson.Object, error) {
	root, ok := schema.(map[string]any)
	if c == nil || !ok || size > limits.MaxSchemaBytes {
		// Faults; and the size check keeps the hash walk within the limit.
		return sizedRemoteContract(schema, size, limits, policy)
	}
	key, ok := c.Key(root, size, schemaParams{limits: limits, policy: policy})
	if !ok {
		return sizedRemoteContract(schema, size, limits, policy)
	}
	if e := c.Lookup(key, root); e != nil {
		return e.Value, e.Snap, nil
	}
	contract, snap, err := sharedRemoteContract(schema, size, limits, policy, c.Sharing())
	if err == nil {
		c.Store(key, &cache.Entry[*Contract]{Value: contract, Snap: snap, Size: size})
	}
	return contract, snap, err
}
