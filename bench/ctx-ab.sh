#!/usr/bin/env bash
# A/B of the `ctx` operation path between two release builds, in one interleaved run: each
# build serves (in its default mode, sandbox worker processes) `bench-kv`, a JS tool making four
# ctx.kv ops per call (bench/soak/soak-kv.js: get, set, list, delete), and `bench-words`, a JS
# tool making none. Rounds of `wrk -t2 -c16` load one build and tool at a time, the builds'
# order swapped every round; prints req/s per round and the medians.
#
#   BASE=path/to/toolhost AFTER=path/to/toolhost bash bench/ctx-ab.sh   (ROUNDS=4, SECONDS_PER=8)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-4} secs=${SECONDS_PER:-8}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/seed/catalog" "$work/seed/handlers"
cp "$here/soak/soak-kv.js" "$work/seed/handlers/bench-kv.js"
cp "$here/peers/toolhost-bench-words.js" "$work/seed/handlers/bench-words.js"
for tool in kv words; do
  caps='{}'; [ "$tool" = kv ] && caps='{"kv": true}'
  cat >"$work/seed/catalog/bench-$tool.json" <<JSON
{"slug": "bench-$tool", "title": "Bench $tool", "description": "ctx A/B.", "priceUsd": 0,
 "handlerType": "js_request_response", "tags": ["bench"], "inputSchema": {"type": "object"}, "outputSchema": {},
 "capabilities": $caps, "source": "handlers/bench-$tool.js", "exampleInput": {"n": 1}}
JSON
done
cat >"$work/body.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"n": 7, "text": "a few words to count"}'
wrk.headers["Content-Type"] = "application/json"
LUA
declare -A port
for build in BASE AFTER; do
  bin=${!build}
  p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  port[$build]=$p
  TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0 RUST_LOG=warn "$bin" serve --addr "127.0.0.1:$p" \
    --data "$work/data-$build" --seed-dir "$work/seed" --admin-token ab >/dev/null 2>&1 &
  pids+=($!)
done
for build in BASE AFTER; do
  for tool in kv words; do
    ready=
    for _ in $(seq 200); do
      curl -sf -o /dev/null -X POST -H 'content-type: application/json' -d '{"n":1,"text":"x"}' \
        "http://127.0.0.1:${port[$build]}/tools/bench-$tool" && { ready=1; break; }
      sleep 0.1
    done
    [ -n "$ready" ] || { echo "$build does not serve bench-$tool" >&2; exit 1; }
    # Warm-up: isolates on every worker.
    wrk -t2 -c16 -d2s -s "$work/body.lua" "http://127.0.0.1:${port[$build]}/tools/bench-$tool" >/dev/null
  done
done
declare -A results
for round in $(seq "$rounds"); do
  order="BASE AFTER"; [ $((round % 2)) = 0 ] && order="AFTER BASE"
  for tool in kv words; do
    for build in $order; do
      out=$(wrk -t2 -c16 -d"${secs}s" -s "$work/body.lua" "http://127.0.0.1:${port[$build]}/tools/bench-$tool")
      rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
      errors=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
      echo "round $round  $tool  $build  $rps req/s${errors:+  non-2xx $errors}"
      results[$tool-$build]+="$rps "
    done
  done
done
for tool in kv words; do
  for build in BASE AFTER; do
    median=$(tr ' ' '\n' <<<"${results[$tool-$build]}" | grep . | sort -n \
      | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
    echo "median  bench-$tool  $build  $median req/s  (rounds: ${results[$tool-$build]})"
  done
done
