#!/usr/bin/env bash
# What a gradual rollout costs on the call path, in one interleaved run of one release build:
# `bench-plain` (a free JS tool, no rollout) against `bench-rolled` (the same tool with its
# revision 2, the same source, rolled out to 50 % of payers: every call is routed and counted
# for its revision). Rounds of `wrk -t2 -c16` load one tool at a time, the order swapped every
# round; for each round it prints req/s and the CPU the server and its sandbox workers spent per
# call (utime + stime from /proc, so the figure moves less with the machine's other load than
# req/s does), then the medians and the rolled tool's CPU per call against the plain one's.
#
#   BIN=path/to/toolhost bash bench/rollout-ab.sh        (ROUNDS=6, SECONDS_PER=6)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-6} secs=${SECONDS_PER:-6}
bin=${BIN:?BIN=path/to/a release toolhost}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/body.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"text": "a few words to count"}'
wrk.headers["Content-Type"] = "application/json"
LUA
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0 RUST_LOG=warn "$bin" serve --addr "127.0.0.1:$port" \
  --data "$work/data" --admin-token ab >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do curl -sf -o /dev/null "$base/healthz" && break; sleep 0.1; done
admin=(-H 'x-admin-token: ab' -H 'content-type: application/json')
source_js=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$here/peers/toolhost-bench-words.js")
for slug in bench-plain bench-rolled; do
  curl -sf "${admin[@]}" -X POST "$base/ai/endpoints/create" -d "{\"slug\": \"$slug\", \"title\": \"Bench\",
    \"description\": \"Counts words.\", \"priceUsd\": 0, \"handlerType\": \"js_request_response\",
    \"source\": $source_js}" >/dev/null
done
# Revision 2 of the rolled tool: the same handler (a comment added), rolled out to half.
source2=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read() + "\n// revision 2\n"))' "$here/peers/toolhost-bench-words.js")
curl -sf "${admin[@]}" -X PATCH "$base/ai/endpoints/bench-rolled" \
  -d "{\"source\": $source2, \"rolloutShare\": 50}" | python3 -c 'import json,sys; r=json.load(sys.stdin)["manage"]["rollout"]; assert r and r["share"] == 50, r'

# CPU seconds of the server and every process under it (bench/lib/tree_cpu.py).
cpu() { python3 "$here/lib/tree_cpu.py" "$pid"; }
for slug in bench-plain bench-rolled; do
  wrk -t2 -c16 -d2s -s "$work/body.lua" "$base/tools/$slug" >/dev/null
done
declare -A rps cpc
for round in $(seq "$rounds"); do
  order="bench-plain bench-rolled"; [ $((round % 2)) = 0 ] && order="bench-rolled bench-plain"
  for slug in $order; do
    before=$(cpu)
    out=$(wrk -t2 -c16 -d"${secs}s" -s "$work/body.lua" "$base/tools/$slug")
    after=$(cpu)
    calls=$(awk '/requests in/ {print $1}' <<<"$out")
    r=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    us=$(python3 -c "print(round(($after - $before) * 1e6 / $calls, 1))")
    printf 'round %d %-13s %10s req/s %8s us CPU/call\n' "$round" "$slug" "$r" "$us"
    rps[$slug]+="$r " cpc[$slug]+="$us "
  done
done
curl -sf "${admin[@]}" "$base/ai/endpoints/bench-rolled/rollout" | python3 -c '
import json, sys
r = json.load(sys.stdin)["rollout"]
s, c = r["serving"], r["candidate"]
print("rollout counted: revision %d %d calls, revision %d %d calls" % (s["revision"], s["calls"], c["revision"], c["calls"]))'
python3 - "${rps[bench-plain]}" "${rps[bench-rolled]}" "${cpc[bench-plain]}" "${cpc[bench-rolled]}" <<'PY'
import statistics as st, sys
med = lambda s: st.median(float(x) for x in s.split())
rp, rr, cp, cr = (med(a) for a in sys.argv[1:5])
print(f"median req/s: plain {rp:.0f}, rolled {rr:.0f} ({rr / rp:.3f}x)")
print(f"median CPU per call: plain {cp:.1f} us, rolled {cr:.1f} us ({(cr / cp - 1) * 100:+.1f} %)")
PY
