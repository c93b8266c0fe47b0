#!/usr/bin/env bash
# The tail of toolhost-js's latency under a steady load, and what its slowest calls line up with
# in the server's log. wrk loads the JS endpoint (bench-words, sandbox worker processes, as
# `toolhost serve` runs by default) on CONNECTIONS connections while one more connection, the
# probe (bench/lib/probe.py), makes sequential calls and records each one's latency and start
# time, with a timeout, so a call that never gets its answer is counted rather than waited for.
# Each slow probe call (>= 50 ms) is matched with the worker recycles the server logged within
# two seconds before it. Builds are interleaved, one fresh server per run: A B A B ...
#
#   BINS="before=/path/to/toolhost after=target/release/toolhost" bash bench/tail-probe.sh
#
# Knobs: RUN_SECONDS (30), ROUNDS (3), CONNECTIONS (63: with the probe, the endpoint's admission
# limit of 64 calls at once is reached but not exceeded), KEEP_WORK=1 keeps the logs.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$BENCH_DIR")
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
WRK=${WRK:-wrk}
[ "$WRK" = wrk ] && apt_install_missing wrk:wrk curl:curl
RUN_SECONDS=${RUN_SECONDS:-30}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-63}
BINS=${BINS:-"current=$REPO/target/release/toolhost"}

BODY="$WORK/body.json"
"$PY" "$HELPER" body "$BODY" >/dev/null
export BENCH_BODY_FILE="$BODY"
SEED="$WORK/seed"
"$PY" "$HELPER" seed "$SEED" "$REPO/fixtures" 0 "$BENCH_DIR/peers/toolhost-bench-words.js"

printf '| round | build | wrk req/s | wrk p99 ms | probe calls | probe p50 ms | probe p99 ms | probe max ms | probe calls unanswered (15 s) | probe errors | worker recycles | slow probe calls (>= 50 ms) / of them within 2 s after a recycle |\n'
printf '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for round in $(seq 1 "$ROUNDS"); do
  for entry in $BINS; do
    name=${entry%%=*}
    bin=${entry#*=}
    run="$WORK/$name-$round"
    port=$("$PY" "$HELPER" ports 1)
    url="http://127.0.0.1:$port/tools/bench-words"
    start_bg "$name-$round" "$bin" serve --addr "127.0.0.1:$port" --data "$run-data" \
      --seed-dir "$SEED" --admin-token bench-admin-token
    pid=$BG_PID
    "$PY" "$HELPER" wait "$url" "$BODY" 60 || die "$name not ready (log: $WORK/$name-$round.log)"
    # A short warm-up, so the runs start with the endpoint's isolates built.
    "$WRK" -t2 -c"$CONNECTIONS" -d3s -s "$BENCH_DIR/lib/post.lua" "$url" >/dev/null
    "$PY" "$BENCH_DIR/lib/probe.py" "$url" "$BODY" "$RUN_SECONDS" "$run-probe.json" &
    probe=$!
    "$WRK" -t2 -c"$CONNECTIONS" -d"${RUN_SECONDS}s" --latency -s "$BENCH_DIR/lib/post.lua" "$url" >"$run-wrk.txt"
    wait "$probe" || die "the probe failed ($name, round $round)"
    stop_pid "$pid"
    "$PY" - "$run-wrk.txt" "$run-probe.json" "$WORK/$name-$round.log" "$round" "$name" <<'EOF'
import json, re, sys
from datetime import datetime
wrk_txt, probe_json, log, rnd, name = sys.argv[1:]
wrk = open(wrk_txt).read()
rps = re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1)
p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", wrk)
p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
probe = json.load(open(probe_json))
ansi = re.compile(r"\x1b\[[0-9;]*m")
recycles = []
for line in open(log, errors="replace"):
    line = ansi.sub("", line)
    if "recycling a sandbox worker" in line:
        stamp = line.split()[0]
        recycles.append(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
near = sum(1 for s in probe["slow"] if any(0 <= s["at"] - r <= 2.0 for r in recycles))
print(f"| {rnd} | {name} | {float(rps):.0f} | {p99_ms:.1f} | {probe['calls']} | {probe['p50_ms']} | "
      f"{probe['p99_ms']} | {probe['max_ms']} | {probe['timeouts']} | {probe['error_count']} | "
      f"{len(recycles)} | {len(probe['slow'])} / {near} |")
EOF
  done
done
