package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"purra.dev/purramcp"
	"purra.dev/purramcp/cmd/purramcp/internal/gateway"
	"purra.dev/purramcp/fleet"
	"purra.dev/purramcp/oauth"
)

// serveAbout is the help text of `purramcp serve`.
const serveAbout = `Serves the approved tools of every configured server to one MCP client,
failing closed: only catalogs whose digest is in the lock file are served,
a call's arguments are checked before anything reaches a server, and no
server text reaches the client except a successful, validated result.
Over stdio (the default, for Claude Desktop and the like) or streamable
HTTP (--http). One JSON audit line per discovery and per call goes to
standard error. SIGINT or SIGTERM closes every server and exits 0.`

// serveFlags are the parsed flags of `purramcp serve`.
type serveFlags struct {
	config, lock, httpAddr, tokenEnv string
	oauthIssuer, resource            string
	introspection, clientID          string
	clientSecretEnv                  string
	clientSecret                     string // read from clientSecretEnv by runServe
	unlocked, stateless, status      bool
	allowHosts, allowOrigins         stringList
	jwtTypes                         stringList
	maxBody                          int64
	maxSessionCalls, maxCalls        int
	introspectRate, introspectRateIP int
	maxSessions, maxUserSessions     int
	maxUserCalls, maxQueue           int
	maxWait, connectTimeout          time.Duration
}

// runServe runs `purramcp serve`: the gateway in front of the fleet of the
// config and lock. It returns 0 after a shutdown by ctx (the signals) or by
// the stdio client closing its end, 1 when serving fails, 2 on a usage,
// config or lock-file error, and for --status 0 when every server is
// ready, else 1.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl, code, ok := parseServeFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "purramcp serve: "+format+"\n", a...)
		return exitUsage
	}
	var token string
	if fl.httpAddr != "" { // stdio never reads the token
		if fl.tokenEnv != "" {
			if token = os.Getenv(fl.tokenEnv); token == "" {
				return fail("--token-env %s: the variable is unset or empty", fl.tokenEnv)
			}
		}
		if fl.clientSecretEnv != "" {
			if fl.clientSecret = os.Getenv(fl.clientSecretEnv); fl.clientSecret == "" {
				return fail("--oauth-client-secret-env %s: the variable is unset or empty", fl.clientSecretEnv)
			}
		}
		if err := gateway.CheckListen(fl.httpAddr, token != "" || fl.oauthIssuer != ""); errors.Is(err, gateway.ErrNoToken) {
			return fail("--http %s is not a loopback address: set --oauth-issuer and --resource, or --token-env NAME, to require a bearer token", fl.httpAddr)
		} else if err != nil {
			return fail("--http %s: want host:port, like 127.0.0.1:8080", fl.httpAddr)
		}
	}
	cfg, err := fleet.LoadConfig(fl.config)
	if err != nil {
		return fail("%v", err)
	}
	var lock *fleet.Lock
	if fl.unlocked {
		fmt.Fprintln(stderr, "purramcp serve: WARNING: --unlocked admits every catalog the servers list, unreviewed; use it for development only")
	} else {
		if _, err := os.Stat(fl.lock); errors.Is(err, fs.ErrNotExist) {
			return fail("no lock file %s: run `purramcp lock` first to review and approve the servers' catalogs (or --lock FILE)", fl.lock)
		}
		if lock, err = fleet.LoadLock(fl.lock); err != nil {
			return fail("%v", err)
		}
	}
	return serve(ctx, cfg, lock, fl, token, stdin, stdout, stderr)
}

// parseServeFlags parses and checks the flags of `purramcp serve`. When it
// returns false, serve ends with the returned status (0 after -h).
func parseServeFlags(args []string, stdout, stderr io.Writer) (serveFlags, int, bool) {
	var fl serveFlags
	flags := newFlags("serve", "[--config FILE] [--lock FILE] [--unlocked] [--http ADDR [--stateless] [--token-env NAME | --oauth-issuer URL --resource URL [--oauth-introspection URL --oauth-client-id ID --oauth-client-secret-env NAME]]]",
		serveAbout, &streams{out: stdout, err: stderr})
	flags.StringVar(&fl.config, "config", defaultConfig, "the config `file`")
	flags.StringVar(&fl.lock, "lock", defaultLock, "the lock `file` holding the approved catalogs (required unless --unlocked)")
	flags.BoolVar(&fl.unlocked, "unlocked", false, "development only: admit whatever catalog each server lists, without a lock")
	flags.StringVar(&fl.httpAddr, "http", "", "serve streamable HTTP on `host:port` (endpoint /mcp, status at GET /status) instead of stdio")
	flags.BoolVar(&fl.stateless, "stateless", false, "with --http: keep no session for any client, so replicas need no shared store\n(without it: legacy clients get a session, 2026-07-28 requests none)")
	flags.StringVar(&fl.tokenEnv, "token-env", "", "with --http: the environment variable `NAME` holding the bearer token clients must send (required off loopback)")
	flags.StringVar(&fl.oauthIssuer, "oauth-issuer", "", "with --http and --resource: the OAuth authorization server `URL` (its issuer) whose JWT access tokens clients must send")
	flags.StringVar(&fl.resource, "resource", "", "with --oauth-issuer: the gateway's public resource `URL` (such as https://mcp.example.com/mcp), the audience tokens must name")
	flags.Var(&fl.jwtTypes, "oauth-jwt-typ", "with --oauth-issuer: a JWS `typ` admitted besides at+jwt, such as JWT for an identity provider that types its access tokens so (repeatable); a token carrying an ID token's claim is still refused")
	flags.StringVar(&fl.introspection, "oauth-introspection", "", "with --oauth-issuer: verify every access token (opaque or JWT) at this RFC 7662 introspection endpoint `URL` instead of locally")
	flags.StringVar(&fl.clientID, "oauth-client-id", "", "with --oauth-introspection: the gateway's client `ID` at the introspection endpoint")
	flags.StringVar(&fl.clientSecretEnv, "oauth-client-secret-env", "", "with --oauth-introspection: the environment variable `NAME` holding the gateway's client secret")
	flags.IntVar(&fl.introspectRate, "oauth-introspection-rate", 20, "with --oauth-introspection: the most introspections a second over every client (more are 429)")
	flags.IntVar(&fl.introspectRateIP, "oauth-introspection-rate-per-address", 5, "with --oauth-introspection: the most introspections a second for one client address (more are 429)")
	flags.Var(&fl.allowHosts, "allow-host", "with --http: a host `name` the Host header may carry (repeatable; default the loopback names)")
	flags.Var(&fl.allowOrigins, "allow-origin", "with --http: an `origin` (https://app.example) or host name a browser Origin may carry (repeatable; default the loopback names)")
	flags.Int64Var(&fl.maxBody, "max-body-bytes", 1<<20, "with --http: the largest request body, in `bytes`")
	flags.IntVar(&fl.maxSessionCalls, "max-session-calls", 8, "the most calls one client session runs at once; more wait their turn")
	flags.IntVar(&fl.maxUserCalls, "max-user-calls", 0, "the most calls one OAuth user runs at once over its sessions (0: half of --max-calls)")
	flags.IntVar(&fl.maxCalls, "max-calls", gateway.DefaultMaxCalls(), "the most calls the gateway runs at once (default: a quarter of memory over 2 MiB a call, 64 to 4096)")
	flags.IntVar(&fl.maxQueue, "max-queue", 0, "the most calls waiting for a slot; one more fails gateway_busy (0: twice --max-calls)")
	flags.DurationVar(&fl.maxWait, "max-wait", 10*time.Second, "how long a call may wait for a slot before it fails gateway_wait_expired (at most 5m)")
	flags.IntVar(&fl.maxSessions, "max-sessions", 1024, "with --http, stateful: the most sessions open at once (more are 429)")
	flags.IntVar(&fl.maxUserSessions, "max-user-sessions", 16, "with --http, stateful: the most sessions one OAuth user has open at once (more are 429)")
	flags.BoolVar(&fl.status, "status", false, "connect every server once, print the gateway's status as JSON and exit")
	connectTimeout := connectTimeoutFlag(flags)
	if code, ok := parseFlags(flags, args); !ok {
		return fl, code, false
	}
	fl.connectTimeout = *connectTimeout
	var problem string
	switch {
	case flags.NArg() > 0:
		problem = fmt.Sprintf("unexpected argument %q", flags.Arg(0))
	case checkTimeout(fl.connectTimeout) != nil:
		problem = checkTimeout(fl.connectTimeout).Error()
	case fl.httpAddr == "" && (fl.stateless || fl.tokenEnv != "" || fl.oauthIssuer != "" || fl.resource != "" || len(fl.allowHosts)+len(fl.allowOrigins) > 0):
		problem = "--stateless, --token-env, --oauth-issuer, --resource, --allow-host and --allow-origin need --http"
	case fl.tokenEnv != "" && (fl.oauthIssuer != "" || fl.resource != ""):
		problem = "--token-env and --oauth-issuer are exclusive"
	case (fl.oauthIssuer == "") != (fl.resource == ""):
		problem = "--oauth-issuer and --resource go together"
	case fl.introspection != "" && fl.oauthIssuer == "":
		problem = "--oauth-introspection needs --oauth-issuer and --resource"
	case len(fl.jwtTypes) > 0 && (fl.oauthIssuer == "" || fl.introspection != ""):
		problem = "--oauth-jwt-typ needs --oauth-issuer, without --oauth-introspection"
	case fl.introspection != "" && (fl.clientID == "" || fl.clientSecretEnv == ""),
		fl.introspection == "" && (fl.clientID != "" || fl.clientSecretEnv != ""):
		problem = "--oauth-introspection, --oauth-client-id and --oauth-client-secret-env go together"
	case fl.maxBody <= 0 || fl.maxSessionCalls <= 0 || fl.maxCalls <= 0:
		problem = "--max-body-bytes, --max-session-calls and --max-calls must be positive"
	case fl.maxUserCalls < 0 || fl.maxQueue < 0:
		problem = "--max-user-calls and --max-queue must not be negative"
	case fl.maxWait <= 0 || fl.maxWait > 5*time.Minute:
		problem = fmt.Sprintf("--max-wait %v: must be positive and at most 5m", fl.maxWait)
	case fl.maxSessions <= 0 || fl.maxUserSessions <= 0:
		problem = "--max-sessions and --max-user-sessions must be positive"
	case fl.introspectRate <= 0 || fl.introspectRateIP <= 0:
		problem = "--oauth-introspection-rate and --oauth-introspection-rate-per-address must be positive"
	default:
		return fl, exitOK, true
	}
	fmt.Fprintf(stderr, "purramcp serve: %s\n", problem)
	return fl, exitUsage, false
}

// serve starts the fleet, puts the gateway in front of it and serves until
// ctx ends or the stdio client leaves; it closes the fleet before returning.
func serve(ctx context.Context, cfg *fleet.Config, lock *fleet.Lock, fl serveFlags, token string,
	stdin io.Reader, stdout, stderr io.Writer) int {
	audit := gateway.AuditLog(stderr)
	var current atomic.Pointer[gateway.Gateway] // set once the gateway exists
	var store oauth.Store                       // what purramcp login stored; none without a config directory
	if fs, err := tokenStore(); err == nil {
		store = fs
	}
	f, err := fleet.New(cfg, fleet.Options{
		Lock:       lock,
		Observer:   audit,
		TokenStore: store,
		OnChange: func() {
			if g := current.Load(); g != nil {
				g.Refresh()
			}
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "purramcp serve: %s: %v\n", fl.config, err)
		return exitUsage
	}
	defer f.Close()
	g, err := gateway.New(fleetSource{f: f, tools: serverTools(cfg)}, gateway.Options{
		Name: "purramcp", Version: buildVersions().Version,
		MaxSessionCalls: fl.maxSessionCalls, MaxUserCalls: fl.maxUserCalls, MaxCalls: fl.maxCalls,
		MaxQueue: fl.maxQueue, MaxWait: fl.maxWait, UpstreamCalls: upstreamCalls(cfg),
		Observer: audit, ToolScopes: toolScopes(cfg),
	})
	if err != nil {
		fmt.Fprintf(stderr, "purramcp serve: %v\n", err)
		return exitUsage // unreachable: the flags were checked
	}
	startCtx, cancel := context.WithTimeout(ctx, fl.connectTimeout)
	_ = f.Start(startCtx) // each server settles once or the timeout ends; status tells which
	cancel()
	current.Store(g)
	for _, name := range g.Refresh() {
		fmt.Fprintf(stderr, "purramcp serve: tool %s cannot be served (go-sdk refuses its input schema)\n", name)
	}
	st := g.Status()
	if fl.status {
		out, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
		for _, up := range st.Upstreams {
			if up.State != gateway.StateReady {
				return exitFail
			}
		}
		return exitOK
	}
	for _, up := range st.Upstreams {
		line := fmt.Sprintf("purramcp serve: server %s: %s", up.ID, up.State)
		if up.Code != "" {
			line += " (" + up.Code + ")"
		}
		if up.State == gateway.StateUnapproved {
			line += ": its catalog is not the locked one; review it with `purramcp lock`"
		}
		if up.State == gateway.StateUnauthorized {
			line += ": sign in with `purramcp login " + up.ID + "`; its tools are served once it is ready"
		}
		fmt.Fprintln(stderr, line)
	}
	fmt.Fprintf(stderr, "purramcp serve: serving %d tools: %s\n", len(st.Tools), strings.Join(st.Tools, ", "))
	if fl.httpAddr == "" {
		err = g.ServeStdio(ctx, stdin, stdout)
	} else {
		var oauth *gateway.OAuthOptions
		if fl.oauthIssuer != "" {
			verify, code := tokenVerifier(ctx, fl, stderr)
			if verify == nil {
				return code
			}
			oauth = &gateway.OAuthOptions{Issuer: fl.oauthIssuer, Resource: fl.resource, Verify: verify,
				ScopesSupported: scopesSupported(cfg)}
		}
		err = serveHTTP(ctx, g, fl, token, oauth, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "purramcp serve: %v\n", err)
		return exitFail
	}
	return exitOK
}

// tokenVerifier is how the protected resource verifies access tokens: at
// the introspection endpoint with --oauth-introspection, else locally as
// JWTs against the issuer's keys. On failure it says why and returns nil
// with the exit status.
func tokenVerifier(ctx context.Context, fl serveFlags, stderr io.Writer) (auth.TokenVerifier, int) {
	if fl.introspection != "" {
		v, err := gateway.NewIntrospectionVerifier(gateway.IntrospectionOptions{Endpoint: fl.introspection,
			Issuer: fl.oauthIssuer, Resource: fl.resource, ClientID: fl.clientID, ClientSecret: fl.clientSecret,
			Rate: fl.introspectRate, RatePerAddress: fl.introspectRateIP})
		if err != nil {
			fmt.Fprintf(stderr, "purramcp serve: --oauth-introspection %s: %v\n", fl.introspection, err)
			return nil, exitUsage
		}
		return v.Verify, exitOK
	}
	v, err := gateway.NewJWTVerifier(ctx, gateway.JWTOptions{Issuer: fl.oauthIssuer, Resource: fl.resource,
		Types: fl.jwtTypes})
	if err != nil {
		fmt.Fprintf(stderr, "purramcp serve: --oauth-issuer %s: %v\n", fl.oauthIssuer, err)
		return nil, exitFail
	}
	return v.Verify, exitOK
}

// serveHTTP listens on --http and serves the gateway's HTTP handler there.
func serveHTTP(ctx context.Context, g *gateway.Gateway, fl serveFlags, token string, oauth *gateway.OAuthOptions, stderr io.Writer) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", fl.httpAddr)
	if err != nil {
		return err
	}
	mode := "sessions below 2026-07-28, stateless from 2026-07-28"
	if fl.stateless {
		mode = "stateless"
	}
	if oauth != nil {
		mode += ", OAuth resource " + oauth.Resource
	}
	fmt.Fprintf(stderr, "purramcp serve: listening on http://%s/mcp (%s)\n", ln.Addr(), mode)
	return g.ServeHTTP(ctx, ln, gateway.HTTPOptions{
		Token:          token,
		AllowedHosts:   fl.allowHosts,
		AllowedOrigins: fl.allowOrigins,
		MaxBodyBytes:   fl.maxBody,
		Stateless:      fl.stateless,
		OAuth:          oauth,

		MaxSessions:     fl.maxSessions,
		MaxUserSessions: fl.maxUserSessions,
	})
}

// toolScopes maps each configured tool's local name to the scopes its
// "scopes" member requires, for the gateway to hide and refuse per caller.
func toolScopes(cfg *fleet.Config) map[string][]string {
	out := map[string][]string{}
	for _, sc := range cfg.Servers {
		for _, tc := range sc.Tools {
			if len(tc.Scopes) > 0 {
				out[tc.As] = tc.Scopes
			}
		}
	}
	return out
}

// upstreamCalls maps each server that sets "maxCalls" to it.
func upstreamCalls(cfg *fleet.Config) map[string]int {
	out := map[string]int{}
	for id, sc := range cfg.Servers {
		if sc.MaxCalls > 0 {
			out[id] = sc.MaxCalls
		}
	}
	return out
}

// serverTools maps each configured server to the local names of its tools.
func serverTools(cfg *fleet.Config) map[string][]string {
	out := map[string][]string{}
	for id, sc := range cfg.Servers {
		names := []string{}
		for _, tc := range sc.Tools {
			names = append(names, tc.As)
		}
		out[id] = names
	}
	return out
}

// scopesSupported are the scopes the config's tools require, sorted, each
// once: what the resource metadata lists.
func scopesSupported(cfg *fleet.Config) []string {
	var all []string
	for _, scopes := range toolScopes(cfg) {
		all = append(all, scopes...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// fleetSource shows a fleet to the gateway: its registrations, and for
// each server its status with, when ready, the snapshot it was admitted
// with. The status and the snapshot are two reads: a server that left
// ready between them is shown without a snapshot (so none of its tools is
// listed; the fleet's OnChange brings the next refresh), and a ready one
// takes its digest from the snapshot, so the two always agree.
type fleetSource struct {
	f     *fleet.Fleet
	tools map[string][]string // each server's local tool names, from the config
}

func (s fleetSource) Registrations() []purramcp.ToolDefinition { return s.f.Registrations() }

func (s fleetSource) Upstreams() []gateway.Upstream {
	statuses := s.f.Status()
	ups := make([]gateway.Upstream, len(statuses))
	for i, st := range statuses {
		ups[i] = gateway.Upstream{
			ID: st.ID, State: string(st.State), Digest: st.Digest, Code: st.Code,
			Attempts: st.Attempts, Since: st.Since, Tools: s.tools[st.ID],
		}
		if st.State == fleet.StateReady {
			if snap, ok := s.f.Snapshot(st.ID); ok {
				ups[i].Snapshot, ups[i].Digest = snap, snap.RevisionDigest
			}
		}
	}
	return ups
}
