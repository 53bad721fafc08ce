package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// goSDKPath is the module path of the MCP SDK purramcp is built on.
const goSDKPath = "github.com/modelcontextprotocol/go-sdk"

// A versionInfo is what `purramcp version --json` prints.
type versionInfo struct {
	// Version is purramcp's module version, "(devel)" for a build from a
	// source tree.
	Version string `json:"version"`
	// GoSDK is the go-sdk module version it was built with.
	GoSDK string `json:"goSdk"`
	// Go is the Go toolchain that built it.
	Go string `json:"go"`
}

// buildVersions reads the versions from the binary's build information.
func buildVersions() versionInfo {
	v := versionInfo{Version: "(devel)", GoSDK: "unknown", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == goSDKPath {
			v.GoSDK = dep.Version
		}
	}
	return v
}

// moduleVersion is purramcp's version, the client version it announces.
func moduleVersion() string { return buildVersions().Version }

// runVersion is `purramcp version [--json]`.
func runVersion(_ context.Context, args []string, s *streams) int {
	fs := newFlags("version", "[--json]", "Print the version of purramcp, of go-sdk and of Go it was built with.", s)
	asJSON := fs.Bool("json", false, "print {\"version\", \"goSdk\", \"go\"} as JSON")
	rest, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		s.errorf("version", "unexpected argument %q", rest[0])
		return exitUsage
	}
	v := buildVersions()
	if *asJSON {
		if err := writeJSON(s.out, v); err != nil {
			return exitFail
		}
		return exitOK
	}
	fmt.Fprintf(s.out, "purramcp %s (go-sdk %s, %s)\n", v.Version, v.GoSDK, v.Go)
	return exitOK
}
