//go:build unix

package fleet_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/oauth"
)

// TestFileStore_RefusesAnotherUsersFiles: a store directory, or a
// credentials file, that another user owns is refused with
// mcp_auth_store_failed naming the path, even with private modes, and
// nothing in it is used: the token endpoint a planted file names
// receives no refresh. It needs root, to give the files away.
func TestFileStore_RefusesAnotherUsersFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another uid needs root; run the fleet tests as root to check the store's owner rule")
	}
	const other = 54321
	var refreshes atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		refreshes.Add(1)
		http.Error(w, "planted", http.StatusBadRequest)
	}))
	defer as.Close()
	const serverURL = "http://127.0.0.1:9/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, give := range []string{"dir", "file"} {
		t.Run(give, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tokens")
			s := &oauth.FileStore{Dir: dir}
			require.NoError(t, s.Save(ctx, &oauth.Credentials{ServerURL: serverURL, TokenURL: as.URL + "/token",
				ClientID: "c", AccessToken: "planted-access", RefreshToken: "planted-refresh", Expiry: time.Now().Add(-time.Hour)}))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			file := filepath.Join(dir, entries[0].Name())
			path := dir
			if give == "file" {
				path = file
			}
			require.NoError(t, os.Chown(path, other, other))

			got, err := s.Load(ctx, serverURL)
			assert.Nil(t, got)
			var se *oauth.StoreError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, path, se.Path)
			assert.Contains(t, err.Error(), path)
			assert.Equal(t, purramcp.CodeAuthStoreFailed, purramcp.CodeOf(err))
			if give == "dir" {
				assert.ErrorIs(t, s.Save(ctx, &oauth.Credentials{ServerURL: "https://other.example/mcp"}),
					&purramcp.Error{Code: purramcp.CodeAuthStoreFailed}, "nothing is written in it either")
			}
			_, err = fleet.Connect(ctx, fleet.ServerConfig{URL: serverURL}, fleet.ConnectOptions{Timeout: 5 * time.Second, TokenStore: s})
			require.Error(t, err)
			assert.Equal(t, purramcp.CodeAuthStoreFailed, purramcp.CodeOf(err))
			assert.Zero(t, refreshes.Load(), "the planted token endpoint was asked")
		})
	}
}
