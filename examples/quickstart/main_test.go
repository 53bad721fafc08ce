package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"purra.dev/purramcp"
)

// Digests of the two catalogs the tour discovers. They are content
// identities: they change only when a schema, description, binding or the
// negotiated protocol version does.
const (
	digestBefore = "9c03b124d382a47bf114c7a0d45a6b3c1ec3d9e0f0c4fa51fb59f5fdd496651e"
	digestAfter  = "81852337d3e9af9bbea1ff5e62dd4ced79125322d50da0ac60fdcd14aee754dd"
)

func TestQuickstart(t *testing.T) {
	defer goleak.VerifyNone(t)
	var first, second bytes.Buffer
	require.NoError(t, run(&first), "first run")
	require.NoError(t, run(&second), "second run")
	out := first.String()
	assert.Equal(t, out, second.String(), "the output must be identical on every run")

	// The lines that matter, in this order.
	want := []string{
		"   negotiated protocol 2026-07-28",
		"   DiscoverTools: mcp_schema_unsupported (nothing is bound; the schema is never weakened)",
		"   revisionDigest " + digestBefore,
		`   search_docs {"q":"cat","limit":5}`,
		"     -> ok, 1 tools/call sent",
		`        {"text":["2 of 3 titles match"],"structured":{"count":2,"titles":["Cats 101","The science of cat naps"]}}`,
		`   search_docs {"q":"cat","limit":"five"}`,
		"     -> mcp_invalid_arguments, 0 tools/call sent",
		"        (host-side detail: type at $.limit)",
		`   get_doc {"id":"cats-101"}`,
		"     -> ok, 1 tools/call sent",
		`   get_doc {"id":"private/salaries"}`,
		"     -> mcp_scope_denied, 0 tools/call sent",
		`   get_doc {"id":"missing"}`,
		"     -> mcp_tool_error, 1 tools/call sent",
		"   catalog.Stale() = true",
		"     -> mcp_catalog_stale, 0 tools/call sent",
		"   revisionDigest " + digestAfter,
		"   changed: docs_stats: description, outputSchema",
		`        {"text":["3 documents"],"structured":{"documents":3,"words":22}}`,
		"     -> mcp_connection_closed, 0 tools/call sent",
	}
	lines := strings.Split(out, "\n")
	at := 0
	for _, line := range want {
		i := indexFrom(lines, at, line)
		if !assert.GreaterOrEqual(t, i, 0, "line %q missing after line %d of:\n%s", line, at, out) {
			return
		}
		at = i + 1
	}
}

// TestQuickstart_PrintedSnapshot checks that the snapshot the tour prints is
// valid JSON whose identity digest (without revisionDigest) is the printed
// revisionDigest: what a reviewer reads is what was hashed.
func TestQuickstart_PrintedSnapshot(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	require.NoError(t, run(&out))
	text := out.String()
	start := strings.Index(text, "\n   {\n")
	end := strings.Index(text, "\n   }\n")
	require.True(t, start >= 0 && end > start, "no snapshot in:\n%s", text)
	var snapshot map[string]any
	require.NoError(t, json.Unmarshal([]byte(text[start:end+5]), &snapshot), "printed snapshot")
	assert.Equal(t, digestBefore, snapshot["revisionDigest"], "revisionDigest member")
	delete(snapshot, "revisionDigest")
	digest, err := purramcp.IdentityDigest(snapshot)
	require.NoError(t, err)
	assert.Equal(t, digestBefore, digest, "digest of the printed snapshot")
	entries, _ := snapshot["entries"].([]any)
	assert.Len(t, entries, 3, "bound tools")
}

// indexFrom returns the index of the first line at or after from that equals
// want, or -1.
func indexFrom(lines []string, from int, want string) int {
	for i := from; i < len(lines); i++ {
		if lines[i] == want {
			return i
		}
	}
	return -1
}
