#!/usr/bin/env bash
# How long `pnpm start` takes until all three services answer /health, and how Ctrl-C ends it.
#
#   bash bench/start.sh [--runs 3] [--fresh-data] [--clean-build]
#
# --fresh-data removes the apps' .data folders first (the embedded databases are created again, as on
# the first start after setup); --clean-build removes every dist/, tsbuildinfo and turbo cache (what
# setup builds). Each run starts the services on free ports (INBOX_API_PORT, COLLAB_API_PORT,
# INBOX_MCP_PORT), polls /health every 50 ms, sends SIGINT, and prints one Markdown row per run with
# the machine's 1-minute load average (the machines are shared: compare figures at similar load).
# BENCH_INBOX_API_PORT etc. fix the ports instead.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3 fresh_data=0 clean_build=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --fresh-data) fresh_data=1; shift ;;
    --clean-build) clean_build=1; shift ;;
    *) echo "unknown option $1 (use --runs N, --fresh-data, --clean-build)" >&2; exit 2 ;;
  esac
done

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
now_ms() { date +%s%3N; }
load() { cut -d' ' -f1 /proc/loadavg; }

echo "| run | load before | all /health (s) | inbox-api | collab-api | inbox-mcp | Ctrl-C to exit (s) | exit | last line |"
echo "|---|---|---|---|---|---|---|---|---|"
for run in $(seq 1 "$runs"); do
  [ "$fresh_data" = 1 ] && rm -rf apps/*/.data
  if [ "$clean_build" = 1 ]; then
    rm -rf apps/*/dist packages/*/dist .turbo apps/*/.turbo packages/*/.turbo node_modules/.cache/turbo
    find apps packages -name '*.tsbuildinfo' -not -path '*/node_modules/*' -delete
  fi
  INBOX_API_PORT=${BENCH_INBOX_API_PORT:-$(free_port)} COLLAB_API_PORT=${BENCH_COLLAB_API_PORT:-$(free_port)}
  INBOX_MCP_PORT=${BENCH_INBOX_MCP_PORT:-$(free_port)}
  export INBOX_API_PORT COLLAB_API_PORT INBOX_MCP_PORT
  log=$(mktemp)
  load_before=$(load)
  start=$(now_ms)
  setsid pnpm start >"$log" 2>&1 &
  pid=$!
  declare -A up=()
  while [ ${#up[@]} -lt 3 ]; do
    for name_port in inbox-api:$INBOX_API_PORT collab-api:$COLLAB_API_PORT inbox-mcp:$INBOX_MCP_PORT; do
      name=${name_port%%:*}
      [ -n "${up[$name]:-}" ] && continue
      if curl -fs -o /dev/null --max-time 1 "http://127.0.0.1:${name_port#*:}/health"; then
        up[$name]=$(( $(now_ms) - start ))
      fi
    done
    if ! kill -0 "$pid" 2>/dev/null; then echo "pnpm start ended early; its output:" >&2; cat "$log" >&2; exit 1; fi
    [ $(( $(now_ms) - start )) -gt 300000 ] && { echo "not up after 300 s" >&2; kill -INT -- -"$pid"; exit 1; }
    sleep 0.05
  done
  all=$(( $(now_ms) - start ))
  stop=$(now_ms)
  # Ctrl-C in a terminal signals the whole foreground process group.
  kill -INT -- -"$pid"
  set +e; wait "$pid"; code=$?; set -e
  stopped=$(( $(now_ms) - stop ))
  last=$(grep -v '^\s*$' "$log" | tail -1)
  s() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
  echo "| $run | $load_before | $(s $all) | $(s "${up[inbox-api]}") | $(s "${up[collab-api]}") | $(s "${up[inbox-mcp]}") | $(s $stopped) | $code | ${last//|/\\|} |"
  unset up
  rm -f "$log"
done
