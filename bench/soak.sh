#!/usr/bin/env bash
# Soak: a bounded mixed load on one toolhost server for several minutes, watching for leaks in
# the server and in its sandbox worker processes.
#
#   bash bench/soak.sh             # 300 s of load in rounds of 30 s
#   SMOKE=1 bash bench/soak.sh     # 30 s in rounds of 10 s: checks the harness
#
# The mix (bench/lib/soak.lua, per wrk thread, repeating every 10 requests): 3 free JS calls
# (soak-words, no capability), 2 JS calls with ctx.kv (soak-kv: get, set, list, delete), 2 with
# ctx.files (soak-files: write, readJson, list), 2 MCP `tools/call` over POST /ai/mcp (soak-kv
# and soak-words) and 1 paid call of the native receipt-echo-paid (x402 v2, a fresh authorization
# per call, signed by the x402_bench example as bench/payments.sh does; PAID=credit pays with a
# developer credit instead, PAID=none makes those slots free JS calls). soak-kv and soak-files
# belong to a builder (created by the admin) and their capabilities are granted by the admin;
# soak-words is the admin's.
#
# Samples (RSS, open fds and threads of the server and of each of its child processes, i.e. the
# sandbox workers; the sandbox gauges and counters and the answers by route and status from
# /metrics) are taken before the load and after every round (SETTLE s after wrk stopped, so no
# connection is open). "Warm" is the sample after the round that ends at or after WARM_PCT (20)
# % of the load: what grew before it is start-up (isolates built, caches, allocator arenas). The
# script compares the end with warm and exits 1 when open fds (server or workers) grow, worker
# processes, worker restarts, live or abandoned isolates grow, the worker pids change without a
# planned recycle (toolhost_sandbox_worker_recycles_total), the RSS peaks of the server or of the
# workers (summed) in the second half of the samples after warm exceed those of the first half
# by more than RSS_LIMIT_PCT (10) % (peaks, because workers are recycled: their RSS is a
# sawtooth, and a leak shows as rising peaks), or more than
# MAX_ERRORS (0) answers are 5xx. Server log lines at WARN or ERROR are listed in the report.
#
# Environment: DURATION (300) ROUND (30) seconds of load and per round; CONNECTIONS (8) THREADS
# (2) for wrk; WARM_PCT (20); RSS_LIMIT_PCT (10); FD_SLACK (0, fds the end may have over warm);
# MAX_ERRORS (0); SETTLE (2); PAID (x402 | credit | none; x402 needs the x402_bench example:
# X402_BENCH_BIN, else next to the toolhost binary, else built unless SKIP_BUILD=1, else credit);
# PAID_RATE (30: x402 authorizations signed per second of a round; once a thread's share is spent
# its paid slots become free calls); SANDBOX (workers | in-process) and SANDBOX_WORKERS (2);
# OUT (also write the report there); KEEP_WORK=1; SKIP_BUILD, TOOLHOST_BIN, TOOLHOST_REV as in
# run.sh. Everything listens on 127.0.0.1; every wait is bounded; the server is stopped on exit.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
SOAK="$BENCH_DIR/lib/soak.py"

if [ "${SMOKE:-0}" = 1 ]; then : "${DURATION:=30}" "${ROUND:=10}"; fi
DURATION=${DURATION:-300}
ROUND=${ROUND:-30}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-2}
WARM_PCT=${WARM_PCT:-20}
RSS_LIMIT_PCT=${RSS_LIMIT_PCT:-10}
FD_SLACK=${FD_SLACK:-0}
MAX_ERRORS=${MAX_ERRORS:-0}
SETTLE=${SETTLE:-2}
PAID=${PAID:-x402}
PAID_RATE=${PAID_RATE:-30}
SANDBOX=${SANDBOX:-workers}
SANDBOX_WORKERS=${SANDBOX_WORKERS:-2}
WRK=${WRK:-wrk}
for v in DURATION ROUND CONNECTIONS THREADS WARM_PCT RSS_LIMIT_PCT FD_SLACK MAX_ERRORS SETTLE PAID_RATE SANDBOX_WORKERS; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number (got ${!v})"
done
ROUNDS=$(((DURATION + ROUND - 1) / ROUND))
[ "$ROUNDS" -ge 2 ] || die "DURATION must cover at least two rounds of ROUND s (a warm sample and an end)"
# The warm sample: after the round that ends at or after WARM_PCT % of the load (never the last).
WARM_ROUND=$(((ROUNDS * WARM_PCT + 99) / 100))
[ "$WARM_ROUND" -ge 1 ] || WARM_ROUND=1
[ "$WARM_ROUND" -lt "$ROUNDS" ] || WARM_ROUND=$((ROUNDS - 1))
case $PAID in x402 | credit | none) ;; *) die "PAID must be x402, credit or none" ;; esac
case $SANDBOX in workers | in-process) ;; *) die "SANDBOX must be workers or in-process" ;; esac
[ "$WRK" = wrk ] && apt_install_missing wrk:wrk
command -v "$WRK" >/dev/null || die "$WRK not found"

STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
build_toolhost

# The x402 signer (the x402_bench example of the toolhost crate).
X402=
if [ "$PAID" = x402 ]; then
  X402=${X402_BENCH_BIN:-$(dirname "$TOOLHOST_BIN")/examples/x402_bench}
  if [ ! -x "$X402" ] && [ "${SKIP_BUILD:-0}" != 1 ] && [ -z "${TOOLHOST_REV:-}" ]; then
    log "cargo build --release -p toolhost --example x402_bench (the x402 signer)"
    (cd "$REPO" && cargo build --release -p toolhost --example x402_bench) >&2 || log "building x402_bench failed"
  fi
  if [ ! -x "$X402" ]; then
    log "no x402_bench at $X402: paying with a developer credit instead"
    PAID=credit
  fi
fi

port=$("$PY" "$HELPER" ports 1)
BASE="http://127.0.0.1:$port"
CMD=("$TOOLHOST_BIN" serve --addr "127.0.0.1:$port" --data "$WORK/data" --admin-token bench-admin-token)
if [ "$SANDBOX" = in-process ]; then CMD+=(--sandbox-in-process); else CMD+=(--sandbox-workers "$SANDBOX_WORKERS"); fi
start_bg toolhost "${CMD[@]}"
SERVER=$BG_PID
ok=0
for _ in $(seq 1 600); do # up to ~60 s
  curl -sf -o /dev/null "$BASE/healthz" && { ok=1; break; }
  kill -0 "$SERVER" 2>/dev/null || die "toolhost exited (log: $WORK/toolhost.log)"
  sleep 0.1
done
[ "$ok" = 1 ] || die "toolhost not ready (log: $WORK/toolhost.log)"
log "server pid $SERVER at $BASE: ${CMD[*]}"

"$PY" "$SOAK" setup "$BASE" bench-admin-token "$BENCH_DIR/soak" "$BENCH_DIR/peers/toolhost-bench-words.js" >/dev/null
PAID_ARG=-
if [ "$PAID" = credit ]; then
  PAID_ARG=$("$PY" "$SOAK" credit "$BASE" bench-admin-token 1000)
fi
"$PY" "$SOAK" check "$BASE" >&2 || die "a call of the mix failed (log: $WORK/toolhost.log)"

SAMPLES="$WORK/samples.jsonl"
ROUNDS_FILE="$WORK/rounds.jsonl"
: >"$SAMPLES"
: >"$ROUNDS_FILE"
sleep "$SETTLE"
"$PY" "$SOAK" sample "$SERVER" "$BASE" before 0 >>"$SAMPLES"
log "load: $ROUNDS round(s) of ${ROUND}s, wrk -t$THREADS -c$CONNECTIONS, paid: $PAID; warm sample after round $WARM_ROUND"
t0=$(date +%s.%N)
for round in $(seq 1 "$ROUNDS"); do
  kill -0 "$SERVER" 2>/dev/null || die "toolhost exited during the soak (log: $WORK/toolhost.log)"
  if [ "$PAID" = x402 ]; then
    PAID_ARG="$WORK/payments.txt"
    "$X402" headers "$BASE/tools/receipt-echo-paid" $((PAID_RATE * ROUND)) "$PAID_ARG" >/dev/null ||
      die "x402_bench could not sign payments"
  fi
  parsed=$("$PY" "$HELPER" loadrun --pid "$SERVER" --out "$WORK/wrk-$round.txt" --timeout $((ROUND + 60)) -- \
    "$WRK" -t"$THREADS" -c"$CONNECTIONS" -d"$ROUND"s --latency -s "$BENCH_DIR/lib/soak.lua" "$BASE" -- \
    "$PAID" "$PAID_ARG" "$THREADS") || die "wrk failed (see $WORK/wrk-$round.txt)"
  echo "$parsed" >>"$ROUNDS_FILE"
  sleep "$SETTLE"
  label=round
  [ "$round" = "$WARM_ROUND" ] && label=warm
  [ "$round" = "$ROUNDS" ] && label=end
  t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  "$PY" "$SOAK" sample "$SERVER" "$BASE" "$label" "$t" >>"$SAMPLES"
  log "round $round/$ROUNDS ($label, t=${t}s): $(tail -1 "$SAMPLES" | "$PY" "$SOAK" brief)"
done
kill -0 "$SERVER" 2>/dev/null || die "toolhost exited during the soak (log: $WORK/toolhost.log)"

META="$WORK/meta.json"
mode="$([ "${SMOKE:-0}" = 1 ] && echo 'SMOKE (short)' || echo 'full')"
sandbox_desc="$([ "$SANDBOX" = in-process ] && echo '--sandbox-in-process' || echo "worker processes (--sandbox-workers $SANDBOX_WORKERS)")"
machine="$(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $("$TOOLHOST_BIN" --version) built from $TOOLHOST_DESC"
# Log lines at WARN or ERROR (colour codes stripped).
sed 's/\x1b\[[0-9;]*m//g' "$WORK/toolhost.log" | grep -E '(^|[ Z])(WARN|ERROR) ' >"$WORK/log-problems.txt" || true
STARTED=$STARTED MODE=$mode SANDBOX_DESC=$sandbox_desc MACHINE=$machine LOADAVG="$(cut -d' ' -f1-3 /proc/loadavg)" \
  DURATION=$DURATION ROUND=$ROUND THREADS=$THREADS CONNECTIONS=$CONNECTIONS WARM_PCT=$WARM_PCT \
  RSS_LIMIT_PCT=$RSS_LIMIT_PCT FD_SLACK=$FD_SLACK MAX_ERRORS=$MAX_ERRORS PAID=$PAID PAID_RATE=$PAID_RATE \
  "$PY" - "$META" "$WORK/log-problems.txt" <<'PYEOF'
import json, os, sys
e = os.environ
paid = e["PAID"] + (f" ({e['PAID_RATE']} fresh authorizations signed per second of a round)" if e["PAID"] == "x402" else "")
json.dump({"started": e["STARTED"], "mode": e["MODE"], "duration": int(e["DURATION"]), "round": int(e["ROUND"]),
           "threads": e["THREADS"], "connections": e["CONNECTIONS"], "warm_pct": e["WARM_PCT"],
           "rss_limit_pct": e["RSS_LIMIT_PCT"], "fd_slack": e["FD_SLACK"], "max_errors": e["MAX_ERRORS"],
           "sandbox": e["SANDBOX_DESC"], "paid": paid, "machine": e["MACHINE"], "loadavg": e["LOADAVG"],
           "log_problems": [l.rstrip("\n")[:400] for l in open(sys.argv[2])]},
          open(sys.argv[1], "w"))
PYEOF
rc=0
"$PY" "$SOAK" report "$SAMPLES" "$ROUNDS_FILE" "$META" "$WORK/soak.md" || rc=$?
if [ -n "${OUT:-}" ]; then cp "$WORK/soak.md" "$OUT"; log "wrote $OUT"; fi
if [ "$rc" = 0 ]; then log "soak passed"; else log "soak FAILED (exit $rc)"; fi
exit "$rc"
