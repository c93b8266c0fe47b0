#!/usr/bin/env bash
# Benchmark one small JSON tool handler in toolhost (JS sandbox and native receipt_echo),
# a minimal axum server (the ceiling for a Rust HTTP service), workerd, Deno and Node (plain and
# node:vm), and write bench/RESULTS.md.
#
#   bash bench/run.sh             # full run: 10 s x 5 reps per peer (~10 min plus the build)
#   SMOKE=1 bash bench/run.sh     # smoke: 2 s x 1 rep, checks that everything works
#
# Environment (defaults for a full run; SMOKE=1 shortens them):
#   DURATION=10  REPS=5  WARMUP=5  CONNECTIONS=64  THREADS=2   wrk load
#   COLD_REPS=5                      fresh process starts per peer for the cold-start column
#   COLD_N=20  COLD_GAP_MS="0 100"   toolhost endpoint cold start: N never-called endpoints, called
#                                    back to back (0) and with a pause that lets the pool refill its
#                                    spare isolates (100); one fresh server per gap
#   PEERS="toolhost-js toolhost-js-inprocess toolhost-native axum-ceiling workerd deno node node-vm"
#                                    toolhost-js: JS in sandbox worker processes (the default of
#                                    `toolhost serve`); toolhost-js-inprocess: the same binary and
#                                    endpoint in another server started with --sandbox-in-process;
#                                    axum-ceiling: bench/axum-ceiling/, the handler natively in axum
#   OUT=bench/RESULTS.md             where the table goes
#   SKIP_BUILD=1                     use the existing target/release/toolhost without cargo build
#   TOOLHOST_BIN=path                use this toolhost binary (no build)
#   TOOLHOST_REV=HEAD                build that commit from a `git archive` snapshot, not the work tree
#   AXUM_CEILING_BIN=path            use this axum-ceiling binary (no build; otherwise it is built
#                                    from the work tree, `cargo build --release -p axum-ceiling`)
#   TOOLHOST_BASE_BIN=path           also run this toolhost binary's JS endpoint as peer
#                                    `toolhost-base-js` (its own process): before/after in one run
#   PEERS_DIR=~/.cache/toolhost-bench/peers   where workerd and deno are installed
#   KEEP_WORK=1                      keep the temp dir (server logs, raw wrk output)
# Everything listens on and loads 127.0.0.1 only; every wait is bounded; servers are stopped on exit.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"

if [ "${SMOKE:-0}" = 1 ]; then
  : "${DURATION:=2}" "${REPS:=1}" "${WARMUP:=1}" "${COLD_REPS:=1}" "${COLD_N:=5}"
fi
DURATION=${DURATION:-10}
REPS=${REPS:-5}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
COLD_REPS=${COLD_REPS:-5}
COLD_N=${COLD_N:-20}
COLD_GAP_MS=${COLD_GAP_MS:-0 100}
DEFAULT_PEERS="toolhost-js toolhost-js-inprocess toolhost-native axum-ceiling workerd deno node node-vm"
[ -n "${TOOLHOST_BASE_BIN:-}" ] && DEFAULT_PEERS="toolhost-js toolhost-js-inprocess toolhost-base-js toolhost-native axum-ceiling workerd deno node node-vm"
PEERS=${PEERS:-$DEFAULT_PEERS}
OUT=${OUT:-$BENCH_DIR/RESULTS.md}
WRK=${WRK:-wrk}
for v in DURATION REPS WARMUP CONNECTIONS THREADS COLD_REPS COLD_N; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number (got ${!v})"
done
for g in $COLD_GAP_MS; do [[ $g =~ ^[0-9]+$ ]] || die "COLD_GAP_MS entries must be whole numbers (got $g)"; done
[ "$REPS" -ge 1 ] && [ "$DURATION" -ge 1 ] || die "REPS and DURATION must be >= 1"
[ "$WRK" = wrk ] && apt_install_missing wrk:wrk curl:curl
command -v "$WRK" >/dev/null || die "$WRK not found"
command -v curl >/dev/null || die "curl not found"

STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
CPU_START=$(cpu_json)
RAW="$WORK/raw.jsonl"
: >"$RAW"
COMMANDS=()

# ---------- setup ----------
install_peers
build_toolhost
[[ " $PEERS " == *" axum-ceiling "* ]] && build_ceiling
BODY="$WORK/body.json"
BODY_BYTES=$("$PY" "$HELPER" body "$BODY")
export BENCH_BODY_FILE="$BODY"
LUA="$BENCH_DIR/lib/post.lua"
export DENO_DIR="$WORK/deno-dir" DENO_NO_UPDATE_CHECK=1 NO_COLOR=1

SEED="$WORK/seed"
"$PY" "$HELPER" seed "$SEED" "$REPO/fixtures" 0 "$BENCH_DIR/peers/toolhost-bench-words.js"
SEED_COLD="$WORK/seed-cold"
"$PY" "$HELPER" seed "$SEED_COLD" "$REPO/fixtures" "$COLD_N" "$BENCH_DIR/peers/toolhost-bench-words.js"

# Which peers can run.
ACTIVE=()
for p in $PEERS; do
  case $p in
    toolhost-js | toolhost-js-inprocess | toolhost-native | axum-ceiling) ACTIVE+=("$p") ;;
    toolhost-base-js) [ -x "${TOOLHOST_BASE_BIN:-}" ] || die "toolhost-base-js needs TOOLHOST_BASE_BIN"; ACTIVE+=("$p") ;;
    workerd) [ -n "$WORKERD_BIN" ] && ACTIVE+=("$p") ;;
    deno) [ -n "$DENO_BIN" ] && ACTIVE+=("$p") ;;
    node | node-vm) [ -n "$NODE_BIN" ] && ACTIVE+=("$p") ;;
    *) die "unknown peer $p" ;;
  esac
done
log "peers: ${ACTIVE[*]}"
for s in "${PEER_SKIPS[@]}"; do log "skipped: $s"; done

# peer_cmd PEER PORT DATA: fills CMD (array) with the server command line, URL with the POST URL
# and KIND with the expected answer (words|echo).
peer_cmd() {
  local peer=$1 port=$2 data=$3
  case $peer in
    toolhost-js | toolhost-native)
      CMD=("$TOOLHOST_BIN" serve --addr "127.0.0.1:$port" --data "$data" --seed-dir "$SEED" --admin-token bench-admin-token)
      if [ "$peer" = toolhost-js ]; then URL="http://127.0.0.1:$port/tools/bench-words"; KIND=words
      else URL="http://127.0.0.1:$port/tools/receipt-echo"; KIND="echo"; fi ;;
    toolhost-js-inprocess) # the same binary and endpoint, JavaScript on threads of the server
      CMD=("$TOOLHOST_BIN" serve --addr "127.0.0.1:$port" --data "$data" --seed-dir "$SEED" --admin-token bench-admin-token --sandbox-in-process)
      URL="http://127.0.0.1:$port/tools/bench-words"; KIND=words ;;
    toolhost-base-js)
      CMD=("$TOOLHOST_BASE_BIN" serve --addr "127.0.0.1:$port" --data "$data" --seed-dir "$SEED" --admin-token bench-admin-token)
      URL="http://127.0.0.1:$port/tools/bench-words"; KIND=words ;;
    axum-ceiling) CMD=("$CEILING_BIN" "$port"); URL="http://127.0.0.1:$port/"; KIND=words ;;
    workerd)
      CMD=("$WORKERD_BIN" serve "$BENCH_DIR/peers/workerd.capnp" --socket-addr "http=127.0.0.1:$port")
      URL="http://127.0.0.1:$port/"; KIND=words ;;
    deno)
      CMD=("$DENO_BIN" run --allow-net=127.0.0.1 --no-prompt "$BENCH_DIR/peers/deno-server.js" "$port")
      URL="http://127.0.0.1:$port/"; KIND=words ;;
    node) CMD=("$NODE_BIN" "$BENCH_DIR/peers/node-server.js" "$port" plain); URL="http://127.0.0.1:$port/"; KIND=words ;;
    node-vm) CMD=("$NODE_BIN" "$BENCH_DIR/peers/node-server.js" "$port" vm); URL="http://127.0.0.1:$port/"; KIND=words ;;
  esac
}

# ---------- cold start: spawn -> first 200, fresh process (and fresh data dir) each time ----------
log "cold start: $COLD_REPS fresh start(s) per peer, interleaved"
for rep in $(seq 1 "$COLD_REPS"); do
  for p in "${ACTIVE[@]}"; do
    port=$("$PY" "$HELPER" ports 1)
    data="$WORK/cold-data-$p-$rep"
    rm -rf "$data"
    peer_cmd "$p" "$port" "$data"
    [ "$rep" = 1 ] && COMMANDS+=("# cold start ($p): spawn, then POST $URL every ~1 ms until 200" "${CMD[*]}")
    res=$("$PY" "$HELPER" coldstart --url "$URL" --body "$BODY" --log "$WORK/cold-$p.log" \
      --pidfile "$WORK/pidfiles/cold" --timeout 60 -- "${CMD[@]}") || die "cold start of $p failed (log: $WORK/cold-$p.log)"
    rm -rf "$data"
    printf '{"type":"cold","peer":"%s","rep":%d,%s\n' "$p" "$rep" "${res#\{}" >>"$RAW"
    log "  $p: $res"
  done
done

# ---------- load ----------
declare -A PID_OF URL_OF
TH_PID=
start_peer() {
  local p=$1 port
  if [[ $p == toolhost-js || $p == toolhost-native ]] && [ -n "$TH_PID" ]; then
    PID_OF[$p]=$TH_PID; URL_OF[$p]=${TH_BASE}/tools/$([ "$p" = toolhost-js ] && echo bench-words || echo receipt-echo)
    return
  fi
  port=$("$PY" "$HELPER" ports 1)
  peer_cmd "$p" "$port" "$WORK/load-data-$p"
  start_bg "$p" "${CMD[@]}"
  COMMANDS+=("# load server ($p)" "${CMD[*]}")
  PID_OF[$p]=$BG_PID; URL_OF[$p]=$URL
  if [[ $p == toolhost-js || $p == toolhost-native ]]; then TH_PID=$BG_PID; TH_BASE="http://127.0.0.1:$port"; fi
}
for p in "${ACTIVE[@]}"; do start_peer "$p"; done
for p in "${ACTIVE[@]}"; do
  "$PY" "$HELPER" wait "${URL_OF[$p]}" "$BODY" 60 || die "$p not ready (log: $WORK/$p.log)"
  peer_cmd "$p" 0 x  # for KIND
  answer=$("$PY" "$HELPER" check "${URL_OF[$p]}" "$BODY" "$KIND") || die "$p answered wrongly"
  log "$p ready at ${URL_OF[$p]} (pid ${PID_OF[$p]}): ${answer:0:120}"
done

wrk_run() { # PEER DURATION OUTFILE
  timeout $(($2 + 60)) "$WRK" -t"$THREADS" -c"$CONNECTIONS" -d"$2"s --latency -s "$LUA" "${URL_OF[$1]}" >"$3" 2>&1
}
COMMANDS+=("# load (per peer and repetition)" "BENCH_BODY_FILE=body.json $WRK -t$THREADS -c$CONNECTIONS -d${DURATION}s --latency -s bench/lib/post.lua URL")
if [ "$WARMUP" -gt 0 ]; then
  for p in "${ACTIVE[@]}"; do
    log "warm-up $p (${WARMUP}s)"
    wrk_run "$p" "$WARMUP" "$WORK/warmup-$p.txt" || log "warm-up of $p: wrk exited non-zero"
  done
fi
for rep in $(seq 1 "$REPS"); do
  for p in "${ACTIVE[@]}"; do
    out="$WORK/wrk-$p-$rep.txt"
    log "rep $rep/$REPS $p"
    parsed=$("$PY" "$HELPER" loadrun --pid "${PID_OF[$p]}" --out "$out" --timeout $((DURATION + 60)) -- \
      "$WRK" -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION"s --latency -s "$LUA" "${URL_OF[$p]}") || die "wrk on $p failed (see $out)"
    printf '{"type":"wrk","peer":"%s","rep":%d,%s\n' "$p" "$rep" "${parsed#\{}" >>"$RAW"
  done
done
for p in "${ACTIVE[@]}"; do # the server and its child processes (toolhost's sandbox workers)
  res=$("$PY" "$HELPER" rsstree "${PID_OF[$p]}")
  printf '{"type":"rss_after_load","peer":"%s",%s\n' "$p" "${res#\{}" >>"$RAW"
done
# Stop the load servers before the endpoint phase.
for p in "${ACTIVE[@]}"; do stop_pid "${PID_OF[$p]}"; done

# ---------- toolhost endpoint cold start ----------
EP_MODES=()
[[ " ${ACTIVE[*]} " == *" toolhost-js "* ]] && EP_MODES+=(workers)
[[ " ${ACTIVE[*]} " == *" toolhost-js-inprocess "* ]] && EP_MODES+=(in-process)
if [ "${#EP_MODES[@]}" -gt 0 ] && [ "$COLD_N" -gt 0 ]; then
  for mode in "${EP_MODES[@]}"; do
  for gap in $COLD_GAP_MS; do # a fresh server and data dir per sandbox mode and gap
    port=$("$PY" "$HELPER" ports 1)
    rm -rf "$WORK/ep-data"
    CMD=("$TOOLHOST_BIN" serve --addr "127.0.0.1:$port" --data "$WORK/ep-data" --seed-dir "$SEED_COLD" --admin-token bench-admin-token)
    [ "$mode" = in-process ] && CMD+=(--sandbox-in-process)
    start_bg "toolhost-endpoints-$mode-$gap" "${CMD[@]}"
    COMMANDS+=("# endpoint cold start ($mode), gap $gap ms: server seeded with $COLD_N copies of bench-words (bench-cold-NNNN)" "${CMD[*]}")
    ok=0
    for _ in $(seq 1 600); do # up to ~60 s
      curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && { ok=1; break; }
      sleep 0.1
    done
    [ "$ok" = 1 ] || die "toolhost (endpoint phase) not ready (log: $WORK/toolhost-endpoints-$mode-$gap.log)"
    log "endpoint cold start ($mode): $COLD_N endpoints, gap $gap ms"
    res=$("$PY" "$HELPER" endpoints --pid "$BG_PID" --base "http://127.0.0.1:$port" --body "$BODY" \
      --n "$COLD_N" --gap-ms "$gap" --mode "$mode")
    printf '{"type":"endpoints",%s\n' "${res#\{}" >>"$RAW"
    stop_pid "$BG_PID"
  done
  done
fi

# ---------- report ----------
CPU_END=$(cpu_json)
ver() { "$@" 2>&1 | head -1 | tr -d '\r' || true; }
steal_total=$("$PY" "$HELPER" cpudiff "$CPU_START" "$CPU_END")
META="$WORK/meta.json"
{
  facts=(
    "mode" "$([ "${SMOKE:-0}" = 1 ] && echo 'SMOKE (short runs)' || echo full)"
    "machine" "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    "CPU steal / idle" "$steal_total; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    "toolhost" "$(ver "$TOOLHOST_BIN" --version), built from $TOOLHOST_DESC, release profile, QuickJS backend (default features)"
    "axum-ceiling" "$([ -n "${CEILING_BIN:-}" ] && echo "$CEILING_DESC" || echo 'not run')"
    "workerd" "$([ -n "$WORKERD_BIN" ] && ver "$WORKERD_BIN" --version || echo 'not run')"
    "deno" "$([ -n "$DENO_BIN" ] && ver "$DENO_BIN" --version || echo 'not run')"
    "node" "$([ -n "$NODE_BIN" ] && ver "$NODE_BIN" --version || echo 'not run')"
    "wrk" "$(ver "$WRK" -v | cut -d' ' -f1-2)"
    "request" "POST, $BODY_BYTES-byte JSON body {\"text\": ...}, Content-Type application/json, keep-alive"
  )
  for s in "${PEER_SKIPS[@]}"; do facts+=("skipped" "$s"); done
  WORK="$WORK" "$PY" - "$META" "$STARTED" "${SMOKE:-0}" "$DURATION" "$REPS" "$CONNECTIONS" "$THREADS" "$COLD_REPS" \
    "$(cat "$BODY")" "${#COMMANDS[@]}" "${COMMANDS[@]}" "${ACTIVE[*]}" "${facts[@]}" <<'PYEOF'
import json, os, sys
a = sys.argv[1:]
body = a.pop(8)
meta_path, started, smoke, duration, reps, conns, threads, cold_reps, ncmd = a[:9]
ncmd = int(ncmd)
commands = a[9:9 + ncmd]
peers = a[9 + ncmd].split()
rest = a[10 + ncmd:]
facts = [[rest[i], rest[i + 1]] for i in range(0, len(rest), 2)]
notes = [] if not any(p.startswith("toolhost") for p in peers) else [
    "toolhost-js and toolhost-native are two endpoints of one toolhost process started as `toolhost serve` starts by default: JavaScript runs in sandbox worker processes (`--sandbox-workers 2`; every call crosses to a worker and back, every `ctx` op back to the server); the RSS column shows that process (and its workers) after both were loaded. toolhost-js-inprocess is the same binary and the same JS endpoint in a second toolhost process started with `--sandbox-in-process` (isolates on threads of the server, the mode before worker processes): toolhost-js / toolhost-js-inprocess is the cost of the process boundary. toolhost-base-js (when present) is the JS endpoint of another toolhost build (TOOLHOST_BASE_BIN) in its own process: the before of an optimization, measured in the same run.",
    "toolhost scales an endpoint to up to one isolate per core (PoolConfig::instances_per_endpoint, the core count by default; each isolate still serves that endpoint alone) and admits a bounded number of invocations per endpoint at once (max_concurrent_per_endpoint, running plus queued, 64 by default); calls beyond it are answered 503 and counted under non-2xx, so CONNECTIONS above that limit measure refusals too.",
]
if "axum-ceiling" in peers:
    notes.append("axum-ceiling is the same handler answered natively by a minimal axum server (bench/axum-ceiling/: "
                 "the server's axum, hyper, tokio and serde_json from one Cargo.lock, tokio's default multi-thread "
                 "runtime, no middleware, no receipt, no store, no sandbox): the ceiling for any Rust HTTP service on "
                 "this machine, and the denominator of issue 15's toolhost-native target.")
notes.append("wrk runs on the same 2 CPUs as the server under test, so every figure includes the load generator's share of the CPU.")
json.dump({"started": started, "smoke": smoke == "1", "duration": duration, "reps": reps, "connections": conns,
           "threads": threads, "cold_reps": cold_reps, "commands": commands, "peers": peers, "facts": facts,
           "notes": notes, "body": body, "work": os.environ["WORK"]}, open(meta_path, "w"))
PYEOF
}
"$PY" "$HELPER" report "$RAW" "$META" "$BENCH_DIR/results-header.md" "$OUT"
cp "$RAW" "${OUT%.md}.raw.jsonl"
log "wrote $OUT (raw values: ${OUT%.md}.raw.jsonl)"
