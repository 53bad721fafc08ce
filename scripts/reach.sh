#!/usr/bin/env bash
# Measures how many tools of real MCP servers from the npm registry bind
# under each SchemaPolicy, with the project's own inspector.
#
#   bash scripts/reach.sh            # inspect the saved catalogs, print a Markdown table
#   bash scripts/reach.sh -capture   # first re-capture every catalog with npx (network)
#
# -capture starts each server below at its pinned version with `npx -y`
# (Node.js 20+, the npm registry), saves its tools/list exactly as sent to
# testdata/catalogs/<name>.json (scripts/capture-tools.mjs) and stops it; no
# tool is ever called. The table is then computed offline: the inspector
# (purramcp inspect --catalog) serves each saved catalog from memory and
# lists and inspects it over the same path as a live server.
# TestReach_Catalogs pins the same figures, so a re-capture that changes
# them fails the suite until inspect_test.go, README.md and docs/reach.md are
# updated.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
sandbox=$(mktemp -d)
trap 'rm -rf "$bin" "$sandbox"' EXIT
(cd cmd/purramcp && go build -o "$bin/purramcp" .) # the command is a module of its own

# name|package@version|arguments ("$SANDBOX" is an empty directory)
servers=(
  "agentdeskai__browser-tools-mcp|@agentdeskai/browser-tools-mcp@1.2.1|"
  "antv__mcp-server-chart|@antv/mcp-server-chart@0.9.10|"
  "browsermcp__mcp|@browsermcp/mcp@0.1.3|"
  "chrome-devtools-mcp|chrome-devtools-mcp@1.11.0|--headless"
  "circleci__mcp-server-circleci|@circleci/mcp-server-circleci@0.20.0|"
  "cyanheads__git-mcp-server|@cyanheads/git-mcp-server@2.15.3|"
  "exa-mcp-server|exa-mcp-server@3.4.1|"
  "executeautomation__playwright-mcp-server|@executeautomation/playwright-mcp-server@1.0.12|"
  "kimtaeyoon83__mcp-server-youtube-transcript|@kimtaeyoon83/mcp-server-youtube-transcript@0.1.1|"
  "mastra__mcp-docs-server|@mastra/mcp-docs-server@0.13.31|"
  "mcp-server-kubernetes|mcp-server-kubernetes@4.1.7|"
  "modelcontextprotocol__server-everything|@modelcontextprotocol/server-everything@2026.8.31|"
  "modelcontextprotocol__server-filesystem|@modelcontextprotocol/server-filesystem@2026.8.31|\$SANDBOX"
  "modelcontextprotocol__server-github|@modelcontextprotocol/server-github@2025.4.8|"
  "modelcontextprotocol__server-memory|@modelcontextprotocol/server-memory@2026.8.31|"
  "modelcontextprotocol__server-postgres|@modelcontextprotocol/server-postgres@0.6.2|postgresql://localhost/none"
  "modelcontextprotocol__server-sequential-thinking|@modelcontextprotocol/server-sequential-thinking@2026.8.31|"
  "mongodb-mcp-server|mongodb-mcp-server@3.0.4|"
  "notionhq__notion-mcp-server|@notionhq/notion-mcp-server@2.5.2|"
  "openbnb__mcp-server-airbnb|@openbnb/mcp-server-airbnb@0.3.0|"
  "pinecone-database__mcp|@pinecone-database/mcp@0.3.0|"
  "playwright__mcp|@playwright/mcp@0.0.83|--headless"
  "shopify__dev-mcp|@shopify/dev-mcp@1.16.0|"
  "task-master-ai|task-master-ai@0.43.1|"
  "upstash__context7-mcp|@upstash/context7-mcp@4.1.1|"
)

if [ "${1:-}" = "-capture" ]; then
  for entry in "${servers[@]}"; do
    IFS='|' read -r name pkg args <<<"$entry"
    args=${args//\$SANDBOX/$sandbox}
    echo "capturing $pkg" >&2
    # shellcheck disable=SC2086
    node scripts/capture-tools.mjs "testdata/catalogs/$name.json" -- npx -y "$pkg" $args </dev/null
  done
fi

policies=("" "dialect" "annotations" "dialect,annotations" "extended" "dialect,annotations,extended")
echo "| server | tools | default | dialect | annotations | dialect+annotations | extended | all three |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
total=(0 0 0 0 0 0 0)
for entry in "${servers[@]}"; do
  IFS='|' read -r name pkg _ <<<"$entry"
  row="| \`$pkg\`"
  tools=0
  i=1
  for policy in "${policies[@]}"; do
    line=$("$bin/purramcp" inspect ${policy:+--policy "$policy"} --catalog "testdata/catalogs/$name.json" | grep -E ' tools bind under ')
    bound=$(sed -E 's/.*: ([0-9]+) of ([0-9]+) tools bind under.*/\1/' <<<"$line")
    tools=$(sed -E 's/.*: ([0-9]+) of ([0-9]+) tools bind under.*/\2/' <<<"$line")
    [ "$i" = 1 ] && row+=" | $tools"
    row+=" | $bound"
    total[i]=$((total[i] + bound))
    i=$((i + 1))
  done
  total[0]=$((total[0] + tools))
  echo "$row |"
done
echo "| all | ${total[0]} | ${total[1]} | ${total[2]} | ${total[3]} | ${total[4]} | ${total[5]} | ${total[6]} |"
