package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// Defaults of the flags several subcommands share.
const (
	defaultConfig = "purramcp.json"
	defaultLock   = "purramcp-lock.json"
	// defaultConnectTimeout is long because the first `npx -y` start of a
	// server installs it, which takes 30 to 40 s on a fresh machine.
	defaultConnectTimeout = 60 * time.Second
)

// newFlags returns a flag set for the subcommand name that reports errors
// on s.err and whose -h shows synopsis, about and every flag.
func newFlags(name, synopsis, about string, s *streams) *flag.FlagSet {
	fs := flag.NewFlagSet("purramcp "+name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: purramcp %s %s\n\n%s\n\nflags:\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs. When it returns false the subcommand
// ends with the returned status: 0 after -h, 2 after a flag error (which
// fs has reported with the usage).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK, false
	case err != nil:
		return exitUsage, false
	}
	return exitOK, true
}

// parseMixed parses args with fs allowing flags after positional
// arguments too (`diff OLD NEW --json`), up to a "--", after which
// everything is positional. It returns the positional arguments; when ok
// is false the subcommand ends with code, as for parseFlags.
func parseMixed(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	for {
		if code, ok := parseFlags(fs, args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, exitOK, true
		}
		// flag.Parse consumed a "--" only when it stopped on it.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), exitOK, true
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
}

// connectTimeoutFlag adds --connect-timeout to fs.
func connectTimeoutFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("connect-timeout", defaultConnectTimeout,
		"how long to wait for a server to start and answer the handshake (a Go `duration`; a first npx install may need more)")
}

// checkTimeout reports a --connect-timeout that is not positive.
func checkTimeout(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--connect-timeout %s: must be positive, like 60s or 2m", d)
	}
	return nil
}

// A stringList is a flag that may be given more than once.
type stringList []string

// String joins the values with commas.
func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set adds one value.
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parsePolicy turns policy words ("dialect", "annotations", "extended",
// "headers", each at most once) into the SchemaPolicy they enable, as a config's
// "policy" does.
func parsePolicy(words []string) (purramcp.SchemaPolicy, error) {
	known := fleet.PolicyWords(purramcp.SchemaPolicy{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true,
		ParamHeaders: true})
	for i, w := range words {
		if !slices.Contains(known, w) || slices.Contains(words[:i], w) {
			return purramcp.SchemaPolicy{}, fmt.Errorf("policy %q: want each of dialect, annotations, extended, headers at most once", w)
		}
	}
	return fleet.ServerConfig{Policy: words}.SchemaPolicy(), nil
}

// policyJSON renders p as the config writes it: "policy": ["dialect"].
func policyJSON(p purramcp.SchemaPolicy) string {
	words := fleet.PolicyWords(p)
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return `"policy": [` + strings.Join(words, ", ") + `]`
}
