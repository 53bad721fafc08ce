package fleet

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// A Config names the servers of a fleet and the tools bound from each.
// [ParseConfig] and [LoadConfig] build one from a file; Go code may build
// or change one too (for instance to set [ServerConfig].Dial), and [New]
// checks it again.
type Config struct {
	// Servers maps each server id (^[A-Za-z0-9_.-]{1,128}$, the serverId
	// of its snapshots) to its config.
	Servers map[string]ServerConfig

	// secrets holds, per server id, the values ParseConfig substituted for
	// ${env:NAME}, so that they can be redacted from the server's stderr;
	// nil when nothing was substituted.
	secrets map[string][]string
}

// A ServerConfig is one server of a [Config]: how to reach it (exactly one
// of Command, URL and Dial), which tools to bind, and the purramcp options
// its discoveries and calls use.
type ServerConfig struct {
	// Type is "stdio" (needs Command), "http" or "streamable-http" (both
	// need URL), or "" to infer it from Command or URL. It must be "" with
	// Dial.
	Type string
	// Command is the program of a stdio server, run in its own process
	// group with Args, Env added to the host's environment, and Cwd.
	Command string
	// Args are the program's arguments (${env:NAME} is expanded in each).
	Args []string
	// Env is added to the host's environment for the program (${env:NAME}
	// is expanded in each value).
	Env map[string]string
	// Cwd is the program's working directory; "" means the host's.
	Cwd string
	// URL is the streamable HTTP endpoint of an http server (${env:NAME} is
	// expanded in it). The session's client follows no redirect off URL's
	// origin nor from https to http, and dials no address more internal
	// than URL's host (loopback, private, link-local): each is
	// mcp_egress_refused (docs/oauth.md, "Where requests go").
	URL string
	// Headers are sent with every HTTP request to URL's origin (scheme,
	// host, port), never to another (${env:NAME} is expanded in each
	// value).
	Headers map[string]string
	// Dial, set only from Go (it has no JSON form), returns a fresh
	// transport for each session, so Go code can supply any transport (an
	// in-memory one in tests). It must return once ctx ends (ctx carries
	// the connection's Timeout and ends when the fleet closes), or Close
	// waits for it. The fleet closes each session it connects.
	Dial func(context.Context) (mcp.Transport, error) `json:"-"`
	// Tools binds remote tool names (^[A-Za-z0-9_.-]{1,128}$) to local
	// ones; at least one is required, and only these are ever exposed.
	Tools map[string]ToolConfig
	// Policy names the schema policies to enable, each at most once:
	// "dialect", "annotations", "extended", "headers" (see
	// [purramcp.SchemaPolicy]).
	Policy []string
	// RequireReadOnlyHint is [purramcp.DiscoveryOptions].RequireReadOnlyHint.
	RequireReadOnlyHint bool
	// LegacyProtocols also accepts MCP 2024-11-05 and 2025-03-26 on this
	// server's sessions.
	LegacyProtocols bool
	// StaleRetries is [purramcp.DiscoveryOptions].StaleRetries, 0 to 8.
	// ParseConfig sets 2 when the file does not name it; from Go, 0 means
	// none.
	StaleRetries int
	// Limits bounds discovery and every call on this server (zero fields
	// take purramcp's defaults). Its Timeout also bounds connecting.
	Limits purramcp.Limits
	// MaxCalls caps the calls a gateway (purramcp serve) sends this server
	// at once, 1 to 65,536; 0 means the gateway's own cap on all its calls.
	// Calls over it wait in the gateway's queue. The fleet itself ignores
	// it, and so do the lock file and the digests.
	MaxCalls int
	// OAuth configures how an http server's OAuth 2.1 client registers and
	// signs in (see [OAuthConfig]); nil takes the defaults, which suit a
	// server that needs nothing but its URL.
	OAuth *OAuthConfig
}

// A ToolConfig binds one remote tool.
type ToolConfig struct {
	// As is the local name the agent sees: ^[A-Za-z_][A-Za-z0-9_]{0,63}$,
	// unique across every server of the config.
	As string
	// Title is shown to people; "" means the local name.
	Title string
	// ConcurrencySafe records the host's declaration (default false).
	ConcurrencySafe bool
	// Scopes, when set, are the scopes a caller must hold to see and call
	// the tool (valid RFC 6749 scope tokens): a call whose context carries
	// no [Principal] granting them all is denied mcp_scope_denied before
	// the host's own scope runs. The lock file and the digests ignore it.
	Scopes []string
}

// Config file bounds: a file larger than maxConfigBytes is rejected before
// it is parsed.
const maxConfigBytes = 1 << 20

// defaultStaleRetries is the StaleRetries a file that names none gets.
const defaultStaleRetries = 2

// maxStaleRetries is the largest StaleRetries purramcp accepts.
const maxStaleRetries = 8

// maxServerCalls is the largest MaxCalls.
const maxServerCalls = 1 << 16

// Server kinds of ServerConfig.Type.
const (
	typeStdio          = "stdio"
	typeHTTP           = "http"
	typeStreamableHTTP = "streamable-http"
)

// policyWords are the words of ServerConfig.Policy, in the order
// purramcp.SchemaPolicy.String names them, each with the field it enables.
var policyWords = [...]struct {
	word string
	flag func(*purramcp.SchemaPolicy) *bool
}{
	{"dialect", func(p *purramcp.SchemaPolicy) *bool { return &p.DialectEquivalence }},
	{"annotations", func(p *purramcp.SchemaPolicy) *bool { return &p.Annotations }},
	{"extended", func(p *purramcp.SchemaPolicy) *bool { return &p.ExtendedKeywords }},
	{"headers", func(p *purramcp.SchemaPolicy) *bool { return &p.ParamHeaders }},
}

// policyFlag returns the field of p that word enables, nil for a word
// that is not a policy.
func policyFlag(p *purramcp.SchemaPolicy, word string) *bool {
	for _, pw := range policyWords {
		if pw.word == word {
			return pw.flag(p)
		}
	}
	return nil
}

// PolicyWords returns the words of ServerConfig.Policy that enable
// exactly p, in the order purramcp.SchemaPolicy.String names them; never
// nil (a config writes "policy": [] for the default).
func PolicyWords(p purramcp.SchemaPolicy) []string {
	words := []string{}
	for _, pw := range policyWords {
		if *pw.flag(&p) {
			words = append(words, pw.word)
		}
	}
	return words
}

// LoadConfig reads the config file at path (at most 1 MiB) and parses it
// as ParseConfig does. A file that cannot be read is returned as the
// os error; everything else fails as ParseConfig does.
func LoadConfig(path string) (*Config, error) {
	data, err := readBounded(path, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data)
}

// readBounded reads at most max bytes of the file at path; a longer file
// is a ConfigError.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errAt(nil, "file too large")
	}
	return data, nil
}

// ParseConfig parses a config: a JSON object with a "servers" object (as
// VS Code writes it) or an "mcpServers" object (as Claude Desktop does),
// not both, and optionally "inputs", which is ignored. Each server takes
// type, command, args, env, cwd, url, headers, tools (remote name →
// {"as", "title", "concurrencySafe", "scopes"}), policy, requireReadOnlyHint,
// legacyProtocols, staleRetries (default 2), maxCalls and limits (the
// [purramcp.Limits] fields in camelCase: maxPages, maxTools,
// maxCatalogBytes, maxSchemaBytes, maxDescriptionBytes, maxResultBytes,
// maxContentBlocks, and timeout as a Go duration string such as "10s").
//
// ${env:NAME} is replaced by the environment variable NAME in env and
// header values, url and args, and nowhere else; an unset variable, or any
// other ${...} reference, is an error. The values substituted are treated
// as secrets: no error, status, event or lock ever shows them, and a
// server's Stderr shows *** instead.
//
// Every failure is a [*ConfigError] naming the JSON path: data over 1 MiB,
// malformed JSON,
// a duplicate key, an unknown field, a wrong type, a server without tools,
// an invalid or repeated local name (across servers too), both command and
// url, an unknown policy word, a limit out of range.
func ParseConfig(data []byte) (*Config, error) {
	v, err := decodeJSON(data, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	top, err := fields(v, nil, "servers", "mcpServers", "inputs")
	if err != nil {
		return nil, err
	}
	key := "servers"
	if _, ok := top["mcpServers"]; ok {
		if _, both := top["servers"]; both {
			return nil, errAt(path{"mcpServers"}, "both servers and mcpServers")
		}
		key = "mcpServers"
	}
	servers, ok := top[key].(object)
	if !ok {
		return nil, errAt(path{key}, "not an object")
	}
	cfg := &Config{Servers: make(map[string]ServerConfig, len(servers))}
	env := expander{}
	for _, id := range slices.Sorted(maps.Keys(servers)) {
		sc, err := parseServer(servers[id], path{key, id}, &env)
		if err != nil {
			return nil, err
		}
		cfg.Servers[id] = sc
		if len(env.found) > 0 {
			if cfg.secrets == nil {
				cfg.secrets = map[string][]string{}
			}
			cfg.secrets[id] = env.found
			env.found = nil
		}
	}
	if err := cfg.validate(key); err != nil {
		return nil, err
	}
	return cfg, nil
}

// serverFields are the members a server object may have.
var serverFields = []string{"type", "command", "args", "env", "cwd", "url", "headers", "tools", "policy",
	"requireReadOnlyHint", "legacyProtocols", "staleRetries", "maxCalls", "limits", "oauth"}

// parseServer decodes one server object at p, expanding ${env:NAME}.
func parseServer(v any, p path, env *expander) (ServerConfig, error) {
	obj, err := fields(v, p, serverFields...)
	if err != nil {
		return ServerConfig{}, err
	}
	sc := ServerConfig{StaleRetries: defaultStaleRetries}
	steps := []struct {
		name string
		set  func(v any, p path) error
	}{
		{"type", func(v any, p path) (err error) { sc.Type, err = str(v, p); return }},
		{"command", func(v any, p path) (err error) { sc.Command, err = str(v, p); return }},
		{"args", func(v any, p path) (err error) { sc.Args, err = env.list(v, p); return }},
		{"env", func(v any, p path) (err error) { sc.Env, err = env.values(v, p); return }},
		{"cwd", func(v any, p path) (err error) { sc.Cwd, err = str(v, p); return }},
		{"url", func(v any, p path) (err error) { sc.URL, err = env.str(v, p); return }},
		{"headers", func(v any, p path) (err error) { sc.Headers, err = env.values(v, p); return }},
		{"tools", func(v any, p path) (err error) { sc.Tools, err = parseTools(v, p); return }},
		{"policy", func(v any, p path) (err error) { sc.Policy, err = stringList(v, p); return }},
		{"requireReadOnlyHint", func(v any, p path) (err error) { sc.RequireReadOnlyHint, err = boolean(v, p); return }},
		{"legacyProtocols", func(v any, p path) (err error) { sc.LegacyProtocols, err = boolean(v, p); return }},
		{"staleRetries", func(v any, p path) (err error) {
			sc.StaleRetries, err = integer(v, p, 0, maxStaleRetries)
			return
		}},
		{"maxCalls", func(v any, p path) (err error) { sc.MaxCalls, err = integer(v, p, 1, maxServerCalls); return }},
		{"limits", func(v any, p path) (err error) { sc.Limits, err = parseLimits(v, p); return }},
		{"oauth", func(v any, p path) (err error) { sc.OAuth, err = parseOAuth(v, p, env); return }},
	}
	for _, step := range steps {
		if v, ok := obj[step.name]; ok {
			if err := step.set(v, p.with(step.name)); err != nil {
				return ServerConfig{}, err
			}
		}
	}
	if _, ok := obj["tools"]; !ok {
		return ServerConfig{}, errAt(p.with("tools"), "missing")
	}
	return sc, nil
}

// parseTools decodes a tools object at p.
func parseTools(v any, p path) (map[string]ToolConfig, error) { return objectOf(v, p, parseTool) }

// parseTool decodes one tool's entry at p.
func parseTool(v any, p path) (ToolConfig, error) {
	var tc ToolConfig
	t, err := fields(v, p, "as", "title", "concurrencySafe", "scopes")
	if err != nil {
		return tc, err
	}
	if _, ok := t["as"]; !ok {
		return tc, errAt(p.with("as"), "missing")
	}
	if tc.As, err = str(t["as"], p.with("as")); err != nil {
		return tc, err
	}
	if title, ok := t["title"]; ok {
		if tc.Title, err = str(title, p.with("title")); err != nil {
			return tc, err
		}
	}
	if cs, ok := t["concurrencySafe"]; ok {
		if tc.ConcurrencySafe, err = boolean(cs, p.with("concurrencySafe")); err != nil {
			return tc, err
		}
	}
	if sc, ok := t["scopes"]; ok {
		if tc.Scopes, err = stringList(sc, p.with("scopes")); err != nil {
			return tc, err
		}
	}
	return tc, nil
}

// limitFields are the integer members of a limits object and their
// purramcp.Limits fields.
var limitFields = []struct {
	name  string
	field func(*purramcp.Limits) *int
}{
	{"maxCatalogBytes", func(l *purramcp.Limits) *int { return &l.MaxCatalogBytes }},
	{"maxContentBlocks", func(l *purramcp.Limits) *int { return &l.MaxContentBlocks }},
	{"maxDescriptionBytes", func(l *purramcp.Limits) *int { return &l.MaxDescriptionBytes }},
	{"maxPages", func(l *purramcp.Limits) *int { return &l.MaxPages }},
	{"maxResultBytes", func(l *purramcp.Limits) *int { return &l.MaxResultBytes }},
	{"maxSchemaBytes", func(l *purramcp.Limits) *int { return &l.MaxSchemaBytes }},
	{"maxTools", func(l *purramcp.Limits) *int { return &l.MaxTools }},
}

// maxTimeout is the largest Limits.Timeout purramcp accepts.
const maxTimeout = 5 * time.Minute

// parseLimits decodes a limits object at p; the ranges are checked by
// checkLimits, with the rest of the config.
func parseLimits(v any, p path) (purramcp.Limits, error) {
	names := []string{"timeout"}
	for _, f := range limitFields {
		names = append(names, f.name)
	}
	obj, err := fields(v, p, names...)
	if err != nil {
		return purramcp.Limits{}, err
	}
	var l purramcp.Limits
	for _, f := range limitFields {
		if n, ok := obj[f.name]; ok {
			if *f.field(&l), err = integer(n, p.with(f.name), 0, 1<<31); err != nil {
				return purramcp.Limits{}, err
			}
		}
	}
	if t, ok := obj["timeout"]; ok {
		s, err := str(t, p.with("timeout"))
		if err != nil {
			return purramcp.Limits{}, err
		}
		if l.Timeout, err = time.ParseDuration(s); err != nil {
			return purramcp.Limits{}, errAt(p.with("timeout"), "not a duration")
		}
	}
	return l, nil
}

// checkLimits applies purramcp's rule to l, before any I/O: each integer
// field is 0 (the default) or 1 up to its default, and Timeout is 0 or
// 1ms up to 5m (purramcp's DiscoverTools would fail mcp_binding_invalid
// otherwise, only once connected).
func checkLimits(l purramcp.Limits, p path) error {
	def := purramcp.DefaultLimits()
	for _, f := range limitFields {
		if v := *f.field(&l); v < 0 || v > *f.field(&def) {
			return errAt(p.with(f.name), "out of range")
		}
	}
	if l.Timeout != 0 && (l.Timeout < time.Millisecond || l.Timeout > maxTimeout) {
		return errAt(p.with("timeout"), "out of range")
	}
	return nil
}

// expander substitutes ${env:NAME} and records the values substituted.
type expander struct{ found []string }

// expand substitutes every ${env:NAME} in s, found at p.
func (e *expander) expand(s string, p path) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		name, isEnv := strings.CutPrefix(rest[:max(end, 0)], "env:")
		if end < 0 || !isEnv || name == "" {
			return "", errAt(p, "unsupported ${...} reference")
		}
		value, ok := os.LookupEnv(name)
		if !ok {
			return "", errAt(p, "unset environment variable")
		}
		if value != "" && !slices.Contains(e.found, value) {
			e.found = append(e.found, value)
		}
		b.WriteString(value)
		s = rest[end+1:]
	}
}

// str decodes and expands the string at p.
func (e *expander) str(v any, p path) (string, error) {
	s, err := str(v, p)
	if err != nil {
		return "", err
	}
	return e.expand(s, p)
}

// list decodes and expands the array of strings at p.
func (e *expander) list(v any, p path) ([]string, error) {
	l, err := stringList(v, p)
	for i := range l {
		if err != nil {
			break
		}
		l[i], err = e.expand(l[i], p.with(i))
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// values decodes the object of strings at p and expands each value.
func (e *expander) values(v any, p path) (map[string]string, error) {
	m, err := stringMap(v, p)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k], err = e.expand(m[k], p.with(k)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// validate checks what no single field shows: server ids, how each server
// is reached, local names (unique across servers), policy words,
// StaleRetries and limits. top is the key paths start with ("servers" or
// "mcpServers").
func (c *Config) validate(top string) error {
	if c == nil || len(c.Servers) == 0 {
		return errAt(path{top}, "no servers")
	}
	owner := map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(c.Servers)) {
		p := path{top, id}
		sc := c.Servers[id]
		if !validServerID(id) {
			return errAt(p, "invalid server id")
		}
		if err := sc.validateReach(p); err != nil {
			return err
		}
		if err := sc.validateTools(p, owner); err != nil {
			return err
		}
		if err := sc.validateOptions(p); err != nil {
			return err
		}
	}
	return nil
}

// validateReach checks Type and that exactly one of Command, URL and Dial
// is set.
func (sc *ServerConfig) validateReach(p path) error {
	switch {
	case sc.Dial != nil && (sc.Command != "" || sc.URL != ""):
		return errAt(p, "both Dial and command or url")
	case sc.Command != "" && sc.URL != "":
		return errAt(p.with("url"), "both command and url")
	case sc.Command == "" && sc.URL == "" && sc.Dial == nil:
		return errAt(p, "no command, url or Dial")
	}
	switch sc.Type {
	case "":
	case typeStdio:
		if sc.Command == "" {
			return errAt(p.with("type"), "stdio without command")
		}
	case typeHTTP, typeStreamableHTTP:
		if sc.URL == "" {
			return errAt(p.with("type"), "http without url")
		}
	default:
		return errAt(p.with("type"), "unsupported type")
	}
	if sc.Type != "" && sc.Dial != nil {
		return errAt(p.with("type"), "type with Dial")
	}
	if sc.OAuth != nil {
		if sc.URL == "" {
			return errAt(p.with("oauth"), "oauth without url")
		}
		return validateOAuth(sc.OAuth, p.with("oauth"))
	}
	return nil
}

// validateTools checks remote and local names and titles; owner records
// the local names of every server checked so far.
func (sc *ServerConfig) validateTools(p path, owner map[string]bool) error {
	if len(sc.Tools) == 0 {
		return errAt(p.with("tools"), "no tools")
	}
	for _, remote := range slices.Sorted(maps.Keys(sc.Tools)) {
		at := p.with("tools").with(remote)
		tc := sc.Tools[remote]
		switch {
		case !validServerID(remote): // remote names follow the server id pattern
			return errAt(at, "invalid remote name")
		case !validLocalName(tc.As):
			return errAt(at.with("as"), "invalid local name")
		case owner[tc.As]:
			return errAt(at.with("as"), "repeated local name")
		case tc.Title != "" && strings.TrimFunc(tc.Title, isTrimmed) == "":
			return errAt(at.with("title"), "blank title")
		}
		for i, s := range tc.Scopes {
			if !oauth.ValidScope(s) {
				return errAt(at.with("scopes").with(i), "not a scope token")
			}
		}
		owner[tc.As] = true
	}
	return nil
}

// validateOptions checks Policy, StaleRetries, MaxCalls and Limits.
func (sc *ServerConfig) validateOptions(p path) error {
	seen := map[string]bool{}
	for i, word := range sc.Policy {
		if policyFlag(&purramcp.SchemaPolicy{}, word) == nil || seen[word] {
			return errAt(p.with("policy").with(i), "unknown or repeated policy")
		}
		seen[word] = true
	}
	if sc.StaleRetries < 0 || sc.StaleRetries > maxStaleRetries {
		return errAt(p.with("staleRetries"), "out of range")
	}
	if sc.MaxCalls < 0 || sc.MaxCalls > maxServerCalls {
		return errAt(p.with("maxCalls"), "out of range")
	}
	return checkLimits(sc.Limits, p.with("limits"))
}

// Secrets returns every value ParseConfig substituted for ${env:NAME} in
// any server, sorted, each once: what no output may show (the fleet hides
// them in each server's Stderr; give them to [ConnectOptions].Secrets).
// A Config built in Go has none.
func (c *Config) Secrets() []string {
	var all []string
	for _, found := range c.secrets {
		all = append(all, found...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// clone returns sc with its own copies of every slice and map.
func (sc ServerConfig) clone() ServerConfig {
	sc.Args, sc.Env, sc.Headers = slices.Clone(sc.Args), maps.Clone(sc.Env), maps.Clone(sc.Headers)
	sc.Tools, sc.Policy = maps.Clone(sc.Tools), slices.Clone(sc.Policy)
	for remote, tc := range sc.Tools {
		tc.Scopes = slices.Clone(tc.Scopes)
		sc.Tools[remote] = tc
	}
	return sc
}

// SchemaPolicy returns the purramcp.SchemaPolicy that sc.Policy names. A
// word it does not know (a config [New] or [ParseConfig] would reject)
// enables nothing.
func (sc ServerConfig) SchemaPolicy() purramcp.SchemaPolicy {
	var policy purramcp.SchemaPolicy
	for _, word := range sc.Policy {
		if flag := policyFlag(&policy, word); flag != nil {
			*flag = true
		}
	}
	return policy
}

// Bindings returns a fresh ToolBinding for each of sc.Tools, keyed by
// remote name, as the fleet binds them: the local name As, read mode, the
// title Title (As when ""), ConcurrencySafe as configured, and the scope
// purramcp.Unscoped (the fleet replaces it with Options.Scope's when set).
func (sc ServerConfig) Bindings() map[string]purramcp.ToolBinding {
	b := make(map[string]purramcp.ToolBinding, len(sc.Tools))
	for remote, tc := range sc.Tools {
		b[remote] = purramcp.ToolBinding{LocalName: tc.As, Scope: purramcp.Unscoped, ConcurrencySafe: tc.ConcurrencySafe,
			Policy: purramcp.ToolPolicy{Mode: "read", Title: cmpOr(tc.Title, tc.As)}}
	}
	return b
}

// DiscoveryOptions returns the purramcp.DiscoveryOptions the fleet
// discovers sc's tools with: its Limits, SchemaPolicy, StaleRetries and
// RequireReadOnlyHint. Monitor, Observer and Approve are left zero for
// the caller to set.
func (sc ServerConfig) DiscoveryOptions() purramcp.DiscoveryOptions {
	return purramcp.DiscoveryOptions{Limits: sc.Limits, Policy: sc.SchemaPolicy(), StaleRetries: sc.StaleRetries,
		RequireReadOnlyHint: sc.RequireReadOnlyHint}
}

// validServerID reports whether s matches ^[A-Za-z0-9_.-]{1,128}$, the
// pattern purramcp requires of server ids and remote names.
func validServerID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// validLocalName reports whether s matches ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
func validLocalName(s string) bool {
	return len(s) <= 64 && isIdentifier(s)
}

// isTrimmed reports whether JavaScript's trim() removes r: white space and
// line terminators, U+FEFF included.
func isTrimmed(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' || unicode.Is(unicode.Zs, r) }

// String describes the server without any value that may hold a secret:
// its kind and the tools it binds.
func (sc ServerConfig) String() string {
	kind := sc.Type
	switch {
	case sc.Dial != nil:
		kind = "dial"
	case kind == "" && sc.Command != "":
		kind = typeStdio
	case kind == "":
		kind = typeHTTP
	}
	return fmt.Sprintf("%s server binding %d tools", kind, len(sc.Tools))
}
