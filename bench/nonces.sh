#!/usr/bin/env bash
# What recovery costs as payment history grows (issue 38): every node runs a recovery pass at
# start-up and every `recovery_interval` (30 s), looking for nonce claims left open by calls
# that died. The spent nonces of every payment ever taken are in the same place.
#   TOOLHOST_BASE_BIN=<release before> bash bench/nonces.sh [SPENT] [STARTS]
# For each of the base build and this work tree's release build (SKIP_BUILD=1: as built), on a
# database of its own in one throwaway PostgreSQL cluster: the base release makes the schema,
# SPENT (default 1,000,000) spent nonces and 3 open claims are written the way the base release
# keeps them (`toolhost_kv`, tree `nonces`), then the build starts STARTS (default 3) times;
# reported: the first start (which migrates, for a build with a newer schema), the median of
# the later starts (process start to listening; the start-up pass is part of it), and
# PostgreSQL's CPU per recovery pass over 20 s of an idle node passing every second.
# Loopback only; the cluster and servers are stopped and removed at exit.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

SPENT=${1:-1000000}
STARTS=${2:-3}
BASE=${TOOLHOST_BASE_BIN:?set TOOLHOST_BASE_BIN to the release before}
export RUST_LOG=${RUST_LOG:-warn}

PG_DIR=
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
nonces_cleanup() {
  local rc=$?
  cleanup
  if [ -n "$PG_DIR" ] && [ -d "$PG_DIR" ]; then
    [ -f "$PG_DIR/data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" stop -w -t 30 -m fast -D "$PG_DIR/data" >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
  return $rc
}
trap nonces_cleanup EXIT

TARGET=${CARGO_TARGET_DIR:-$REPO/target}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$REPO" && cargo build --release -p toolhost --bin toolhost) >&2 || die "release build failed"
fi
NEW="$TARGET/release/toolhost"

PG_BIN=${TOOLHOST_PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || die "PostgreSQL server binaries not found"
PG_DIR=$(mktemp -d /tmp/toolhost-nonces-pg.XXXXXX)
chmod 755 "$PG_DIR"
[ "$(id -u)" != 0 ] || chown postgres: "$PG_DIR"
as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >/dev/null
PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1" >/dev/null
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"; }
postmaster=$(head -1 "$PG_DIR/data/postmaster.pid")

# CPU seconds of every PostgreSQL process (the postmaster's children, and itself).
pg_cpu() {
  python3 - "$postmaster" <<'PY'
import os, sys
root = sys.argv[1]
tick = os.sysconf("SC_CLK_TCK")
total = 0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if pid == root or stat[1] == root:
        total += int(stat[11]) + int(stat[12])
print(total / tick)
PY
}

# Starts `bin` on database `db` with extra args; prints milliseconds to "listening"; leaves it
# running as $pid (so never call it in a subshell: redirect its output instead).
start() {
  local bin=$1 db=$2
  local out=$WORK/$db.out
  shift 2
  local t0
  t0=$(date +%s%N)
  "$bin" serve --addr 127.0.0.1:0 --data "$WORK/$db.data" --admin-token bench \
    --store "postgres://postgres@127.0.0.1:$PG_PORT/$db" "$@" >"$out" 2>"$WORK/$db.err" &
  pid=$!
  for _ in $(seq 1200); do grep -q 'listening on' "$out" && break; sleep 0.05; done
  grep -q 'listening on' "$out" || die "$db did not start: $(tail -5 "$WORK/$db.err")"
  echo $((($(date +%s%N) - t0) / 1000000))
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

log "PostgreSQL on port $PG_PORT; $SPENT spent nonces per database"
printf '| build | first start (ms) | later starts, median (ms) | PostgreSQL CPU per recovery pass (ms) |\n|---|---:|---:|---:|\n'
for peer in base new; do
  bin=$BASE
  [ $peer = new ] && bin=$NEW
  psql -d postgres -c "CREATE DATABASE $peer"
  start "$BASE" "$peer" >/dev/null
  stop
  # As the base release keeps them: spent nonces name their receipts; the open ones are claim
  # records of calls in flight (claimed now, so every pass leaves them alone).
  now_ms=$(($(date +%s%N) / 1000000 + 600000))
  psql -d "$peer" -c "INSERT INTO toolhost_kv (tree, key, value)
    SELECT 'nonces', convert_to('84532/0x036cbd53842c5426634e7929541ec2318f3dcf7e/0x' ||
           lpad(to_hex(i % 1000), 40, '0') || '/0x' || lpad(to_hex(i), 64, '0'), 'UTF8'),
           convert_to('rcpt_' || md5(i::TEXT), 'UTF8')
    FROM generate_series(1, $SPENT) AS i;
    INSERT INTO toolhost_kv (tree, key, value)
    SELECT 'nonces', convert_to('84532/0xa/0xb/' || i, 'UTF8'), convert_to(
      '{\"claimId\":\"c' || i || '\",\"claimedAtMs\":$now_ms,\"node\":\"n\",\"state\":\"claimed\",\"sale\":{\"purpose\":\"invocation\",\"endpointSlug\":null,\"seller\":null,\"amountUnits\":1,\"payer\":\"0x0000000000000000000000000000000000000001\",\"network\":\"eip155:84532\",\"chainId\":84532,\"asset\":\"0xa\",\"payTo\":\"0x0000000000000000000000000000000000000002\",\"nonce\":\"0x01\"}}', 'UTF8')
    FROM generate_series(1, 3) AS i;" -c "VACUUM ANALYZE toolhost_kv"
  start "$bin" "$peer" >"$WORK/first"
  stop
  [ $peer = new ] && psql -d "$peer" -c "VACUUM ANALYZE"
  : >"$WORK/later"
  for _ in $(seq "$STARTS"); do start "$bin" "$peer" >>"$WORK/later"; stop; done
  first=$(cat "$WORK/first")
  later=$(median <"$WORK/later")
  start "$bin" "$peer" --recovery-interval-secs 1 >/dev/null
  sleep 2
  c0=$(pg_cpu)
  sleep 20
  c1=$(pg_cpu)
  stop
  per_pass=$(python3 -c "print(round(($c1 - $c0) * 1000 / 20, 1))")
  printf '| %s | %s | %s | %s |\n' "$([ $peer = base ] && echo "base ($BASE)" || echo "this build")" "$first" "$later" "$per_pass"
done
