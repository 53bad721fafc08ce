package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/oauth"
)

// defaultLoginTimeout bounds the wait for the user to sign in.
const defaultLoginTimeout = 5 * time.Minute

// tokenStore is the store every subcommand reads and login writes:
// $PURRAMCP_TOKEN_DIR, else the user's config directory.
func tokenStore() (*oauth.FileStore, error) {
	dir, err := oauth.DefaultDir()
	if err != nil {
		return nil, err
	}
	return &oauth.FileStore{Dir: dir}, nil
}

// authTarget is the server a login, logout or status names: a configured
// http server (its OAuth config) or --url.
type authTarget struct {
	id    string // "" for --url
	url   string
	oauth *fleet.OAuthConfig
}

// resolveAuthTarget returns the http server of id in the config at path,
// or the server at rawURL; ok is false after a usage or config error,
// reported on s.
func resolveAuthTarget(cmd string, args []string, path, rawURL string, s *streams) (authTarget, bool) {
	switch {
	case rawURL != "" && len(args) == 0:
		return authTarget{url: rawURL}, true
	case rawURL == "" && len(args) == 1:
	default:
		s.errorf(cmd, "name one configured server, or --url URL")
		return authTarget{}, false
	}
	cfg, err := loadConfig(path)
	if err != nil {
		s.errorf(cmd, "%v", err)
		return authTarget{}, false
	}
	sc, ok := cfg.Servers[args[0]]
	switch {
	case !ok:
		s.errorf(cmd, "%s: no server %q (name one of %s)", path, args[0], strings.Join(sortedKeys(cfg.Servers), ", "))
		return authTarget{}, false
	case sc.URL == "":
		s.errorf(cmd, "server %q is not an http server: only http servers sign in with OAuth", args[0])
		return authTarget{}, false
	}
	return authTarget{id: args[0], url: sc.URL, oauth: sc.OAuth}, true
}

// openBrowser opens url in the user's browser, where the platform has a
// way to; an error only means the user opens the printed URL.
func openBrowser(ctx context.Context, url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", url)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped when the browser launcher exits
	return nil
}

// runLogin signs in to one server and stores its credentials.
func runLogin(ctx context.Context, args []string, s *streams) int {
	fs := newFlags("login", "SERVER | --url URL [--no-browser] [--timeout D]",
		"Sign in to an OAuth-protected http server (authorization code with PKCE and a loopback redirect)\n"+
			"and store its tokens, for lock, inspect and serve to use and refresh.", s)
	configPath := fs.String("config", defaultConfig, "the config file")
	rawURL := fs.String("url", "", "sign in to the server at this URL, outside the config")
	noBrowser := fs.Bool("no-browser", false, "only print the authorization URL")
	timeout := fs.Duration("timeout", defaultLoginTimeout, "how long to wait for the sign-in")
	rest, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if *timeout <= 0 {
		s.errorf("login", "--timeout must be positive")
		return exitUsage
	}
	target, ok := resolveAuthTarget("login", rest, *configPath, *rawURL, s)
	if !ok {
		return exitUsage
	}
	store, err := tokenStore()
	if err != nil {
		s.errorf("login", "the token store: %s", purramcp.CodeOf(err))
		return exitFail
	}
	open := s.browse
	if open == nil {
		open = openBrowser
	}
	lctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	creds, err := oauth.Login(lctx, oauth.LoginOptions{ServerURL: target.url, OAuth: target.oauth, Store: store,
		Browse: func(ctx context.Context, authURL string) error {
			fmt.Fprintf(s.err, "Open this URL to sign in to %s:\n\n  %s\n\n", target.url, authURL)
			if !*noBrowser || s.browse != nil {
				if err := open(ctx, authURL); err != nil && s.browse != nil {
					return err
				}
			}
			return nil
		}})
	if err != nil {
		c := purramcp.CodeOf(err)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			c = "no sign-in within --timeout " + timeout.String()
		case errors.Is(err, context.Canceled):
			c = "interrupted"
		case c == "":
			c = purramcp.CodeAuthDiscoveryFailed
		}
		s.errorf("login", "%s: %s", target.url, c)
		return exitFail
	}
	fmt.Fprintf(s.out, "signed in to %s\n", target.url)
	printCredentials(s, creds)
	return exitOK
}

// printCredentials says what is stored, never a token or a secret.
func printCredentials(s *streams, c *oauth.Credentials) {
	fmt.Fprintf(s.out, "  issuer:  %s\n  client:  %s\n  scopes:  %s\n", shown(c.Issuer), shown(c.ClientID), shown(strings.Join(c.Scopes, " ")))
	if !c.Expiry.IsZero() {
		fmt.Fprintf(s.out, "  valid until %s\n", c.Expiry.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(s.out, "  refresh: %t\n", c.RefreshToken != "")
}

// runLogout deletes one server's stored credentials.
func runLogout(ctx context.Context, args []string, s *streams) int {
	fs := newFlags("logout", "SERVER | --url URL", "Delete the stored OAuth credentials of one server.", s)
	configPath := fs.String("config", defaultConfig, "the config file")
	rawURL := fs.String("url", "", "the server at this URL, outside the config")
	rest, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	target, ok := resolveAuthTarget("logout", rest, *configPath, *rawURL, s)
	if !ok {
		return exitUsage
	}
	store, err := tokenStore()
	if err == nil {
		var had *oauth.Credentials
		if had, err = store.Load(ctx, target.url); err == nil {
			if err = store.Delete(ctx, target.url); err == nil {
				if had == nil {
					fmt.Fprintf(s.out, "no credentials were stored for %s\n", target.url)
				} else {
					fmt.Fprintf(s.out, "signed out of %s\n", target.url)
				}
				return exitOK
			}
		}
	}
	s.errorf("logout", "%s: %s", target.url, purramcp.CodeOf(err))
	return exitFail
}

// An authStatus is one server's token state in `auth status --json`.
type authStatus struct {
	Server     string   `json:"server"`
	URL        string   `json:"url"`
	State      string   `json:"state"` // none, valid, expired
	ValidUntil string   `json:"validUntil,omitempty"`
	Refresh    bool     `json:"refresh"`
	Scopes     []string `json:"scopes"`
	Issuer     string   `json:"issuer,omitempty"`
	ClientID   string   `json:"clientId,omitempty"`
}

// runAuth is `auth status`: each configured http server's token state.
func runAuth(ctx context.Context, args []string, s *streams) int {
	fs := newFlags("auth", "status [--config FILE] [--json]",
		"List each configured http server's stored OAuth state (valid until, refresh, scopes, issuer); never a token.", s)
	configPath := fs.String("config", defaultConfig, "the config file")
	asJSON := fs.Bool("json", false, "print a JSON array of {server, url, state, validUntil, refresh, scopes, issuer, clientId}")
	rest, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if len(rest) != 1 || rest[0] != "status" {
		s.errorf("auth", "usage: purramcp auth status [--config FILE] [--json]")
		return exitUsage
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		s.errorf("auth status", "%v", err)
		return exitUsage
	}
	store, err := tokenStore()
	if err != nil {
		s.errorf("auth status", "the token store: %s", purramcp.CodeOf(err))
		return exitFail
	}
	out := []authStatus{}
	for _, id := range sortedKeys(cfg.Servers) {
		sc := cfg.Servers[id]
		if sc.URL == "" {
			continue
		}
		st := authStatus{Server: id, URL: sc.URL, State: "none", Scopes: []string{}}
		c, err := store.Load(ctx, sc.URL)
		if err != nil {
			s.errorf("auth status", "%s: %s", id, purramcp.CodeOf(err))
			return exitFail
		}
		if c != nil {
			st.State, st.Refresh, st.Issuer, st.ClientID = "valid", c.RefreshToken != "", c.Issuer, c.ClientID
			st.Scopes = append(st.Scopes, c.Scopes...)
			if !c.Expiry.IsZero() {
				st.ValidUntil = c.Expiry.UTC().Format(time.RFC3339)
				if !time.Now().Before(c.Expiry) {
					st.State = "expired"
				}
			}
		}
		out = append(out, st)
	}
	if *asJSON {
		if err := writeJSON(s.out, out); err != nil {
			return exitFail
		}
		return exitOK
	}
	for _, st := range out {
		line := fmt.Sprintf("%s: %s", st.Server, st.State)
		if st.State != "none" {
			line += fmt.Sprintf(" (issuer %s, scopes %q, refresh %t", shown(st.Issuer), strings.Join(st.Scopes, " "), st.Refresh)
			if st.ValidUntil != "" {
				line += ", valid until " + st.ValidUntil
			}
			line += ")"
		}
		fmt.Fprintln(s.out, line)
	}
	return exitOK
}
