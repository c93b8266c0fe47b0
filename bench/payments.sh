#!/usr/bin/env bash
# Paid (x402, local facilitator) vs free invocation throughput in the same run, plus payment
# verifications per second. Loopback only; every loop is bounded.
#   bash bench/payments.sh [DURATION_SECONDS] [CONNECTIONS]
# ROUNDS=n (default 1) runs free and paid n times, interleaved, each paid round with payments of
# its own, and ends with the medians and paid / free (req/s).
# PROFILE=dev uses the debug build (quick to build; figures then only compare paid with free).
# Both endpoints are receipt echoes: the free one still signs and stores a receipt, so the
# difference is the payment itself (decode, EIP-712 recovery, nonce claim, atomic settlement).
set -euo pipefail

# Test/bench load from one loopback address: the per-client limit on anonymous writes would throttle it.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0

cd "$(dirname "$0")/.."
duration=${1:-10}
connections=${2:-16}
threads=2
log() { echo "bench: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=lib/install.sh
source bench/lib/install.sh
apt_install_missing wrk:wrk
profile=${PROFILE:-release}
cargo build --profile "$profile" -p toolhost --bin toolhost --example x402_bench
dir=$profile; [ "$profile" = dev ] && dir=debug
bin=${CARGO_TARGET_DIR:-target}/$dir
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin/examples/x402_bench" verify 5000

port=$((20000 + RANDOM % 20000))
"$bin/toolhost" serve --addr "127.0.0.1:$port" --data "$work/data" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"

rounds=${ROUNDS:-1}
# Enough fresh payments for a generous upper bound on paid throughput.
payments=$((duration * 6000))
free_rps=()
paid_rps=()
for round in $(seq 1 "$rounds"); do
  "$bin/examples/x402_bench" headers "$base/tools/receipt-echo-paid" "$payments" "$work/payments.txt"
  echo "== round $round/$rounds, free: POST /tools/receipt-echo (${duration}s, $connections connections)"
  out=$(wrk -t "$threads" -c "$connections" -d "${duration}s" -s bench/free.lua "$base/tools/receipt-echo")
  echo "$out"
  free_rps+=("$(awk '/Requests\/sec/ {print $2}' <<<"$out")")
  echo "== round $round/$rounds, paid: POST /tools/receipt-echo-paid with x402 v2 (${duration}s, $connections connections, $payments fresh payments)"
  out=$(wrk -t "$threads" -c "$connections" -d "${duration}s" -s bench/paid.lua "$base/tools/receipt-echo-paid" -- "$work/payments.txt" "$threads")
  echo "$out"
  paid_rps+=("$(awk '/Requests\/sec/ {print $2}' <<<"$out")")
done
python3 - "${free_rps[*]}" "${paid_rps[*]}" <<'PY'
import statistics, sys
free = [float(x) for x in sys.argv[1].split()]
paid = [float(x) for x in sys.argv[2].split()]
f, p = statistics.median(free), statistics.median(paid)
print(f"== req/s per round: free {', '.join(f'{x:.0f}' for x in free)}; paid {', '.join(f'{x:.0f}' for x in paid)}")
print(f"== medians: free {f:.0f}, paid {p:.0f}: paid / free = {p / f:.2f}x")
PY
