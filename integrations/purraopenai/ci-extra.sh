#!/bin/sh
# ci-extra.sh: the second test run of this module, against the newest
# openai-go v3 the module proxy serves (go.newest.mod / go.newest.sum), after
# the usual run against the floor version in go.mod. Run from anywhere;
# exits non-zero on the first failure.
set -eu
cd "$(dirname "$0")"
export GOWORK=off
go mod tidy -modfile=go.newest.mod -diff
v=$(go list -modfile=go.newest.mod -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)
if [ "$v" != "v1.8.0" ]; then
	echo "integrations/purraopenai (go.newest.mod) resolves go-sdk $v, core is measured on v1.8.0" >&2
	exit 1
fi
go vet -modfile=go.newest.mod ./...
go test -race -modfile=go.newest.mod ./...
