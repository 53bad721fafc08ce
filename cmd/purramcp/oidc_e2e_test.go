package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/oidctest"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/oauth"
)

// The figures of TestOIDC_EndToEnd: the access tokens' lifetime, how
// long the fleet is called through refreshes, and how often.
const (
	e2eTokenTTL   = 5 * time.Second
	e2eServeFor   = 60 * time.Second
	e2eCallEvery  = 500 * time.Millisecond
	e2eMinRefresh = 8
)

// TestOIDC_EndToEnd runs purramcp against a real authorization server,
// oidc-provider, none written here: the built command's login signs in
// through the provider's own login and consent pages (dynamic
// registration, PKCE, a resource indicator) and stores the tokens; lock
// binds the protected server's echo with them; a fleet on that lock
// serves a call every 500 ms for 60 s through the refreshes of 5 s JWT
// access tokens, each call reaching the server exactly once, with no
// consent and no refused grant (a replayed rotated refresh token would be
// one); the revoked refresh token takes the server to unauthorized, and a
// second login brings it back in the same fleet with the same digest.
// No code, verifier or token of any grant shows in the command's output,
// the lock file, the fleet's status or its audit log.
func TestOIDC_EndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("60 s of calls through token refreshes")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Second)
	defer cancel()
	start := time.Now()
	p := oidctest.Start(t, oidctest.Options{AccessTokenTTL: e2eTokenTTL})

	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	t.Setenv(oauth.DirEnv, tokens)
	config := filepath.Join(dir, "purramcp.json")
	lockPath := filepath.Join(dir, "purramcp-lock.json")
	require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`{"servers": {
  "remote": {"type": "http", "url": %q, "limits": {"timeout": "10s"}, "tools": {"echo": {"as": "echo"}}}}}`, p.URL)), 0o644))
	var outputs []string // everything purramcp wrote, for the canary grep

	login := loginBinary(t, ctx, p, dir, config)
	outputs = append(outputs, login.stdout, login.stderr)
	require.Equal(t, exitOK, login.code, login.stderr)
	assert.Equal(t, map[string]int{"registration": 1, "interaction:login": 1, "interaction:consent": 1,
		"grant:authorization_code": 1}, p.Counts())
	store := &recordingStore{Store: &oauth.FileStore{Dir: tokens}}
	creds, err := store.Load(ctx, p.URL)
	require.NoError(t, err)
	require.NotNil(t, creds)
	require.NotEmpty(t, creds.RefreshToken)
	assert.Equal(t, p.Issuer, creds.Issuer)
	assert.Equal(t, p.URL, creds.Resource)
	assert.Equal(t, []string{oidctest.Scope}, creds.Scopes)
	assert.InDelta(t, e2eTokenTTL.Seconds(), time.Until(creds.Expiry).Seconds(), 2)
	assert.Equal(t, loginOutput(p, creds), login.stdout)

	out, code := runBinary(t, dir, "lock", "--config", config, "--lock", lockPath)
	outputs = append(outputs, out)
	require.Equal(t, exitOK, code, out)
	lockFile, err := os.ReadFile(lockPath)
	require.NoError(t, err)
	outputs = append(outputs, string(lockFile))
	lock, err := fleet.LoadLock(lockPath)
	require.NoError(t, err)
	digest, ok := lock.Digest("remote")
	require.True(t, ok, "the lock binds remote")
	snap, ok := lock.Snapshot("remote")
	require.True(t, ok)
	require.Len(t, snap.Entries, 1)
	assert.Equal(t, "echo", snap.Entries[0].LocalName)
	assert.Equal(t, 0, p.ToolCalls(), "lock lists, never calls")

	cfg, err := fleet.LoadConfig(config)
	require.NoError(t, err)
	var audit syncBuffer
	f, err := fleet.New(cfg, fleet.Options{Lock: lock, TokenStore: store,
		Observer: purramcp.SlogObserver(slog.New(slog.NewJSONHandler(&audit, nil))),
		Backoff:  fleet.Backoff{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}})
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Start(ctx))
	statuses := func() string {
		b, err := json.Marshal(f.Status())
		require.NoError(t, err)
		outputs = append(outputs, string(b))
		return string(b)
	}
	st := waitStatus(t, ctx, f, fleet.StateReady)
	assert.Equal(t, digest, st.Digest)
	statuses()

	// A call every 500 ms for 60 s: twelve access-token lifetimes.
	var echo purramcp.ToolDefinition
	for _, d := range f.Registrations() {
		if d.Name == "echo" {
			echo = d
		}
	}
	require.NotNil(t, echo.Run, "echo is registered")
	refreshesBefore, consentsBefore := p.Count("grant:refresh_token"), p.Count("interaction:consent")
	served := time.Now()
	calls, failed := 0, map[string]int{}
	for time.Since(served) < e2eServeFor {
		res, err := echo.Run(ctx, json.RawMessage(`{"text":"hi"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		calls++
		if res.ErrorCode != "" {
			failed[res.ErrorCode]++
		}
		if calls%20 == 0 {
			statuses()
		}
		time.Sleep(e2eCallEvery)
	}
	servedFor := time.Since(served)
	refreshes := p.Count("grant:refresh_token") - refreshesBefore
	t.Logf("served %d calls in %v through %d refreshes (%d distinct access tokens at the server)",
		calls, servedFor.Round(time.Millisecond), refreshes, len(p.AccessTokens()))
	assert.Empty(t, failed, "every call succeeded")
	assert.Equal(t, calls, p.ToolCalls(), "every call reached the server exactly once")
	assert.GreaterOrEqual(t, refreshes, e2eMinRefresh)
	assert.GreaterOrEqual(t, len(p.AccessTokens()), e2eMinRefresh+1)
	assert.Equal(t, consentsBefore, p.Count("interaction:consent"), "no consent")
	assert.Equal(t, 1, p.Count("interaction:login"), "no sign-in")
	assert.Equal(t, 0, p.Errors(), "no grant refused: no refresh token replayed")
	assert.Equal(t, 0, p.Rejected(), "no expired or foreign token sent")
	saves := store.log()
	assert.GreaterOrEqual(t, len(saves), refreshes, "each refresh stored")
	seen := map[string]bool{creds.RefreshToken: true}
	for i, rt := range saves {
		assert.False(t, seen[rt], "save %d: the refresh token was rotated", i)
		seen[rt] = true
	}
	assert.Equal(t, fleet.StateReady, statusOf(t, f).State)
	statuses()

	// Revoked: oidc-provider revokes the whole grant with any of its
	// refresh tokens (every token of the grant, the grant itself), so the
	// keeper's next refresh, due before the access token in hand expires,
	// is refused and the server turns unauthorized then, whichever path
	// ran that refresh (the keeper's timer, or the transport before a
	// call). Calls meanwhile either reach the server once or are refused
	// without being sent. The entry is held around the load and the
	// revocation, so the token revoked is the one the keeper holds.
	unlock, err := store.Lock(ctx, p.URL)
	require.NoError(t, err)
	now, err := store.Load(ctx, p.URL)
	require.NoError(t, err)
	require.NoError(t, p.RevokeRefreshToken(ctx, now.ClientID, now.RefreshToken))
	unlock()
	revoked := time.Now()
	// The bound: the access token's own expiry (the refresh is due before
	// it), plus 5 s of slack for a loaded machine.
	deadline := now.Expiry.Add(5 * time.Second)
	ok200, refused := 0, map[string]int{}
	for statusOf(t, f).State != fleet.StateUnauthorized {
		require.True(t, time.Now().Before(deadline),
			"unauthorized by the revoked grant's access token expiry + 5 s (%v after the revocation); status %s; provider %v; calls refused %v",
			deadline.Sub(revoked).Round(time.Millisecond), statuses(), p.Counts(), refused)
		res, err := echo.Run(ctx, json.RawMessage(`{"text":"hi"}`), purramcp.ToolContext{})
		require.NoError(t, err)
		if res.ErrorCode == "" {
			ok200++
		} else {
			refused[res.ErrorCode]++
		}
		time.Sleep(100 * time.Millisecond)
	}
	unauthorizedAfter := time.Since(revoked)
	t.Logf("unauthorized %v after the revocation, the access token in hand ran until %v after it (%d calls served, refused %v)",
		unauthorizedAfter.Round(time.Millisecond), now.Expiry.Sub(revoked).Round(time.Millisecond), ok200, refused)
	assert.Equal(t, calls+ok200, p.ToolCalls(), "no refused call was sent or replayed")
	for c := range refused {
		assert.Contains(t, []string{purramcp.CodeUnauthorized, purramcp.CodeConnectionClosed}, c)
	}
	assert.Equal(t, 1, p.Count("grant_error:InvalidGrant"), "the revoked grant is asked once")
	st = statusOf(t, f)
	assert.Equal(t, purramcp.CodeAuthExpired, st.Code)
	assert.Empty(t, f.Registrations())
	statuses()

	// The second login: the provider remembers the sign-in (no login page);
	// the grant was revoked, so the user consents again. The same fleet
	// becomes ready with the same digest.
	again := loginBinary(t, ctx, p, dir, config)
	outputs = append(outputs, again.stdout, again.stderr)
	require.Equal(t, exitOK, again.code, again.stderr)
	second, err := store.Load(ctx, p.URL)
	require.NoError(t, err)
	assert.Equal(t, creds.ClientID, second.ClientID)
	assert.Equal(t, loginOutput(p, second), again.stdout)
	assert.Equal(t, 1, p.Count("registration"), "the registration was reused")
	assert.Equal(t, 1, p.Count("interaction:login"))
	assert.Equal(t, consentsBefore+1, p.Count("interaction:consent"))
	st = waitStatus(t, ctx, f, fleet.StateReady)
	assert.Equal(t, digest, st.Digest)
	for _, d := range f.Registrations() {
		if d.Name == "echo" {
			echo = d
		}
	}
	res, err := echo.Run(ctx, json.RawMessage(`{"text":"again"}`), purramcp.ToolContext{})
	require.NoError(t, err)
	assert.Equal(t, "", res.ErrorCode)
	assert.Equal(t, calls+ok200+1, p.ToolCalls())
	statuses()
	closeErr := f.Close()
	require.NoError(t, closeErr)
	auditText := audit.String()
	assert.GreaterOrEqual(t, strings.Count(auditText, `"msg":"purramcp.call","kind":"call","serverId":"remote"`), calls,
		"the audit log has the calls")
	outputs = append(outputs, auditText)

	// The canary grep: every code, verifier and token of every grant, and
	// every access token the server took or the store kept.
	last, err := store.Load(ctx, p.URL)
	require.NoError(t, err)
	secrets := append(p.Secrets(), p.AccessTokens()...)
	secrets = append(secrets, saves...)
	secrets = append(secrets, creds.AccessToken, creds.RefreshToken, second.AccessToken, second.RefreshToken,
		last.AccessToken, last.RefreshToken)
	assert.Subset(t, p.Secrets(), append([]string{creds.AccessToken, creds.RefreshToken, second.AccessToken,
		second.RefreshToken, last.AccessToken, last.RefreshToken}, p.AccessTokens()...),
		"the provider's canary holds every token the store and the server saw")
	assert.GreaterOrEqual(t, len(p.Secrets()), 4*2+2*refreshes, "two logins' codes, verifiers and tokens, and the refreshes'")
	all := strings.Join(outputs, "\n")
	leaks := 0
	for _, s := range secrets {
		require.GreaterOrEqual(t, len(s), 16, "a secret long enough to grep for")
		if strings.Contains(all, s) {
			leaks++
		}
	}
	assert.Equal(t, 0, leaks, "secrets in purramcp's outputs (%d secrets, %d bytes of output)", len(secrets), len(all))
	t.Logf("canary: %d secrets over %d outputs (%d bytes); whole test %v", len(secrets), len(outputs), len(all),
		time.Since(start).Round(time.Millisecond))
}

// loginOutput is what login prints once signed in with c.
func loginOutput(p *oidctest.Provider, c *oauth.Credentials) string {
	return fmt.Sprintf("signed in to %s\n  issuer:  %s\n  client:  %s\n  scopes:  %s\n  valid until %s\n  refresh: true\n",
		p.URL, p.Issuer, c.ClientID, oidctest.Scope, c.Expiry.UTC().Format(time.RFC3339))
}

// loginBinary runs the built command's login for "remote" with
// --no-browser, plays the user at the URL it prints, and returns what it
// wrote and its exit status.
func loginBinary(t *testing.T, ctx context.Context, p *oidctest.Provider, dir, config string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, purramcpBin, "login", "remote", "--config", config, "--no-browser", "--timeout", "25s")
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var errText strings.Builder
	var browsed sync.WaitGroup
	browseErr := make(chan error, 1)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		errText.WriteString(line + "\n")
		if u, ok := strings.CutPrefix(line, "  "+p.Issuer+"/"); ok {
			browsed.Go(func() { browseErr <- p.Browse(ctx, p.Issuer+"/"+u) })
		}
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "login: %v", err)
		code = ee.ExitCode()
	}
	browsed.Wait()
	select {
	case err := <-browseErr:
		require.NoError(t, err, "the sign-in at the provider")
	default:
		t.Fatalf("login printed no authorization URL:\n%s", errText.String())
	}
	return result{stdout: stdout.String(), stderr: errText.String(), code: code}
}

// waitStatus waits until remote is in state, for at most 15 s.
func waitStatus(t *testing.T, ctx context.Context, f *fleet.Fleet, state fleet.State) fleet.ServerStatus {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st := statusOf(t, f)
		if st.State == state {
			return st
		}
		require.True(t, time.Now().Before(deadline) && ctx.Err() == nil, "remote %s, not %s (%s)", st.State, state, st.Code)
		time.Sleep(10 * time.Millisecond)
	}
}

// statusOf is remote's status.
func statusOf(t *testing.T, f *fleet.Fleet) fleet.ServerStatus {
	t.Helper()
	for _, st := range f.Status() {
		if st.ID == "remote" {
			return st
		}
	}
	t.Fatal("no status for remote")
	return fleet.ServerStatus{}
}

// recordingStore records the refresh token of every Save.
type recordingStore struct {
	oauth.Store
	mu    sync.Mutex
	saves []string
}

func (s *recordingStore) Save(ctx context.Context, c *oauth.Credentials) error {
	s.mu.Lock()
	s.saves = append(s.saves, c.RefreshToken)
	s.mu.Unlock()
	return s.Store.Save(ctx, c)
}

// Lock holds the entry as the file store does, so the fleet's keeper and
// the test's revocation take turns (oauth.Locker).
func (s *recordingStore) Lock(ctx context.Context, serverURL string) (func(), error) {
	return s.Store.(oauth.Locker).Lock(ctx, serverURL)
}

func (s *recordingStore) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.saves...)
}
