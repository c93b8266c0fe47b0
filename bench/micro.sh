#!/usr/bin/env bash
# Criterion micro-benchmarks: isolate creation, warm call overhead and the ctx op round trip
# (bench/criterion/sandbox.rs); EIP-712 verify, receipt signing and catalog listing
# (bench/criterion/server.rs). Builds them in release (bench profile), runs them, prints a summary and
# where criterion's reports are.
#
#   bash bench/micro.sh                  # full: criterion's defaults (3 s warm-up, 5 s measurement)
#   QUICK=1 bash bench/micro.sh          # quick: 1 s warm-up, 2 s measurement per benchmark
#   bash bench/micro.sh catalog_listing  # only benchmarks whose id contains the filter (any criterion args)
#   RECORD=1 bash bench/micro.sh         # also write the "Micro-benchmarks (criterion)" section of RESULTS.md
#
# Environment: QUICK=1, RECORD=1, OUT=bench/RESULTS.md (where RECORD writes), WARM_UP=s and
# MEASURE=s (override the warm-up and measurement times), CARGO_TARGET_DIR (criterion writes to
# $CARGO_TARGET_DIR/criterion, or $CRITERION_HOME). Needs cargo and python3.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
PY=${PYTHON:-python3}
HELPER="$BENCH_DIR/lib/micro.py"
OUT=${OUT:-$BENCH_DIR/RESULTS.md}

log() { printf '[micro %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
command -v cargo >/dev/null || die "cargo not found"
command -v "$PY" >/dev/null || die "python3 not found"

# How this script was called, for the record (before the defaults below fill the knobs in).
INVOCATION="bash bench/micro.sh${*:+ $*}"
for v in RECORD QUICK WARM_UP MEASURE; do
  if [ -n "${!v:-}" ]; then INVOCATION="$v=${!v} $INVOCATION"; fi
done
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  : "${WARM_UP:=1}" "${MEASURE:=2}"
fi
CRITERION_ARGS=()
[ -n "${WARM_UP:-}" ] && CRITERION_ARGS+=(--warm-up-time "$WARM_UP")
[ -n "${MEASURE:-}" ] && CRITERION_ARGS+=(--measurement-time "$MEASURE")
CRITERION_ARGS+=("$@")

cd "$REPO"
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
CRITERION_DIR=${CRITERION_HOME:-$TARGET/criterion}
# Both bench targets in one cargo invocation over the workspace: one feature resolution, so the
# dependencies are built once for both.
CARGO=(cargo bench --locked --workspace --bench sandbox --bench server)

log "building the benchmarks (release profile)"
"${CARGO[@]}" --no-run

WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-micro.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SINCE=$(date +%s)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
CPU_BEFORE=$("$PY" "$HELPER" cpu)
COMMAND="${CARGO[*]}"
[ ${#CRITERION_ARGS[@]} -gt 0 ] && COMMAND="$COMMAND -- ${CRITERION_ARGS[*]}"
log "load average before: $LOAD_BEFORE"
log "running: $COMMAND"
"${CARGO[@]}" -- "${CRITERION_ARGS[@]}"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
CPU_AFTER=$("$PY" "$HELPER" cpu)
log "load average after: $LOAD_AFTER"

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//' || true)
mem_gib=$(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
MACHINE="$(nproc) CPUs (shared VM), ${cpu_model:-unknown CPU}, $mem_gib GiB, $(uname -sr)"
COMMIT="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$REPO" status --porcelain 2>/dev/null)" ]; then COMMIT="$COMMIT (with uncommitted changes)"; fi
MODE="full (criterion defaults)"
[ "$QUICK" = 1 ] && MODE="quick"
[ -n "${WARM_UP:-}${MEASURE:-}" ] && MODE="$MODE: warm-up ${WARM_UP:-3} s, measurement ${MEASURE:-5} s per benchmark"
[ $# -gt 0 ] && MODE="$MODE; extra arguments: $*"

# Criterion draws its HTML report only when it has a plotter (gnuplot on PATH).
REPORT=""
[ -f "$CRITERION_DIR/report/index.html" ] && REPORT="$CRITERION_DIR/report/index.html"
RUSTC_VERSION=$(rustc --version)
export STARTED LOAD_BEFORE LOAD_AFTER CPU_BEFORE CPU_AFTER MACHINE COMMIT MODE COMMAND INVOCATION QUICK REPORT RUSTC_VERSION
"$PY" - "$WORK/meta.json" <<'EOF'
import json, os, sys, time
e = os.environ
meta = {
    "started": e["STARTED"], "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "load_before": e["LOAD_BEFORE"], "load_after": e["LOAD_AFTER"],
    "cpu_before": json.loads(e["CPU_BEFORE"]), "cpu_after": json.loads(e["CPU_AFTER"]),
    "machine": e["MACHINE"], "rustc": e["RUSTC_VERSION"], "commit": e["COMMIT"], "mode": e["MODE"],
    "command": e["COMMAND"], "invocation": e["INVOCATION"], "quick": e["QUICK"] == "1", "report": e["REPORT"],
}
with open(sys.argv[1], "w") as f:
    json.dump(meta, f)
EOF

REPORT_ARGS=(report --criterion "$CRITERION_DIR" --since "$SINCE" --meta "$WORK/meta.json")
[ "${RECORD:-0}" = 1 ] && REPORT_ARGS+=(--out "$OUT")
echo
"$PY" "$HELPER" "${REPORT_ARGS[@]}"
echo
log "criterion results: $CRITERION_DIR/<group>/<benchmark>/new/{estimates,sample}.json"
if [ -n "$REPORT" ]; then
  log "criterion HTML report: $REPORT"
else
  log "no HTML report (criterion draws it with gnuplot: apt-get install gnuplot-nox)"
fi
if [ "${RECORD:-0}" = 1 ]; then
  log "wrote the \"Micro-benchmarks (criterion)\" section of $OUT"
fi
