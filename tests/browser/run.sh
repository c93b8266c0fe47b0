#!/usr/bin/env bash
# Dashboard and guide tests in headless Debian Chromium, against a real toolhost server.
#
# Starts the server binary on an ephemeral loopback port with a temporary data dir and a known
# admin token, runs `node --test` on tests/browser/*.test.mjs (which seed what they need through
# the API, drive /usr/bin/chromium with playwright-core and run the guide's examples), saves
# screenshots to tests/artifacts/, and stops the server.
#
#   TOOLHOST_BIN   the server binary (default: builds it with cargo and uses target/debug/toolhost)
#   CHROMIUM       the browser (default /usr/bin/chromium)
set -euo pipefail

# Test/bench load from one loopback address: the per-client limit on anonymous writes would throttle it.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

if [ ! -d "$here/node_modules/playwright-core" ]; then
  echo "tests/browser: node_modules missing; run scripts/setup.sh (npm ci in tests/browser)" >&2
  exit 1
fi
bin="${TOOLHOST_BIN:-}"
if [ -z "$bin" ]; then
  (cd "$root" && cargo build -p toolhost --locked --quiet)
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/toolhost"
fi

# The guide's command-line examples run this binary as `toolhost`, as a reader would.
export PATH="$(cd "$(dirname "$bin")" && pwd):$PATH"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

admin_token="browser-test-admin-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
"$bin" serve --addr 127.0.0.1:0 --data "$work/data" --admin-token "$admin_token" \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!

url=""
for _ in $(seq 1 600); do
  url="$(sed -n 's/^toolhost listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$work/server.out" | head -n1)"
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "tests/browser: the server exited early" >&2
    cat "$work/server.err" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "tests/browser: the server did not report its address within 60 s" >&2
  tail -n 50 "$work/server.err" >&2
  exit 1
fi
echo "tests/browser: server at $url"

mkdir -p "$root/tests/artifacts"
export TOOLHOST_URL="$url"
export TOOLHOST_ADMIN_TOKEN="$admin_token"
export TOOLHOST_ARTIFACTS="$root/tests/artifacts"
export TOOLHOST_WORK="$work"
export TOOLHOST_ROOT="$root"
status=0
(cd "$here" && node --test --test-concurrency=1 --test-reporter=spec ./*.test.mjs) || status=$?
if [ "$status" -ne 0 ]; then
  echo "tests/browser: server log (last 40 lines):" >&2
  tail -n 40 "$work/server.err" >&2 || true
fi
exit "$status"
