package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// TestServe_RecoversAfterLogin: a running `purramcp serve` whose
// OAuth-protected server has no token serves the other servers' tools and
// reports the protected one unauthorized (never opening a browser); a
// `purramcp login` in another command brings its tools in without a
// restart, and the client is told of the change. No token reaches serve's
// output.
func TestServe_RecoversAfterLogin(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	t.Setenv(oauth.DirEnv, tokens)
	srv := oauthtest.New(t, oauthtest.Options{})
	config := oauthConfig(t, dir, srv.URL)
	lockPath := filepath.Join(dir, "purramcp-lock.json")

	// Approve both servers' catalogs, then forget the token.
	for _, args := range [][]string{
		{"login", "remote", "--config", config, "--no-browser"},
		{"lock", "--config", config, "--lock", lockPath},
		{"logout", "remote", "--config", config},
	} {
		r := runAuthCmd(t, oauthtest.Browse, args...)
		require.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
	}

	opened := 0
	s := startServe(t, ctx, filepath.Dir(config))
	assert.Equal(t, []string{"units_convert", "units_list"}, serveToolNames(t, ctx, s.session))
	assert.Contains(t, s.stderr.String(), "purramcp serve: server remote: unauthorized (mcp_auth_required)")

	login := runAuthCmd(t, func(ctx context.Context, u string) error { opened++; return oauthtest.Browse(ctx, u) },
		"login", "remote", "--config", config, "--no-browser")
	require.Equal(t, exitOK, login.code, login.stderr)
	assert.Equal(t, 1, opened, "the login played the user once; serve never did")
	require.Eventually(t, func() bool { return s.changes.Load() > 0 }, 20*time.Second, 20*time.Millisecond,
		"serve told the client of no change; stderr: %s", s.stderr)
	assert.Equal(t, []string{"echo", "units_convert", "units_list"}, serveToolNames(t, ctx, s.session))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"}}`,
		serveCall(t, ctx, s.session, "echo", `{"text":"hi"}`))
	assert.Equal(t, 1, srv.ToolCalls("echo"))

	creds, err := (&oauth.FileStore{Dir: tokens}).Load(ctx, srv.URL)
	require.NoError(t, err)
	require.NotNil(t, creds)
	require.NoError(t, s.session.Close())
	assert.Equal(t, exitOK, s.wait(t))
	for _, secret := range []string{creds.AccessToken, creds.RefreshToken} {
		require.NotEmpty(t, secret)
		assert.NotContains(t, s.stderr.String(), secret)
	}
	lock, err := os.ReadFile(lockPath)
	require.NoError(t, err)
	assert.False(t, slices.ContainsFunc([]string{creds.AccessToken, creds.RefreshToken},
		func(s string) bool { return strings.Contains(string(lock), s) }))
}
