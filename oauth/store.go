package oauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"purra.dev/purramcp"
)

// authError is the error of an OAuth failure with code.
func authError(code string) error { return &purramcp.Error{Code: code} }

// Credentials are what purramcp keeps for one OAuth-protected server: the
// registered client, the authorization server it belongs to and the
// tokens it was given for the server's resource. Its String and GoString
// never show a token or a secret, so that a Credentials printed by
// mistake leaks nothing.
type Credentials struct {
	// ServerURL is the MCP endpoint the credentials are for, the store's
	// key. A token is only ever sent to this URL's origin.
	ServerURL string
	// Resource is the resource indicator (RFC 8707) the tokens were asked
	// for: the resource of the server's protected resource metadata.
	Resource string
	// Issuer is the authorization server's issuer, as its metadata named
	// it; TokenURL is its token endpoint.
	Issuer, TokenURL string
	// ClientID and ClientSecret are the client's registration (the secret
	// is "" for a public client); AuthStyle is how the token endpoint
	// takes them: "header" (HTTP Basic), "params" (the form body) or ""
	// (probe).
	ClientID, ClientSecret, AuthStyle string
	// RedirectURI is the loopback redirect URI the client was registered
	// with, reused by the next login so that the registration still fits.
	RedirectURI string
	// Scopes are the scopes the tokens were granted.
	Scopes []string
	// AccessToken is the bearer token; Expiry its end (zero: unknown).
	AccessToken string
	Expiry      time.Time
	// RefreshToken renews AccessToken without the user; "" when none was
	// issued.
	RefreshToken string
}

// String describes c without its tokens or secret.
func (c Credentials) String() string {
	return fmt.Sprintf("oauth.Credentials{ServerURL: %q, Issuer: %q, ClientID: %q, Scopes: %q, Expiry: %s, refresh: %t}",
		c.ServerURL, c.Issuer, c.ClientID, c.Scopes, c.Expiry.Format(time.RFC3339), c.RefreshToken != "")
}

// GoString is String, for %#v.
func (c Credentials) GoString() string { return c.String() }

// A Store keeps one server's [Credentials] between runs. Load
// returns nil and no error when it holds none for serverURL. Save replaces
// what it held for c.ServerURL, atomically: a Load never sees a partial
// write. Delete removes them; deleting nothing is no error. Every method
// must be safe for concurrent use and bounded in time by ctx. A host can
// keep credentials in a keychain or a secrets manager by implementing it;
// [FileStore] is the default.
type Store interface {
	Load(ctx context.Context, serverURL string) (*Credentials, error)
	Save(ctx context.Context, c *Credentials) error
	Delete(ctx context.Context, serverURL string) error
}

// An Locker is a [Store] that can hold one server's entry
// against every other holder of the same store, so that one credential is
// refreshed once: the refresher holds the entry around load, refresh and
// save, and the next holder loads what the last one saved. Lock waits,
// bounded by ctx, while another holder has the entry, and returns the
// func that releases it. A store without it is held only within one
// keeper (see [FileStore.Lock]).
type Locker interface {
	Lock(ctx context.Context, serverURL string) (unlock func(), err error)
}

// lockEntry holds serverURL's entry of store when the store can, else
// nothing.
func lockEntry(ctx context.Context, store Store, serverURL string) (func(), error) {
	if l, ok := store.(Locker); ok {
		return l.Lock(ctx, serverURL)
	}
	return func() {}, ctx.Err()
}

// A FileStore keeps each server's credentials in a JSON file of its
// own in Dir, named by a digest of the server URL. Dir is created 0700 and
// each file written 0600, by a temporary file renamed into place; a Dir or
// a file that its group or others may read or write, that is a symbolic
// link, or (on Unix) that another user than the effective one owns, is
// refused with a [*StoreError] (mcp_auth_store_failed, naming the path)
// before anything is read from it. A file whose
// ServerURL is not the one asked for is treated as absent.
type FileStore struct {
	// Dir is the store's directory.
	Dir string
}

// DirEnv is the environment variable that overrides the default
// token directory.
const DirEnv = "PURRAMCP_TOKEN_DIR"

// DefaultDir is $PURRAMCP_TOKEN_DIR when set, else
// os.UserConfigDir()/purramcp/tokens.
func DefaultDir() (string, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", authError(purramcp.CodeAuthStoreFailed)
	}
	return filepath.Join(base, "purramcp", "tokens"), nil
}

// maxCredentialsBytes bounds a stored file.
const maxCredentialsBytes = 64 << 10

// credentialsFile is the JSON form of Credentials in a FileStore.
type credentialsFile struct {
	Version      int       `json:"version"`
	ServerURL    string    `json:"serverUrl"`
	Resource     string    `json:"resource,omitempty"`
	Issuer       string    `json:"issuer"`
	TokenURL     string    `json:"tokenUrl"`
	ClientID     string    `json:"clientId"`
	ClientSecret string    `json:"clientSecret,omitempty"`
	AuthStyle    string    `json:"authStyle,omitempty"`
	RedirectURI  string    `json:"redirectUri,omitempty"`
	Scopes       []string  `json:"scopes,omitempty"`
	AccessToken  string    `json:"accessToken"`
	Expiry       time.Time `json:"expiry,omitzero"`
	RefreshToken string    `json:"refreshToken,omitempty"`
}

// file is the path of serverURL's credentials.
func (s *FileStore) file(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// storeFailure is err when it is a *StoreError, else the bare
// mcp_auth_store_failed error.
func storeFailure(err error) error {
	var se *StoreError
	if errors.As(err, &se) {
		return se
	}
	return authError(purramcp.CodeAuthStoreFailed)
}

// lockFile is the path of serverURL's lock file.
func (s *FileStore) lockFile(serverURL string) string {
	return strings.TrimSuffix(s.file(serverURL), ".json") + ".lock"
}

// private reports whether fi is a directory or regular file (as dir says)
// that only its owner may read or write.
func private(fi fs.FileInfo, dir bool) bool {
	if fi.Mode()&fs.ModeSymlink != 0 || fi.IsDir() != dir || (!dir && !fi.Mode().IsRegular()) {
		return false
	}
	return fi.Mode().Perm()&0o077 == 0
}

// checkDir refuses a Dir others may use or that is not the effective
// user's own; a missing one is reported as fs.ErrNotExist.
func (s *FileStore) checkDir() error {
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return err
	}
	if !private(fi, true) || !s.owned(fi) {
		return &StoreError{Path: s.Dir}
	}
	return nil
}

// A StoreError is a [FileStore] directory or file refused before
// anything was read from it: a symbolic link, not a directory or regular
// file, open to its group or others, or (on Unix) owned by another user
// than the effective one. It is mcp_auth_store_failed (errors.Is with
// the code's error, and purramcp.CodeOf, find it) and its text names the
// local path.
type StoreError struct {
	// Path is the refused directory or file.
	Path string
}

// Error names the path and the code.
func (e *StoreError) Error() string {
	return "oauth: token store: " + e.Path + " is not a private directory or file of this user: " + purramcp.CodeAuthStoreFailed
}

// Unwrap returns the mcp_auth_store_failed error.
func (e *StoreError) Unwrap() error { return authError(purramcp.CodeAuthStoreFailed) }

// Load reads serverURL's credentials.
func (s *FileStore) Load(ctx context.Context, serverURL string) (*Credentials, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkDir(); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, storeFailure(err)
	}
	name := s.file(serverURL)
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil || fi.Size() > maxCredentialsBytes {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	if !private(fi, false) || !s.owned(fi) {
		return nil, &StoreError{Path: name}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) {
		return nil, &StoreError{Path: name} // replaced between the check and the open
	}
	text, err := io.ReadAll(io.LimitReader(f, maxCredentialsBytes+1))
	if err != nil || len(text) > maxCredentialsBytes {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	var cf credentialsFile
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if dec.Decode(&cf) != nil || cf.Version != 1 {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	if cf.ServerURL != serverURL {
		return nil, nil // another server's file (a digest collision or a copy): not these credentials
	}
	return &Credentials{ServerURL: cf.ServerURL, Resource: cf.Resource, Issuer: cf.Issuer, TokenURL: cf.TokenURL,
		ClientID: cf.ClientID, ClientSecret: cf.ClientSecret, AuthStyle: cf.AuthStyle, RedirectURI: cf.RedirectURI, Scopes: cf.Scopes,
		AccessToken: cf.AccessToken, Expiry: cf.Expiry, RefreshToken: cf.RefreshToken}, nil
}

// Save writes c atomically.
func (s *FileStore) Save(ctx context.Context, c *Credentials) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c == nil || c.ServerURL == "" {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	if err := s.checkDir(); err != nil {
		return storeFailure(err)
	}
	text, err := json.MarshalIndent(credentialsFile{Version: 1, ServerURL: c.ServerURL, Resource: c.Resource,
		Issuer: c.Issuer, TokenURL: c.TokenURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		AuthStyle: c.AuthStyle, RedirectURI: c.RedirectURI, Scopes: c.Scopes, AccessToken: c.AccessToken, Expiry: c.Expiry,
		RefreshToken: c.RefreshToken}, "", "  ")
	if err != nil || len(text) > maxCredentialsBytes {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	tmp, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if tmp.Chmod(0o600) != nil {
		tmp.Close()
		return authError(purramcp.CodeAuthStoreFailed)
	}
	if _, err := tmp.Write(append(text, '\n')); err != nil {
		tmp.Close()
		return authError(purramcp.CodeAuthStoreFailed)
	}
	if tmp.Sync() != nil || tmp.Close() != nil {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	if os.Rename(tmp.Name(), s.file(c.ServerURL)) != nil {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	if d, err := os.Open(s.Dir); err == nil { // the rename itself survives a crash
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Delete removes serverURL's credentials.
func (s *FileStore) Delete(ctx context.Context, serverURL string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.checkDir(); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return storeFailure(err)
	}
	if err := os.Remove(s.file(serverURL)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return authError(purramcp.CodeAuthStoreFailed)
	}
	return nil
}
