package oauth_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// canaryCredentials holds a canary in every secret field.
func canaryCredentials(url string) *oauth.Credentials {
	return &oauth.Credentials{ServerURL: url, Resource: url, Issuer: "https://as.example", TokenURL: "https://as.example/token",
		ClientID: "client-1", ClientSecret: "CANARY-secret", AuthStyle: "header", Scopes: []string{"docs:read"},
		AccessToken: "CANARY-access", Expiry: time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC), RefreshToken: "CANARY-refresh"}
}

func TestFileStore_RoundTripAndModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	s := &oauth.FileStore{Dir: dir}
	ctx := context.Background()
	got, err := s.Load(ctx, "https://mcp.example/mcp")
	require.NoError(t, err)
	assert.Nil(t, got, "an absent store holds nothing")

	want := canaryCredentials("https://mcp.example/mcp")
	require.NoError(t, s.Save(ctx, want))
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one file, no temporary left")
	fi, err = os.Stat(filepath.Join(dir, entries[0].Name()))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.NotContains(t, entries[0].Name(), "mcp.example", "the file name does not show the URL")

	got, err = s.Load(ctx, "https://mcp.example/mcp")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	other, err := s.Load(ctx, "https://other.example/mcp")
	require.NoError(t, err)
	assert.Nil(t, other)

	next := canaryCredentials("https://mcp.example/mcp")
	next.AccessToken = "CANARY-access-2"
	require.NoError(t, s.Save(ctx, next))
	got, err = s.Load(ctx, "https://mcp.example/mcp")
	require.NoError(t, err)
	assert.Equal(t, "CANARY-access-2", got.AccessToken, "Save replaces")

	require.NoError(t, s.Delete(ctx, "https://mcp.example/mcp"))
	require.NoError(t, s.Delete(ctx, "https://mcp.example/mcp"), "deleting nothing is no error")
	got, err = s.Load(ctx, "https://mcp.example/mcp")
	require.NoError(t, err)
	assert.Nil(t, got)
}

// TestFileStore_RefusesOthersReadable: a directory or a file its
// group or others may read, a symbolic link, an oversized file and one
// with unknown members are refused with mcp_auth_store_failed.
func TestFileStore_RefusesOthersReadable(t *testing.T) {
	ctx := context.Background()
	const url = "https://mcp.example/mcp"
	setup := func(t *testing.T) (*oauth.FileStore, string) {
		s := &oauth.FileStore{Dir: filepath.Join(t.TempDir(), "tokens")}
		require.NoError(t, s.Save(ctx, canaryCredentials(url)))
		entries, err := os.ReadDir(s.Dir)
		require.NoError(t, err)
		return s, filepath.Join(s.Dir, entries[0].Name())
	}
	for name, spoil := range map[string]func(t *testing.T, s *oauth.FileStore, file string){
		"dir 0755":  func(t *testing.T, s *oauth.FileStore, _ string) { require.NoError(t, os.Chmod(s.Dir, 0o755)) },
		"dir 0710":  func(t *testing.T, s *oauth.FileStore, _ string) { require.NoError(t, os.Chmod(s.Dir, 0o710)) },
		"file 0644": func(t *testing.T, _ *oauth.FileStore, f string) { require.NoError(t, os.Chmod(f, 0o644)) },
		"file 0620": func(t *testing.T, _ *oauth.FileStore, f string) { require.NoError(t, os.Chmod(f, 0o620)) },
		"file symlink": func(t *testing.T, _ *oauth.FileStore, f string) {
			target := f + ".real"
			require.NoError(t, os.Rename(f, target))
			require.NoError(t, os.Symlink(target, f))
		},
		"dir symlink": func(t *testing.T, s *oauth.FileStore, _ string) {
			real := s.Dir + ".real"
			require.NoError(t, os.Rename(s.Dir, real))
			require.NoError(t, os.Symlink(real, s.Dir))
		},
		"oversized": func(t *testing.T, _ *oauth.FileStore, f string) {
			require.NoError(t, os.WriteFile(f, []byte(`{"version":1,"accessToken":"`+strings.Repeat("a", 70<<10)+`"}`), 0o600))
		},
		"unknown member": func(t *testing.T, _ *oauth.FileStore, f string) {
			require.NoError(t, os.WriteFile(f, []byte(`{"version":1,"serverUrl":"`+url+`","idToken":"x"}`), 0o600))
		},
		"not json": func(t *testing.T, _ *oauth.FileStore, f string) {
			require.NoError(t, os.WriteFile(f, []byte(`CANARY-access`), 0o600))
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, file := setup(t)
			spoil(t, s, file)
			got, err := s.Load(ctx, url)
			assert.Nil(t, got)
			assert.Equal(t, purramcp.CodeAuthStoreFailed, purramcp.CodeOf(err))
			assert.NotContains(t, fmt.Sprint(err), "CANARY")
		})
	}
	t.Run("save into a shared dir", func(t *testing.T) {
		s, _ := setup(t)
		require.NoError(t, os.Chmod(s.Dir, 0o777))
		assert.Equal(t, purramcp.CodeAuthStoreFailed, purramcp.CodeOf(s.Save(ctx, canaryCredentials(url))))
	})
}

func TestCredentials_StringHidesSecrets(t *testing.T) {
	c := canaryCredentials("https://mcp.example/mcp")
	for _, out := range []string{fmt.Sprint(c), fmt.Sprint(*c), fmt.Sprintf("%+v", *c), fmt.Sprintf("%#v", *c), fmt.Sprintf("%v", []*oauth.Credentials{c})} {
		assert.NotContains(t, out, "CANARY", out)
		assert.Contains(t, out, "client-1")
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv(oauth.DirEnv, "/tmp/purramcp-tokens-test")
	dir, err := oauth.DefaultDir()
	require.NoError(t, err)
	assert.Equal(t, "/tmp/purramcp-tokens-test", dir)
	t.Setenv(oauth.DirEnv, "")
	t.Setenv("XDG_CONFIG_HOME", "/tmp/xdg")
	dir, err = oauth.DefaultDir()
	require.NoError(t, err)
	assert.Equal(t, "/tmp/xdg/purramcp/tokens", dir)
}
