#!/usr/bin/env bash
# A metered paid call (x402 `upto`: a Permit2 permit of the maximum, charged what the handler
# reported) against a fixed-price paid call (x402 `exact`), in the same run, interleaved.
#   bash bench/metered.sh [DURATION_SECONDS] [CONNECTIONS]
# ROUNDS=n (default 3) runs each pair n times, interleaved, each round with payments of its own;
# prints the medians and metered / fixed (req/s). Two pairs, each with the same handler on both
# sides: the native `receipt_echo` (the metered one reports its KiB of input, priced by the
# endpoint's unit price) and a JS handler (the metered one calls `ctx.charge`). Local
# facilitator (recording), loopback only; every loop is bounded.
# PROFILE=dev uses the debug build (quick to build; the ratio then says little).
set -euo pipefail

# Test/bench load from one loopback address: the per-client limit on anonymous writes would throttle it.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0

cd "$(dirname "$0")/.."
duration=${1:-8}
connections=${2:-16}
threads=2
log() { echo "bench: $*" >&2; }
# shellcheck source=lib/install.sh
source bench/lib/install.sh
apt_install_missing wrk:wrk
profile=${PROFILE:-release}
cargo build --profile "$profile" -p toolhost --bin toolhost --example x402_bench
dir=$profile; [ "$profile" = dev ] && dir=debug
bin=${CARGO_TARGET_DIR:-target}/$dir
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

port=$((20000 + RANDOM % 20000))
"$bin/toolhost" serve --addr "127.0.0.1:$port" --data "$work/data" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"
token=$(cat "$work/data/admin_token")

create() {
  curl -sf -X POST "$base/ai/endpoints/create" -H "x-admin-token: $token" \
    -H 'content-type: application/json' -d "$1" >/dev/null || { log "cannot create $1"; exit 1; }
}
# The same handler on both sides of each pair; the metered one charges 0.001 of its 0.002.
create '{"slug":"echo-fixed","title":"Echo","priceUsd":0.001,"handlerType":"receipt_echo"}'
create '{"slug":"echo-metered","title":"Echo","priceUsd":0.002,"handlerType":"receipt_echo","metering":{"unit":"KiB of input","unitPriceUsd":0.001}}'
create '{"slug":"js-fixed","title":"JS","priceUsd":0.001,"source":"export default (req, ctx) => { return {ok: true}; }"}'
create '{"slug":"js-metered","title":"JS","priceUsd":0.002,"metering":{"unit":"call"},"source":"export default (req, ctx) => { ctx.charge(0.001, {units: 1}); return {ok: true}; }"}'

rounds=${ROUNDS:-3}
# Enough fresh payments for a generous upper bound on paid throughput.
payments=$((duration * 8000))
declare -A rps
run() { # name slug
  "$bin/examples/x402_bench" headers "$base/tools/$2" "$payments" "$work/payments.txt"
  echo "== round $round/$rounds, $1: POST /tools/$2 (${duration}s, $connections connections)"
  out=$(wrk -t "$threads" -c "$connections" -d "${duration}s" -s bench/paid.lua "$base/tools/$2" -- "$work/payments.txt" "$threads")
  echo "$out"
  # Every request carries a fresh payment, so every answer must be a 200.
  grep -q "Non-2xx" <<<"$out" && { log "$2 answered non-2xx (payments ran out, or were refused)"; tail -5 "$work/server.log" >&2; exit 1; }
  rps[$1]+="$(awk '/Requests\/sec/ {print $2}' <<<"$out") "
}
for round in $(seq 1 "$rounds"); do
  run echo-fixed echo-fixed
  run echo-metered echo-metered
  run js-fixed js-fixed
  run js-metered js-metered
done
python3 - "${rps[echo-fixed]}" "${rps[echo-metered]}" "${rps[js-fixed]}" "${rps[js-metered]}" <<'PY'
import statistics, sys
ef, em, jf, jm = ([float(x) for x in a.split()] for a in sys.argv[1:5])
for name, fixed, metered in (("receipt_echo", ef, em), ("JS", jf, jm)):
    f, m = statistics.median(fixed), statistics.median(metered)
    print(f"== {name}: req/s per round fixed {', '.join(f'{x:.0f}' for x in fixed)}; metered {', '.join(f'{x:.0f}' for x in metered)}")
    print(f"== {name} medians: fixed {f:.0f}, metered {m:.0f}: metered / fixed = {m / f:.2f}x")
PY
