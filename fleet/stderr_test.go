package fleet

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStderrRing_KeepsTheRedactedTail(t *testing.T) {
	secret := "s3cret-" + strings.Repeat("x", 100)
	r := newStderrRing([]string{"tok", secret})
	_, _ = r.Write([]byte("start " + secret + " tok\n"))
	assert.Equal(t, "start *** ***\n", r.String())

	// A secret split across writes and across the 4 KiB boundary is still
	// redacted whole: the ring keeps the longest secret's length more.
	r = newStderrRing([]string{secret})
	filler := strings.Repeat("a", stderrBytes-5)
	_, _ = r.Write([]byte(secret[:50]))
	_, _ = r.Write([]byte(secret[50:] + filler))
	assert.Equal(t, "***"+filler, r.String(), "the secret overlapped the last 4 KiB: redacted whole")
	_, _ = r.Write([]byte(strings.Repeat("z", 200)))
	assert.Equal(t, filler[len(filler)-(stderrBytes-200):]+strings.Repeat("z", 200), r.String(), "once past the tail, nothing of it is left")

	// The tail starts at a rune boundary.
	r = newStderrRing(nil)
	_, _ = r.Write([]byte("é" + strings.Repeat("b", stderrBytes-1)))
	assert.Equal(t, strings.Repeat("b", stderrBytes-1), r.String())
	_, _ = r.Write([]byte(strings.Repeat("c", 10*stderrBytes)))
	assert.Equal(t, strings.Repeat("c", stderrBytes), r.String())
}

func TestPath_Rendering(t *testing.T) {
	for _, tc := range []struct {
		p    path
		want string
	}{
		{nil, ""},
		{path{"servers", "fs", "tools", "remote.search", "as"}, `servers.fs.tools["remote.search"].as`},
		{path{"servers", "fs", "args", 2}, "servers.fs.args[2]"},
		{path{"mcpServers", "a b", "env", "X-\"Q\""}, `mcpServers["a b"].env["X-\"Q\""]`},
		{path{"servers", "9lives"}, `servers["9lives"]`},
		{path{"servers", ""}, `servers[""]`},
		{path{0, "a"}, "[0].a"},
	} {
		assert.Equal(t, tc.want, tc.p.String())
	}
}
