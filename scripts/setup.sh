#!/usr/bin/env bash
# Prepares a fresh clone: brings Node.js to the major in .node-version (from the npm registry,
# under .tools/, when the machine's node is older), installs the pinned pnpm if it is missing,
# and installs the workspace (which also generates the Prisma clients). Safe to run again.
#
# Every pnpm script then runs on that Node: pnpm puts the workspace's node_modules/.bin on the
# PATH of its scripts, and the `node` linked there (tools/node) runs the one under .tools/ when
# it exists, else the machine's own.
set -euo pipefail
cd "$(dirname "$0")/.."

wanted_major=$(cut -d. -f1 .node-version)
major_of() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "Node.js and npm are needed to set up (any version from 18 on; Node.js $wanted_major is installed from them)." >&2
  exit 1
fi

# pnpm goes where the machine's npm puts global commands (so that the shell which ran this script
# finds it next): installed before PATH points at the Node under .tools/, whose npm prefix is
# inside the clone and on nobody's PATH.
pnpm_version=$(node -p "require('./package.json').packageManager.split('@')[1]")
if [ "$(pnpm --version 2>/dev/null || true)" != "$pnpm_version" ]; then
  echo "Installing pnpm $pnpm_version"
  npm install --global --no-audit --no-fund "pnpm@$pnpm_version"
fi

installed=.tools/node/node_modules/node/bin/node
if [ "$(major_of node)" -ge "$wanted_major" ]; then
  if [ -e .tools/node ]; then
    echo "The machine's Node.js $(node --version) is recent enough; removing the one under .tools/"
    rm -rf .tools/node
  fi
else
  if [ "$(major_of "$installed" || echo 0)" != "$wanted_major" ]; then
    echo "The machine's Node.js is $(node --version); installing Node.js $wanted_major from the npm registry under .tools/node"
    rm -rf .tools/node
    # Installed outside the clone, then moved in: npm runs the package's install script with every
    # enclosing node_modules/.bin on its PATH, and the workspace's (once installed) holds tools/node,
    # which refuses the machine's older Node.
    staging=$(mktemp -d)
    npm install --prefix "$staging" --no-audit --no-fund --loglevel=error "node@$wanted_major"
    mkdir -p .tools
    mv "$staging" .tools/node
  fi
  # For the rest of this script: pnpm and the install scripts it runs use that Node too.
  PATH="$PWD/$(dirname "$installed"):$PATH"
  export PATH
fi

if [ "${CI:-}" = "true" ]; then
  pnpm install --frozen-lockfile
else
  pnpm install
fi

echo "Workspace scripts run on Node.js $(pnpm exec node --version)"

# Built once here, so that `pnpm start` finds everything in turbo's cache (and rebuilds only what changes).
echo "Building the packages and apps once (12 s on a quiet machine, over a minute on a busy one)"
TURBO_TELEMETRY_DISABLED=1 pnpm exec turbo run build --filter=./apps/* --output-logs=errors-only
