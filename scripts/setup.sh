#!/usr/bin/env bash
# Prepares a fresh clone: checks Node, installs the pinned pnpm if it is missing, installs
# the workspace (which also generates the Prisma clients). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

required_node="20.19.0"
if ! node -e "const [a,b]=process.versions.node.split('.').map(Number); const [x,y]=process.argv[1].split('.').map(Number); process.exit(a>x||(a===x&&b>=y)?0:1)" "$required_node"; then
  echo "Node.js >= $required_node is required (found $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi

pnpm_version=$(node -p "require('./package.json').packageManager.split('@')[1]")
if [ "$(pnpm --version 2>/dev/null || true)" != "$pnpm_version" ]; then
  echo "Installing pnpm $pnpm_version"
  npm install --global --no-audit --no-fund "pnpm@$pnpm_version"
fi

if [ "${CI:-}" = "true" ]; then
  pnpm install --frozen-lockfile
else
  pnpm install
fi
