package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	v := buildVersions()
	assert.Equal(t, runtime.Version(), v.Go)
	assert.Equal(t, "v1.8.0", v.GoSDK)
	// Golden files hold the shape, with the build's own versions as
	// placeholders.
	norm := func(s string) string {
		return strings.NewReplacer(v.Version, "$VERSION", v.GoSDK, "$GOSDK", v.Go, "$GO").Replace(s)
	}
	r := runIn(t, t.TempDir(), "version")
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "version.txt", norm(r.stdout))
	r = runIn(t, t.TempDir(), "version", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	golden(t, "version.json", norm(r.stdout))
	var got versionInfo
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, v, got)
	r = runIn(t, t.TempDir(), "version", "extra")
	assert.Equal(t, exitUsage, r.code)
}
