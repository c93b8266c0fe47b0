#!/usr/bin/env bash
# Victims' latency with and without hostile agents (issue 43): one release server with its
# default limits; victims (8 addresses, 127.0.1.x) call a free and a paid tool (developer
# credit), paced under the anonymous-write limit, for DURATION seconds alone and DURATION
# seconds while attackers (127.0.0.2..9) run the attacks of tests/api/hostile_agents.rs in a
# loop, twice: their process at the normal priority, then at nice 19 (it then takes only the
# CPU the server and the victims leave, as attackers on other machines would: what remains is
# the server's own work for them). Prints p50/p99 of each phase, the ratios of the p99s (goal:
# at most 2x), victims' errors (goal: none), the attackers' answers by status, and the
# server's peak RSS.
#
#   bash bench/hostile-agents.sh                       # release build, 30 s per phase
#   DURATION=5 TOOLHOST_BIN=target/debug/toolhost bash bench/hostile-agents.sh   # smoke test
#
# Environment: DURATION (seconds per phase, default 30), ATTACKER_NICE (the second attack's
# nice value, default 19; 0 runs the attack once), OUT (also append the output to this
# markdown file), SKIP_BUILD, TOOLHOST_BIN, TOOLHOST_REV (see run.sh). Linux only (source
# addresses 127.0.0.x/127.0.1.x, /proc for RSS).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
# The anonymous-write limit is one of the walls under test: keep its default here.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=600

DURATION=${DURATION:-30}
[[ $DURATION =~ ^[0-9]+$ ]] && [ "$DURATION" -ge 1 ] || die "DURATION must be a whole number >= 1"

build_toolhost
port=$("$PY" "$HELPER" ports 1)
admin=bench-admin-token
start_bg toolhost "$TOOLHOST_BIN" serve --addr "127.0.0.1:$port" --data "$WORK/data" --admin-token "$admin"
server_pid=$BG_PID
ok=0
for _ in $(seq 1 600); do # up to ~60 s
  curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && { ok=1; break; }
  sleep 0.1
done
[ "$ok" = 1 ] || die "the server did not start (log: $WORK/toolhost.log)"
log "hostile agents against $TOOLHOST_DESC, $DURATION s per phase"
result=$("$PY" "$BENCH_DIR/lib/hostile.py" "http://127.0.0.1:$port" "$admin" "$DURATION" "$server_pid")
echo "$result"
if [ -n "${OUT:-}" ]; then
  { echo; echo "### Hostile agents ($(date -u +%Y-%m-%d), $TOOLHOST_DESC)"; echo; echo "$result"; } >>"$OUT"
fi
