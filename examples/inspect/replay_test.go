package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// TestInspectSavedCatalog: a capture served from memory is inspected over
// the live path, and ExtendedKeywords binds the $defs/$ref catalog.
func TestInspectSavedCatalog(t *testing.T) {
	defer goleak.VerifyNone(t)
	path := "../../testdata/catalogs/notionhq__notion-mcp-server.json"
	for _, tc := range []struct {
		policy purramcp.SchemaPolicy
		want   string
	}{
		{purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true}, "0 of 24 tools bindable"},
		{purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true}, "24 of 24 tools bindable"},
	} {
		transport, stop, err := replayServer(t.Context(), path)
		require.NoError(t, err)
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), transport, tc.policy, &out, false))
		stop()
		assert.Contains(t, out.String(), "policy "+tc.policy.String()+", ")
		assert.Contains(t, out.String(), tc.want)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"tools":[{"name":"t","inputSchema":{"type":"array"}}]}`), 0o600))
	_, _, err := replayServer(t.Context(), bad)
	assert.ErrorContains(t, err, "object input schemas")
}
