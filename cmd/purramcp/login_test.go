package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/oauthtest"
	"purra.dev/purramcp/oauth"
)

// runAuthCmd runs the command in-process like runIn, with browse playing
// the user at login, bounded by 30 s.
func runAuthCmd(t *testing.T, browse func(context.Context, string) error, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, &streams{out: &out, err: &errOut, browse: browse})
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// oauthConfig writes a config in dir with the http server "remote" at url
// binding echo, and the stdio server "local".
func oauthConfig(t *testing.T, dir, url string) string {
	t.Helper()
	path := filepath.Join(dir, "purramcp.json")
	cfg := fmt.Sprintf(`{"servers": {
  "remote": {"type": "http", "url": %q, "tools": {"echo": {"as": "echo"}}},
  "local": {"command": %q, "tools": %s}}}`, url, stdioServer, unitsTools)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
	return path
}

// TestLogin_LockStatusLogout: login stores the tokens (0600) without
// showing them, auth status reports them, lock discovers the protected
// server with them, logout deletes them; no token reaches any output or
// the lock file.
func TestLogin_LockStatusLogout(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(oauth.DirEnv, filepath.Join(dir, "tokens"))
	srv := oauthtest.New(t, oauthtest.Options{})
	config := oauthConfig(t, dir, srv.URL)
	lockPath := filepath.Join(dir, "purramcp-lock.json")

	var outputs []string
	login := runAuthCmd(t, oauthtest.Browse, "login", "remote", "--config", config, "--no-browser")
	require.Equal(t, exitOK, login.code, login.stderr)
	assert.Contains(t, login.stdout, "signed in to "+srv.URL)
	assert.Contains(t, login.stdout, "refresh: true")
	assert.Contains(t, login.stderr, srv.Issuer+oauthtest.PathAuthorize+"?")
	outputs = append(outputs, login.stdout, login.stderr)

	files, err := filepath.Glob(filepath.Join(dir, "tokens", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	creds, err := (&oauth.FileStore{Dir: filepath.Join(dir, "tokens")}).Load(t.Context(), srv.URL)
	require.NoError(t, err)
	require.NotNil(t, creds)

	status := runAuthCmd(t, nil, "auth", "status", "--config", config, "--json")
	require.Equal(t, exitOK, status.code, status.stderr)
	var st []authStatus
	require.NoError(t, json.Unmarshal([]byte(status.stdout), &st))
	require.Len(t, st, 1)
	assert.Equal(t, authStatus{Server: "remote", URL: srv.URL, State: "valid", ValidUntil: creds.Expiry.UTC().Format(time.RFC3339),
		Refresh: true, Scopes: []string{}, Issuer: srv.Issuer, ClientID: creds.ClientID}, st[0])
	outputs = append(outputs, status.stdout, status.stderr)
	text := runAuthCmd(t, nil, "auth", "status", "--config", config)
	require.Equal(t, exitOK, text.code)
	assert.Equal(t, fmt.Sprintf("remote: valid (issuer %s, scopes \"\", refresh true, valid until %s)\n", srv.Issuer, st[0].ValidUntil), text.stdout)
	outputs = append(outputs, text.stdout, text.stderr)

	lock := runAuthCmd(t, nil, "lock", "--config", config, "--lock", lockPath)
	require.Equal(t, exitOK, lock.code, lock.stderr)
	lockFile, err := os.ReadFile(lockPath)
	require.NoError(t, err)
	assert.Contains(t, string(lockFile), `"echo"`)
	assert.Equal(t, 0, srv.ToolCalls("echo"), "lock lists, never calls")
	outputs = append(outputs, lock.stdout, lock.stderr, string(lockFile))
	check := runAuthCmd(t, nil, "lock", "--check", "--config", config, "--lock", lockPath)
	require.Equal(t, exitOK, check.code, check.stderr)
	outputs = append(outputs, check.stdout, check.stderr)

	for _, out := range outputs {
		for _, secret := range []string{creds.AccessToken, creds.RefreshToken} {
			assert.NotContains(t, out, secret)
		}
	}

	logout := runAuthCmd(t, nil, "logout", "remote", "--config", config)
	require.Equal(t, exitOK, logout.code, logout.stderr)
	assert.Equal(t, "signed out of "+srv.URL+"\n", logout.stdout)
	again := runAuthCmd(t, nil, "logout", "remote", "--config", config)
	assert.Equal(t, "no credentials were stored for "+srv.URL+"\n", again.stdout)
	none := runAuthCmd(t, nil, "auth", "status", "--config", config)
	assert.Equal(t, "remote: none\n", none.stdout)

	// Without a token the protected server is a failed server (exit 1)
	// whose line says how to sign in.
	noToken := runAuthCmd(t, nil, "lock", "--check", "--config", config, "--lock", lockPath)
	assert.Equal(t, exitFail, noToken.code)
	assert.Contains(t, noToken.stderr, "remote: failed: the server asks for an OAuth sign-in (mcp_auth_required): run `purramcp login remote`\n")
}

// TestLogin_Failures: usage and config errors are 2; a denied sign-in and
// one that never comes back are 1, with the code or the timeout.
func TestLogin_Failures(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(oauth.DirEnv, filepath.Join(dir, "tokens"))
	srv := oauthtest.New(t, oauthtest.Options{})
	config := oauthConfig(t, dir, srv.URL)

	r := runAuthCmd(t, oauthtest.Browse, "login", "nosuch", "--config", config)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `no server "nosuch"`)
	r = runAuthCmd(t, oauthtest.Browse, "login", "local", "--config", config)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "not an http server")
	r = runAuthCmd(t, oauthtest.Browse, "login", "--config", config)
	assert.Equal(t, exitUsage, r.code)

	srv.Deny(true)
	r = runAuthCmd(t, oauthtest.Browse, "login", "--url", srv.URL)
	assert.Equal(t, exitFail, r.code)
	assert.Equal(t, "purramcp login: "+srv.URL+": "+purramcp.CodeAuthDenied+"\n", lastLine(r.stderr))

	never := func(context.Context, string) error { return nil } // the user never signs in
	start := time.Now()
	r = runAuthCmd(t, never, "login", "--url", srv.URL, "--timeout", "300ms")
	assert.Equal(t, exitFail, r.code)
	assert.Equal(t, "purramcp login: "+srv.URL+": no sign-in within --timeout 300ms\n", lastLine(r.stderr))
	assert.Less(t, time.Since(start), 5*time.Second)
	files, _ := filepath.Glob(filepath.Join(dir, "tokens", "*.json"))
	assert.Empty(t, files, "nothing stored")
}

// lastLine is the last line of text, with its newline.
func lastLine(text string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
	return strings.TrimSuffix(lines[len(lines)-1], "\n") + "\n"
}
