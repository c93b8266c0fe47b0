#!/usr/bin/env bash
# What a receipt costs on the call path, two release builds in one interleaved run: free calls
# of the built-in `receipt-echo` (a signed receipt each, stored before the answer; with the
# receipt log, appended to it too) on BASE and on AFTER, each its own server and data dir.
# Rounds of `wrk -c$CONNECTIONS` load one build at a time, the order swapped every round; for
# each round it prints req/s and the CPU the server spent per call (utime + stime from /proc,
# bench/lib/tree_cpu.py), then the medians, AFTER against BASE, and for a build that counts
# them (toolhost_receipt_log_* and toolhost_receipt*_batch* in /metrics) how many receipts one
# signature of a tree head covered, and Ed25519 signatures per call in all: checkpoints, free
# receipts' batches and receipts signed by themselves (toolhost_receipt_signatures_total; a
# build without that counter signed every receipt).
#
#   BASE=path/to/toolhost AFTER=path/to/toolhost bash bench/receipt-ab.sh
#   (ROUNDS=6, SECONDS_PER=6, CONNECTIONS=16)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-6} secs=${SECONDS_PER:-6} conns=${CONNECTIONS:-16}
declare -A bin=([base]=${BASE:?BASE=path/to/a release toolhost} [after]=${AFTER:?AFTER=path/to/a release toolhost})
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d)
declare -A pid url
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
for build in base after; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  url[$build]="http://127.0.0.1:$port"
  TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0 RUST_LOG=warn "${bin[$build]}" serve --addr "127.0.0.1:$port" \
    --data "$work/$build" --admin-token ab >/dev/null 2>&1 &
  pid[$build]=$!
  for _ in $(seq 200); do curl -sf -o /dev/null "${url[$build]}/healthz" && break; sleep 0.1; done
  wrk -t2 -c"$conns" -d2s -s "$here/free.lua" "${url[$build]}/tools/receipt-echo" >/dev/null
done
# Receipts proven under a signed tree head (appended to the log, or batched) and the heads
# signed (checkpoints, batches), then receipts signed by themselves ("-" if not counted).
counts() {
  curl -sf "${url[$1]}/metrics" | awk '
    /^toolhost_receipt_log_entries_total/ {e += $2} /^toolhost_receipts_batched_total/ {e += $2}
    /^toolhost_receipt_log_checkpoints_total/ {c += $2} /^toolhost_receipt_batches_total/ {c += $2}
    /^toolhost_receipt_signatures_total/ {s = $2}
    END {if (e != "") printf "%s %s %s", e, c, (s == "" ? "-" : s)}'
}
declare -A rps cpc
declare -A start_counts
for build in base after; do start_counts[$build]=$(counts "$build"); done
for round in $(seq "$rounds"); do
  order="base after"; [ $((round % 2)) = 0 ] && order="after base"
  for build in $order; do
    before=$(python3 "$here/lib/tree_cpu.py" "${pid[$build]}")
    out=$(wrk -t2 -c"$conns" -d"${secs}s" -s "$here/free.lua" "${url[$build]}/tools/receipt-echo")
    after=$(python3 "$here/lib/tree_cpu.py" "${pid[$build]}")
    calls=$(awk '/requests in/ {print $1}' <<<"$out")
    r=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    us=$(python3 -c "print(round(($after - $before) * 1e6 / $calls, 1))")
    printf 'round %d %-6s %10s req/s %8s us CPU/call\n' "$round" "$build" "$r" "$us"
    rps[$build]+="$r " cpc[$build]+="$us "
  done
done
for build in base after; do
  read -r e0 c0 s0 <<<"${start_counts[$build]:-0 0 -}"
  read -r e1 c1 s1 <<<"$(counts "$build") "
  if [ -n "${e1:-}" ] && [ "${c1:-0}" != 0 ]; then
    python3 - "$build" "$e0" "$c0" "${s0:--}" "$e1" "$c1" "${s1:--}" <<'PY'
import sys
build, e0, c0, s0, e1, c1, s1 = sys.argv[1:]
e, c = float(e1) - float(e0), float(c1) - float(c0)
own, how = (e, "every receipt signed by itself") if s1 == "-" else (float(s1) - float(s0), "counted")
print(f"{build}: {e:.0f} receipts under {c:.0f} signed tree heads (checkpoints, batches): {e / max(c, 1):.1f} receipts per head")
print(f"{build}: {own:.0f} receipts signed by themselves ({how}): {(c + own) / max(e, 1):.3f} signatures per call")
PY
  else
    echo "$build: no receipt log"
  fi
done
python3 - "${rps[base]}" "${rps[after]}" "${cpc[base]}" "${cpc[after]}" <<'PY'
import statistics as st, sys
med = lambda s: st.median(float(x) for x in s.split())
rb, ra, cb, ca = (med(a) for a in sys.argv[1:5])
print(f"median req/s: base {rb:.0f}, after {ra:.0f} ({ra / rb:.3f}x)")
print(f"median CPU per call: base {cb:.1f} us, after {ca:.1f} us ({(ca / cb - 1) * 100:+.1f} %)")
PY
