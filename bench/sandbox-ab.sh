#!/usr/bin/env bash
# Builds of the sandbox (before and after a change) compared in one interleaved run: the same
# machine, the same minutes, so the load of a shared machine falls on all of them. Each round
# runs, for each build, criterion's `isolate_creation` group (cold start with a spare ready, and
# with none) and the `measure` example (cold starts, idle memory per isolate, warm call); the
# order rotates from round to round (A B C, B C A, C A B, ...) so a drift in load favours no
# build. Builds named in BUILD_WEB (their measure example knows the `web` handler) also run it:
# cold start and idle memory of an isolate whose handler uses the web globals. Prints one table
# of medians (min–max) over the rounds, then the raw rows.
#
#   BUILDS="before=dir after=dir" BUILD_WEB="after" bash bench/sandbox-ab.sh
#
# Each dir holds two executables, built in release from the commit to measure:
#   measure   cargo build --release -p sandbox --example measure   (target/release/examples/measure)
#   criterion cargo bench -p sandbox --bench sandbox --no-run       (the target/release/deps/sandbox-<hash> it prints)
# One CARGO_TARGET_DIR shared by worktrees of different commits can hand a build the other
# worktree's `sandbox` crate: the unit has the same hash in both, and cargo's freshness check
# reads the mtimes of the files the last build used (the other worktree's). Touch the crate's
# sources (sandbox/src/lib.rs, bench/examples/measure.rs) before building each commit, or use
# one target dir per commit, and check the binaries (e.g. `grep -c op_fetch_start measure`).
# Environment: BUILDS (name=dir, in order), BUILD_WEB (names, default: the last build), ROUNDS
# (default 5), ISOLATES (measure's idle isolates, default 50), WARM_CALLS (default 2000),
# WARM_UP and MEASURE (criterion seconds, default 1 and 3). Needs python3.
set -euo pipefail

: "${BUILDS:?BUILDS=\"name=dir name=dir ...\"}"
NAMES=()
DIRS=()
for b in $BUILDS; do
  NAMES+=("${b%%=*}")
  DIRS+=("${b#*=}")
done
ROUNDS=${ROUNDS:-5}
ISOLATES=${ISOLATES:-50}
WARM_CALLS=${WARM_CALLS:-2000}
WARM_UP=${WARM_UP:-1}
MEASURE=${MEASURE:-3}
BUILD_WEB=${BUILD_WEB:-${NAMES[-1]}}
PY=${PYTHON:-python3}

log() { printf '[sandbox-ab %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
for d in "${DIRS[@]}"; do
  for exe in measure criterion; do
    [ -x "$d/$exe" ] || { log "ERROR: $d/$exe is missing or not executable"; exit 1; }
  done
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-ab.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
RAW="$WORK/raw.jsonl"
: >"$RAW"

# One build, one round: criterion into its own CRITERION_HOME, then the measure example.
run_one() {
  local name=$1 dir=$2 round=$3 crit="$WORK/criterion-$1-$3"
  log "round $round: $name criterion isolate_creation"
  CRITERION_HOME="$crit" "$dir/criterion" --bench isolate_creation \
    --warm-up-time "$WARM_UP" --measurement-time "$MEASURE" >"$WORK/criterion-$name-$round.log" 2>&1
  local handlers="trivial"
  case " $BUILD_WEB " in *" $name "*) handlers="trivial web" ;; esac
  for handler in $handlers; do
    log "round $round: $name measure $handler"
    local out="$WORK/measure-$name-$handler-$round.log"
    if [ "$handler" = trivial ]; then
      # Without the argument, so a build whose example predates it runs the same handler.
      "$dir/measure" "$ISOLATES" "$WARM_CALLS" >"$out" 2>&1
    else
      "$dir/measure" "$ISOLATES" "$WARM_CALLS" "$handler" >"$out" 2>&1
    fi
  done
  "$PY" - "$name" "$round" "$crit" "$WORK" "$handlers" >>"$RAW" <<'EOF'
import json, re, sys
name, rnd, crit, work, handlers = sys.argv[1:6]
row = {"build": name, "round": int(rnd), "load": open("/proc/loadavg").read().split()[:3]}
for bench in ("cold_start_spare_ready", "cold_start_no_spare"):
    est = json.load(open(f"{crit}/isolate_creation/{bench}/new/estimates.json"))
    row[f"criterion {bench} mean ms"] = est["mean"]["point_estimate"] / 1e6
    row[f"criterion {bench} median ms"] = est["median"]["point_estimate"] / 1e6
def dur_ms(text):
    m = re.fullmatch(r"([0-9.]+)(ns|µs|us|ms|s)", text)
    return float(m.group(1)) * {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
for handler in handlers.split():
    text = open(f"{work}/measure-{name}-{handler}-{rnd}.log").read()
    def grab(pattern):
        m = re.search(pattern, text)
        if not m:
            sys.exit(f"measure {name} {handler} round {rnd}: no match for {pattern!r}:\n{text}")
        return m
    row[f"{handler} process-first ms"] = dur_ms(grab(r"process-first isolate \+ call: (\S+)").group(1))
    m = grab(r"cold start with a spare ready .*?: p50 (\S+), p90 (\S+)")
    row[f"{handler} cold spare p50 ms"] = dur_ms(m.group(1))
    row[f"{handler} cold spare p90 ms"] = dur_ms(m.group(2))
    m = grab(r"cold start back to back .*?: p50 (\S+), p90 (\S+), max (\S+)")
    row[f"{handler} cold no-spare p50 ms"] = dur_ms(m.group(1))
    row[f"{handler} cold no-spare p90 ms"] = dur_ms(m.group(2))
    row[f"{handler} idle MiB"] = float(grab(r"idle memory: ([0-9.]+) MiB per isolate").group(1))
    m = grab(r"warm call through Pool::invoke, \d+ calls: mean (\S+), p50 (\S+), p99 (\S+)")
    row[f"{handler} warm p50 us"] = dur_ms(m.group(2)) * 1e3
print(json.dumps(row))
EOF
}

log "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
n=${#NAMES[@]}
for round in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(((round - 1 + k) % n))
    run_one "${NAMES[$i]}" "${DIRS[$i]}" "$round"
  done
done
FINISHED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$RAW" "$STARTED" "$FINISHED" "${NAMES[@]}" <<'EOF'
import json, statistics, sys
raw, started, finished = sys.argv[1:4]
names = sys.argv[4:]
rows = [json.loads(line) for line in open(raw)]
keys = []
for r in rows:
    for k in r:
        if k not in ("build", "round", "load") and k not in keys:
            keys.append(k)
def cell(build, key):
    vals = [r[key] for r in rows if r["build"] == build and key in r]
    if not vals:
        return "–"
    return f"{statistics.median(vals):.3g} ({min(vals):.3g}–{max(vals):.3g})"
print(f"{started} – {finished}, {max(r['round'] for r in rows)} rounds, load average (1, 5, 15 min) "
      f"after each build's round: " + "; ".join(" ".join(r["load"]) for r in rows))
print()
print("| figure | " + " | ".join(f"{n}: median (min–max)" for n in names) + " |")
print("|---|" + "---:|" * len(names))
for k in keys:
    print(f"| {k} | " + " | ".join(cell(n, k) for n in names) + " |")
print()
print("raw rows, one per build and round:")
for r in rows:
    print(json.dumps(r))
EOF
