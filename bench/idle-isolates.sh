#!/usr/bin/env bash
# RSS cost of idle isolates in toolhost: start a server seeded with N endpoints (the same handler
# under distinct slugs), call each once (each gets its own isolate), wait, and report
# (VmRSS after - VmRSS before) / N. A fresh server and data dir per N.
#
#   bash bench/idle-isolates.sh                 # N = 50 and 200
#   IDLE_N="10" SKIP_BUILD=1 bash bench/idle-isolates.sh
#
# Environment: IDLE_N (list, default "50 200"; keep N <= 256, the pool's max_isolates, or
# isolates get evicted), GAP_MS (pause between endpoints, default 0), SETTLE (seconds before each
# RSS reading, default 2), OUT (markdown output, default: stdout only), SKIP_BUILD, TOOLHOST_BIN,
# TOOLHOST_REV (see run.sh).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"

IDLE_N=${IDLE_N:-50 200}
GAP_MS=${GAP_MS:-0}
SETTLE=${SETTLE:-2}
for n in $IDLE_N; do [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || die "IDLE_N entries must be whole numbers >= 1"; done

build_toolhost
BODY="$WORK/body.json"
"$PY" "$HELPER" body "$BODY" >/dev/null

table="| N | RSS before MiB | RSS after MiB | growth per isolate KiB | first call ms median (min–max) | second call ms median |
|---:|---:|---:|---:|---:|---:|"
for n in $IDLE_N; do
  seed="$WORK/seed-$n"
  "$PY" "$HELPER" seed "$seed" "$REPO/fixtures" "$n" "$BENCH_DIR/peers/toolhost-bench-words.js"
  port=$("$PY" "$HELPER" ports 1)
  start_bg "toolhost-$n" "$TOOLHOST_BIN" serve --addr "127.0.0.1:$port" --data "$WORK/data-$n" \
    --seed-dir "$seed" --admin-token bench-admin-token
  ok=0
  for _ in $(seq 1 600); do # up to ~60 s
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && { ok=1; break; }
    sleep 0.1
  done
  [ "$ok" = 1 ] || die "toolhost not ready (log: $WORK/toolhost-$n.log)"
  log "N=$n: calling $n endpoints once each"
  res=$("$PY" "$HELPER" endpoints --pid "$BG_PID" --base "http://127.0.0.1:$port" --body "$BODY" \
    --n "$n" --gap-ms "$GAP_MS" --settle "$SETTLE")
  stop_pid "$BG_PID"
  row=$("$PY" -c '
import json, statistics, sys
r = json.loads(sys.argv[1])
f, s = r["first_ms"], r["second_ms"]
print("| {} | {:.1f} | {:.1f} | {} | {:.2f} ({:.2f}–{:.2f}) | {:.2f} |".format(r["n"], r["rss_before_kib"] / 1024,
      r["rss_after_kib"] / 1024, r["rss_growth_per_endpoint_kib"], statistics.median(f), min(f), max(f),
      statistics.median(s)))' "$res")
  log "$row"
  table+=$'\n'"$row"
done

report="## toolhost idle isolates ($(date -u +%Y-%m-%dT%H:%M:%SZ))

$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $("$TOOLHOST_BIN" --version) built from $TOOLHOST_DESC;
load average $(cut -d' ' -f1-3 /proc/loadavg). VmRSS of the server process plus its sandbox worker processes (summed), read ${SETTLE} s after
it was ready and ${SETTLE} s after the last call. The spare isolates the pool keeps ready are in
both readings.

$table"
echo "$report"
if [ -n "${OUT:-}" ]; then echo "$report" >"$OUT"; log "wrote $OUT"; fi
