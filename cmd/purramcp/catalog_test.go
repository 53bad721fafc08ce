package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCatalog_SavedCapture: a capture served from memory is inspected over
// the live path; extended keywords bind the $defs/$ref catalog.
func TestCatalog_SavedCapture(t *testing.T) {
	dir := t.TempDir()
	capture := "../../testdata/catalogs/notionhq__notion-mcp-server.json"
	for _, tc := range []struct {
		policy, want string
	}{
		{"dialect,annotations", `0 of 24 tools bind under "policy": ["dialect", "annotations"]`},
		{"dialect,annotations,extended", `24 of 24 tools bind under "policy": ["dialect", "annotations", "extended"]`},
	} {
		r := runIn(t, dir, "inspect", "--policy", tc.policy, "--catalog", capture)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "the server, protocol 2026-07-28: "+tc.want+"\n")
	}
}

func TestCatalog_BadCaptures(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"array.json", `{"tools":[{"name":"t","inputSchema":{"type":"array"}}]}`, "tools[0]: go-sdk serves only input schemas of type object"},
		{"text.json", `not json`, "not a tools/list capture"},
		{"big.json", "", "larger than 16777216 bytes"},
	} {
		path := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(path, []byte(tc.text), 0o600))
		if tc.name == "big.json" {
			require.NoError(t, os.Truncate(path, maxCatalogFileBytes+1)) // sparse
		}
		_, err := loadCapture(path)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		r := runIn(t, dir, "inspect", "--catalog", path)
		assert.Equal(t, exitFail, r.code, tc.name)
		assert.True(t, strings.HasPrefix(r.stderr, "purramcp inspect: server: cannot connect: $DIR/"+tc.name+": "), r.stderr)
	}
}
