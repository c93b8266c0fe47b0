#!/usr/bin/env bash
# Instructions a request of a toolhost server, counted by callgrind over every thread of the
# server process: a figure that does not move with the machine's load, for comparing one step
# against another (bench/RESULTS.md; issue 40's method). Valgrind's CPU has no SHA extensions,
# so SHA-256 runs in software under it: compare builds with each other, not shares of a call.
#
#   bash bench/callgrind.sh [native|js] [SECONDS] [CONNECTIONS]
#   TOOLHOST_BIN=path/to/toolhost (default target/release/toolhost)
#   KEEP_DUMP=path keeps callgrind's dump there, for callgrind_annotate
#
# native: the free `receipt-echo`; js: the bench's `bench-words` (its sandbox worker processes
# are not counted: callgrind follows the server alone). The server is warmed for 5 s, the
# counters zeroed, then wrk runs SECONDS (default 20) with CONNECTIONS (default 16); the
# instructions counted over that time are divided by the requests wrk counted.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-native}
secs=${2:-20}
conns=${3:-16}
bin=${TOOLHOST_BIN:-$REPO/target/release/toolhost}
for tool in valgrind callgrind_control callgrind_annotate wrk curl; do
  command -v "$tool" >/dev/null || { echo "callgrind.sh: $tool is needed" >&2; exit 1; }
done
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$REPO"
python3 bench/lib/bench.py body "$work/body.json" >/dev/null
export BENCH_BODY_FILE="$work/body.json"
python3 bench/lib/bench.py seed "$work/seed" fixtures 0 bench/peers/toolhost-bench-words.js >/dev/null
port=$(python3 bench/lib/bench.py ports 1)
case $kind in
  native) path=tools/receipt-echo ;;
  js) path=tools/bench-words ;;
  *) echo "callgrind.sh: native or js, not $kind" >&2; exit 2 ;;
esac
url="http://127.0.0.1:$port/$path"
TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0 valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" \
  --dump-instr=no --collect-jumps=no \
  "$bin" serve --addr "127.0.0.1:$port" --data "$work/data" --seed-dir "$work/seed" \
  --admin-token bench-admin-token >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
wrk -t1 -c"$conns" -d5s --timeout 20s -s bench/lib/post.lua "$url" >/dev/null
callgrind_control -z "$server" >/dev/null 2>&1
wrk -t1 -c"$conns" -d"${secs}s" --timeout 20s -s bench/lib/post.lua "$url" >"$work/wrk.txt"
callgrind_control -d "$server" >/dev/null 2>&1
requests=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
dump=$(ls -t "$work"/cg.* | head -1)
[ -n "${KEEP_DUMP:-}" ] && cp "$dump" "$KEEP_DUMP"
instructions=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
if grep -q "Non-2xx" "$work/wrk.txt"; then
  echo "callgrind.sh: some answers were not 2xx:" >&2
  cat "$work/wrk.txt" >&2
  exit 1
fi
echo "$kind: $requests requests, $instructions instructions, $((instructions / requests)) a request"
