// Command purramcp reviews the MCP servers an agent host uses, the way
// `go mod verify` reviews go.sum: it inspects what a server offers, writes
// the approved catalogs to a lock file and checks in CI that the live
// servers still match it. serve puts a fail-closed MCP gateway in front
// of those servers, for MCP clients purramcp's Go API does not reach.
//
//	purramcp inspect [--server ID | --url URL | --catalog FILE | -- COMMAND [ARG...]]
//	purramcp lock [--server ID]...
//	purramcp lock --check [--server ID]...
//	purramcp diff OLD NEW
//	purramcp serve [--http ADDR [--stateless] [--token-env NAME]] [--unlocked]
//	purramcp login SERVER | --url URL [--no-browser] [--timeout D]
//	purramcp logout SERVER | --url URL
//	purramcp auth status [--json]
//	purramcp version
//
// The servers come from a config file (purramcp.json by default, --config
// to change it) and their approved catalogs live in a lock file
// (purramcp-lock.json, --lock), both in the format of package
// purra.dev/purramcp/fleet, which enforces the same lock at run time.
//
// Exit status: 0 success; 1 a failure the command found (drift, a server
// that cannot be reached or does not bind, changes in a diff); 2 a usage,
// config or lock-file error. Every subcommand takes -h. See README.md for
// the --json output of each subcommand.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses of every subcommand.
const (
	exitOK    = 0 // done, nothing to report
	exitFail  = 1 // drift, changes, a server that failed
	exitUsage = 2 // a usage, config or lock-file error
)

// A command is one subcommand: its name, a one-line summary for the usage
// text, and what runs it with the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, s *streams) int
}

// commands lists the subcommands in the order the usage text shows them.
// A new subcommand is one file with its run function and one line here.
func commands() []command {
	return []command{
		{"inspect", "connect to one server and report which of its tools bind", runInspect},
		{"lock", "record every configured server's catalog in the lock file, or --check it", runLock},
		{"diff", "show the changes between two lock files or two snapshots", runDiff},
		{"serve", "serve the approved tools of every configured server as one MCP server", func(ctx context.Context, args []string, s *streams) int {
			return runServe(ctx, args, os.Stdin, s.out, s.err)
		}},
		{"login", "sign in to an OAuth-protected http server and store its tokens", runLogin},
		{"logout", "delete a server's stored OAuth credentials", runLogout},
		{"auth", "auth status: each http server's stored OAuth state, never a token", runAuth},
		{"version", "print the version of purramcp and of go-sdk it was built with", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newStreams(os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}

// run dispatches args to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, s *streams) int {
	if len(args) == 0 {
		usage(s.err)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(s.out)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], s)
		}
	}
	fmt.Fprintf(s.err, "purramcp: unknown command %q\n\n", args[0])
	usage(s.err)
	return exitUsage
}

// usage prints the list of subcommands.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: purramcp COMMAND [FLAGS] [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'purramcp COMMAND -h' for a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 drift/changes/failed server, 2 usage, config or lock-file error.")
}
