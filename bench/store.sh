#!/usr/bin/env bash
# Store benchmarks (issue 12): paid (x402 v2) and free receipt-echo throughput on four stores, in
# one run, interleaved: sled before durability (another build), durable sled (group commit), one
# node on PostgreSQL, two nodes on one PostgreSQL database (load split across both).
#   TOOLHOST_BASE_BIN=path bash bench/store.sh [DURATION_SECONDS] [ROUNDS] [CONNECTIONS]
#
# Peers (PEERS, default "sled-before sled pg-1 pg-2"; also pg-3 and pg-base):
#   sled-before  TOOLHOST_BASE_BIN, the build before durability; without it, BASE_REV (default
#                9c07c47, the main branch before durability) is built from a `git archive`
#                snapshot into BASE_TARGET_DIR (default $CARGO_TARGET_DIR-base, or target-base).
#   sled         this work tree's release build (`cargo build --release -p toolhost --bin toolhost
#                --example x402_bench`; SKIP_BUILD=1 uses what is built), embedded store.
#   pg-1, pg-2, pg-3  the same build with --store postgres://... on a throwaway PostgreSQL cluster
#                (initdb in a temp dir, trust auth, loopback, fsync on; as root it runs as the
#                `postgres` user), nodes A, B and C on one database; pg-1 loads A, pg-2 loads A and B,
#                pg-3 all three (the connections split evenly, one wrk thread per node).
#   pg-base      TOOLHOST_BASE_BIN (or BASE_REV's build) as one node on a database of its own in
#                the same cluster: a change to the PostgreSQL engine, before and after in one run.
# Knobs: BASE_DESC (how the report names the TOOLHOST_BASE_BIN build), DURATION (8), ROUNDS (3), CONNECTIONS (32; pg-2 gives each node half), WARMUP (3 s per
# server), PAY_RATE (5000: fresh payments signed per paid run = DURATION x PAY_RATE per node;
# a node that answers more paid calls a second than this runs out, and its refusals count),
# PERF (1: count fsync/fdatasync with perf tracepoints when perf works), PG_STATEMENTS (0; 1 loads
# `pg_stat_statements` and lists the statements PostgreSQL spent most time on, by database
# (pg-base's is toolhost_base), over the whole run, in pg_statements.txt of the work dir and
# on stderr; it costs PostgreSQL CPU of its own, so not for the figures), FSYNC_TEST (1: one
# `pg_test_fsync` pass for the disk's fsync latency), RECORD=1 (write the section of
# bench/RESULTS.md; otherwise print it), KEEP_WORK=1 (keep logs, raw wrk output, metrics).
# Safety: loopback only, free ports, bounded waits (60 s readiness, DURATION + 60 s per wrk run);
# servers and the PostgreSQL cluster are stopped and their directories removed at exit.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh" # exports TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0 (one loopback client); WORK, start_bg, cleanup
STORE_PY="$BENCH_DIR/lib/store.py"

DURATION=${1:-${DURATION:-8}}
ROUNDS=${2:-${ROUNDS:-3}}
CONNECTIONS=${3:-${CONNECTIONS:-32}}
WARMUP=${WARMUP:-3}
PAY_RATE=${PAY_RATE:-5000}
THREADS=2
PEERS=${PEERS:-sled-before sled pg-1 pg-2}
BASE_REV=${BASE_REV:-9c07c47}
export RUST_LOG=${RUST_LOG:-warn}
[ $((CONNECTIONS % 2)) = 0 ] || die "CONNECTIONS must be even (pg-2 splits it across two nodes)"

# ---------- cleanup: servers (common.sh), then PostgreSQL ----------
# shellcheck source=lib/pg.sh
. "$BENCH_DIR/lib/pg.sh"
store_cleanup() {
  local rc=$?
  cleanup # stops every toolhost server, removes WORK (unless KEEP_WORK=1)
  pg_stop
  return $rc
}
trap store_cleanup EXIT

# ---------- tools ----------
apt_install_missing wrk:wrk
for t in curl python3 git; do command -v "$t" >/dev/null || die "$t is missing"; done

# ---------- builds ----------
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
if [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$TARGET/release/toolhost" ] && [ -x "$TARGET/release/examples/x402_bench" ]; then
  log "SKIP_BUILD=1: using $TARGET/release as it is"
else
  log "cargo build --release -p toolhost --bin toolhost --example x402_bench"
  (cd "$REPO" && cargo build --release -p toolhost --bin toolhost --example x402_bench) >&2 || die "release build failed"
fi
BIN="$TARGET/release/toolhost"
SIGNER="$TARGET/release/examples/x402_bench"
CURRENT_DESC="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -n "$(git -C "$REPO" status --porcelain --untracked-files=no -- src Cargo.toml Cargo.lock sandbox 2>/dev/null)" ] && CURRENT_DESC+=" with modified sources"
CURRENT_DESC="commit $CURRENT_DESC, release profile"

if [[ " $PEERS " == *" sled-before "* || " $PEERS " == *" pg-base "* ]]; then
  if [ -n "${TOOLHOST_BASE_BIN:-}" ]; then
    [ -x "$TOOLHOST_BASE_BIN" ] || die "TOOLHOST_BASE_BIN=$TOOLHOST_BASE_BIN is not executable"
    BASE_BIN=$TOOLHOST_BASE_BIN
    BASE_DESC=${BASE_DESC:-TOOLHOST_BASE_BIN=$TOOLHOST_BASE_BIN}
  else
    sha=$(git -C "$REPO" rev-parse --verify "$BASE_REV^{commit}") || die "unknown revision $BASE_REV"
    src="$BENCH_CACHE/src-$sha"
    if [ ! -f "$src/Cargo.toml" ]; then
      rm -rf "$src" && mkdir -p "$src"
      git -C "$REPO" archive --format=tar "$sha" | tar -x -C "$src" || die "git archive $BASE_REV failed"
    fi
    base_target=${BASE_TARGET_DIR:-$TARGET-base}
    log "cargo build --release -p toolhost --bin toolhost (snapshot of $BASE_REV in $src, target dir $base_target)"
    (cd "$src" && CARGO_TARGET_DIR="$base_target" cargo build --release -p toolhost --bin toolhost) >&2 || die "release build of $BASE_REV failed"
    BASE_BIN="$base_target/release/toolhost"
    BASE_DESC="commit ${sha:0:7}, release profile"
  fi
fi

COMMANDS=()

# ---------- PostgreSQL ----------
PG_PORT=
if [[ " $PEERS " == *" pg-"* ]]; then
  PG_EXTRA=
  [ "${PG_STATEMENTS:-0}" = 1 ] && PG_EXTRA="-c shared_preload_libraries=pg_stat_statements"
  pg_start toolhost toolhost_base
  PG_URL=$(pg_url toolhost)
  PSQL="psql -h 127.0.0.1 -p $PG_PORT -U postgres -d toolhost"
  PSQL_BASE="psql -h 127.0.0.1 -p $PG_PORT -U postgres -d toolhost_base"
  [ "${PG_STATEMENTS:-0}" = 1 ] && { $PSQL -X -q -c "CREATE EXTENSION pg_stat_statements" >/dev/null || die "pg_stat_statements did not load"; }
fi

# ---------- servers ----------
declare -A PID_OF URL_OF
wait_ready() { # URL PID NAME
  local i
  for i in $(seq 600); do
    curl -sf "$1/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || die "$3 exited: $(tail -5 "$WORK/$3.log")"
    sleep 0.1
  done
  die "$3 not ready after 60 s: $(tail -5 "$WORK/$3.log")"
}
serve() { # NAME BIN [ARGS...]
  local name=$1 bin=$2; shift 2
  local port; port=$(free_port)
  start_bg "$name" "$bin" serve --addr "127.0.0.1:$port" --data "$WORK/$name-data" --admin-token bench-admin-token "$@"
  PID_OF[$name]=$BG_PID
  URL_OF[$name]="http://127.0.0.1:$port"
  COMMANDS+=("$(basename "$bin") serve --addr 127.0.0.1:$port --data \$WORK/$name-data --admin-token bench-admin-token $*   # $name")
  wait_ready "${URL_OF[$name]}" "$BG_PID" "$name"
}
for p in $PEERS; do
  case $p in
    sled-before) serve sled-before "$BASE_BIN" ;;
    sled) serve sled "$BIN" ;;
    pg-1 | pg-2 | pg-3)
      # Nodes one after another: the first creates the cluster's shared keys, the others load them.
      [ -n "${PID_OF[pg-a]:-}" ] || serve pg-a "$BIN" --store "$PG_URL"
      [ -n "${PID_OF[pg-b]:-}" ] || serve pg-b "$BIN" --store "$PG_URL"
      [ "$p" != pg-3 ] || [ -n "${PID_OF[pg-c]:-}" ] || serve pg-c "$BIN" --store "$PG_URL"
      ;;
    pg-base) serve pg-base "$BASE_BIN" --store "${PG_URL}_base" ;;
    *) die "unknown peer $p (sled-before, sled, pg-1, pg-2, pg-3, pg-base)" ;;
  esac
done
log "servers up: $(for n in "${!PID_OF[@]}"; do printf '%s=%s ' "$n" "${URL_OF[$n]}"; done)"

PERF_ARGS=()
if [ "${PERF:-1}" = 1 ] && command -v perf >/dev/null &&
  perf record -q -a -e syscalls:sys_enter_fsync -o "$WORK/perf-check.data" -- true >/dev/null 2>&1; then
  PERF_ARGS=(--perf)
else
  log "perf tracepoints unavailable: no fsync counts"
fi

MACHINE="$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
DISK="$(df -T "$WORK" | awk 'NR==2 {print $2 " on " $1}') (servers' data dirs and the PostgreSQL cluster, under ${TMPDIR:-/tmp})"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)

FSYNC_LINE="not measured"
if [ "${FSYNC_TEST:-1}" = 1 ] && [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/pg_test_fsync" ]; then
  # One 8 kB write then fdatasync / fsync, repeated for 1 s each: the disk's latency per durable write.
  out=$(timeout 120 "$PG_BIN/pg_test_fsync" -s 1 -f "$WORK/fsync-test" 2>&1 || true)
  FSYNC_LINE=$(printf '%s\n' "$out" | awk '/using one 8kB write/ {f=1} f && ($1 == "fdatasync" || $1 == "fsync") {printf "%s%s %s ops/s (%s µs/op)", sep, $1, $2, $4; sep="; "} f && /^$/ {exit}')
  [ -n "$FSYNC_LINE" ] && FSYNC_LINE="\`pg_test_fsync -s 1\`, one 8 kB write then the sync, same disk: $FSYNC_LINE" || FSYNC_LINE="pg_test_fsync gave no figure"
  log "$FSYNC_LINE"
fi

# ---------- warm-up ----------
for n in "${!PID_OF[@]}"; do
  timeout $((WARMUP + 30)) wrk -t1 -c8 -d"${WARMUP}s" -s "$BENCH_DIR/free.lua" "${URL_OF[$n]}/tools/receipt-echo" >/dev/null 2>&1 || log "warm-up of $n failed"
done

# ---------- measurements ----------
RAW="$WORK/store.raw.jsonl"
: >"$RAW"
PAYMENTS=$((DURATION * PAY_RATE))
TIMEOUT=$((DURATION + 60))

payments() { # NAME FILE: fresh authorizations for that server's paid echo
  timeout 600 "$SIGNER" headers "${URL_OF[$1]}/tools/receipt-echo-paid" "$PAYMENTS" "$2" || die "signing payments for $1 failed"
}

measure() { # PEER KIND ROUND
  local peer=$1 kind=$2 round=$3 nodes=() args=() n i
  case $peer in
    sled-before | sled | pg-base) nodes=("$peer") ;;
    pg-1) nodes=(pg-a) ;;
    pg-2) nodes=(pg-a pg-b) ;;
    pg-3) nodes=(pg-a pg-b pg-c) ;;
  esac
  local threads=$THREADS conns=$CONNECTIONS
  if [ ${#nodes[@]} -gt 1 ]; then threads=1; conns=$((CONNECTIONS / ${#nodes[@]})); fi
  if [ "$kind" = paid ]; then
    # Signed before the run (several nodes: in parallel), not timed. Wait for these jobs only: the
    # servers are background jobs of this shell too.
    local signers=()
    for n in "${nodes[@]}"; do
      payments "$n" "$WORK/pay-$n.txt" &
      signers+=($!)
    done
    for i in "${signers[@]}"; do wait "$i" || die "signing payments failed"; done
  fi
  for n in "${nodes[@]}"; do
    args+=(--server "${PID_OF[$n]}")
    if [ "$kind" = paid ]; then
      args+=(--wrk "wrk -t$threads -c$conns -d${DURATION}s --latency -s $BENCH_DIR/paid.lua ${URL_OF[$n]}/tools/receipt-echo-paid -- $WORK/pay-$n.txt $threads")
    else
      args+=(--wrk "wrk -t$threads -c$conns -d${DURATION}s --latency -s $BENCH_DIR/free.lua ${URL_OF[$n]}/tools/receipt-echo")
    fi
  done
  local psql=${PSQL:-}
  [ "$peer" = pg-base ] && psql=$PSQL_BASE
  if [[ $peer == pg-* ]]; then args+=(--pg-postmaster "$PG_PID" --psql "$psql" --sample-after $((DURATION / 2))); fi
  python3 "$STORE_PY" measure --label "$peer" --round "$round" --kind "$kind" --raw "$RAW" \
    --timeout "$TIMEOUT" --keep "$WORK/wrk-$peer-$kind-$round" "${PERF_ARGS[@]}" "${args[@]}" >/dev/null
  [ "$kind" = paid ] && for n in "${nodes[@]}"; do rm -f "$WORK/pay-$n.txt"; done
  return 0
}

read -r -a ORDER <<<"$PEERS"
for round in $(seq 1 "$ROUNDS"); do
  log "round $round of $ROUNDS"
  k=$(((round - 1) % ${#ORDER[@]}))
  for j in $(seq 0 $((${#ORDER[@]} - 1))); do
    peer=${ORDER[$(((k + j) % ${#ORDER[@]}))]}
    measure "$peer" free "$round"
    measure "$peer" paid "$round"
  done
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
ENDED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$WORK/metrics"
for n in "${!PID_OF[@]}"; do curl -sf "${URL_OF[$n]}/metrics" >"$WORK/metrics/$n.metrics" || true; done
[ -n "$PG_PORT" ] && $PSQL -X -A -c "SELECT datname, xact_commit, xact_rollback, conflicts, deadlocks FROM pg_stat_database WHERE datname = 'toolhost'" >"$WORK/pg_stat_database.txt" 2>&1 || true
if [ -n "$PG_PORT" ] && [ "${PG_STATEMENTS:-0}" = 1 ]; then
  $PSQL -X -c "SELECT d.datname AS db, calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 4) AS mean_ms, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 140) AS query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname LIKE 'toolhost%' ORDER BY total_exec_time DESC LIMIT 40" >"$WORK/pg_statements.txt" 2>&1 || true
  cat "$WORK/pg_statements.txt" >&2
fi

COMMANDS+=(
  "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --latency -s bench/free.lua URL/tools/receipt-echo"
  "x402_bench headers URL/tools/receipt-echo-paid $PAYMENTS pay.txt   # before each paid run, per node"
  "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --latency -s bench/paid.lua URL/tools/receipt-echo-paid -- pay.txt $THREADS"
  "# pg-2, pg-3: the same with -t1 and the connections split evenly, against each node at once"
  "perf record -a -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_sync_file_range   # during each run; events counted by process"
)
printf '%s\n' "${COMMANDS[@]}" >"$WORK/commands.txt"
PEERS_M=$PEERS STARTED=$STARTED ENDED=$ENDED MACHINE=$MACHINE DISK=$DISK LOAD_BEFORE=$LOAD_BEFORE \
  LOAD_AFTER=$LOAD_AFTER FSYNC_LINE=$FSYNC_LINE BASE_DESC=${BASE_DESC:-not run} CURRENT_DESC=$CURRENT_DESC \
  PG_VERSION=${PG_VERSION:-} THREADS=$THREADS CONNECTIONS=$CONNECTIONS DURATION=$DURATION ROUNDS=$ROUNDS \
  PAYMENTS=$PAYMENTS INVOCATION="$(printf 'RECORD=%s bash bench/store.sh %s %s %s' "${RECORD:-0}" "$DURATION" "$ROUNDS" "$CONNECTIONS")" \
  python3 - "$WORK/meta.json" "$WORK/commands.txt" "$WORK/metrics" <<'EOF'
import json, os, sys
e = os.environ
json.dump({
    "peers": e["PEERS_M"].split(), "started": e["STARTED"], "ended": e["ENDED"], "machine": e["MACHINE"],
    "disk": e["DISK"], "load_before": e["LOAD_BEFORE"], "load_after": e["LOAD_AFTER"], "fsync_test": e["FSYNC_LINE"],
    "threads": int(e["THREADS"]), "connections": int(e["CONNECTIONS"]), "duration": int(e["DURATION"]),
    "rounds": int(e["ROUNDS"]), "payments_per_run": int(e["PAYMENTS"]), "base_desc": e["BASE_DESC"],
    "current_desc": e["CURRENT_DESC"], "pg_version": e["PG_VERSION"], "metrics_dir": sys.argv[3],
    "commands": ["TOOLHOST_BASE_BIN=... " + e["INVOCATION"], "# which runs:"] + open(sys.argv[2]).read().splitlines(),
}, open(sys.argv[1], "w"), indent=1)
EOF
if [ "${RECORD:-0}" = 1 ]; then
  python3 "$STORE_PY" report --raw "$RAW" --meta "$WORK/meta.json" --out "$BENCH_DIR/RESULTS.md"
else
  python3 "$STORE_PY" report --raw "$RAW" --meta "$WORK/meta.json"
fi
