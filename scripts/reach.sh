#!/usr/bin/env bash
# Measures how many tools of real MCP servers from the npm registry bind
# under each SchemaPolicy, with the project's own inspector. It downloads
# the servers with npx, so it is never part of the test suite; run it by hand:
#
#   bash scripts/reach.sh            # prints a Markdown table
#
# Needs Node.js 20+ with npx and network access to the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/inspect" ./examples/inspect
sandbox=$(mktemp -d)

servers=(
  "@modelcontextprotocol/server-everything|npx -y @modelcontextprotocol/server-everything"
  "@modelcontextprotocol/server-filesystem|npx -y @modelcontextprotocol/server-filesystem $sandbox"
  "@modelcontextprotocol/server-memory|npx -y @modelcontextprotocol/server-memory"
  "@modelcontextprotocol/server-sequential-thinking|npx -y @modelcontextprotocol/server-sequential-thinking"
  "@playwright/mcp|npx -y @playwright/mcp --headless"
  "chrome-devtools-mcp|npx -y chrome-devtools-mcp --headless"
)
policies=("" "-dialect" "-annotations" "-dialect -annotations")

echo "| server | tools | default | dialect | annotations | dialect+annotations |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
total=(0 0 0 0 0)
for entry in "${servers[@]}"; do
  name=${entry%%|*}
  cmd=${entry#*|}
  row="| \`$name\`"
  tools=""
  i=0
  for policy in "${policies[@]}"; do
    # shellcheck disable=SC2086
    line=$("$bin/inspect" -timeout 300s $policy -- $cmd 2>/dev/null | grep -E '^policy ' || true)
    if [ -z "$line" ]; then
      row+=" | n/a"
      continue
    fi
    bound=$(sed -E 's/.*: ([0-9]+) of ([0-9]+) tools bindable.*/\1/' <<<"$line")
    tools=$(sed -E 's/.*: ([0-9]+) of ([0-9]+) tools bindable.*/\2/' <<<"$line")
    row+=" | $bound"
    total[$((i + 1))]=$((total[$((i + 1))] + bound))
    i=$((i + 1))
  done
  total[0]=$((total[0] + ${tools:-0}))
  echo "| \`$name\` | ${tools:-n/a}${row#"| \`$name\`"} |" | sed 's/| \([0-9]*\) | \([0-9]*\) |/| \1 | \2 |/'
done
echo "| all | ${total[0]} | ${total[1]} | ${total[2]} | ${total[3]} | ${total[4]} |"
