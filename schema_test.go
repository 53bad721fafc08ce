package purramcp_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// TestContractError_NilTargetMatchesNothing: errors.Is with a typed-nil
// *ContractError target (or receiver) reports false instead of panicking; a
// nil *ContractError has no code, so it matches nothing.
func TestContractError_NilTargetMatchesNothing(t *testing.T) {
	_, err := purramcp.NewContract(purramcp.ContractOptions{SchemaID: "s", SchemaVersion: "1", Schema: map[string]any{"type": "string"}})
	require.Error(t, err)
	var nilTarget *purramcp.ContractError
	require.NotPanics(t, func() { assert.False(t, errors.Is(err, nilTarget)) })
	require.NotPanics(t, func() { assert.False(t, nilTarget.Is(err)) })
	require.NotPanics(t, func() {
		assert.False(t, errors.Is(fmt.Errorf("w: %w", nilTarget), &purramcp.ContractError{Code: purramcp.CodeSchemaInvalid}))
	})
	assert.True(t, errors.Is(err, &purramcp.ContractError{Code: purramcp.CodeSchemaInvalid}), "a real target still matches")
}
