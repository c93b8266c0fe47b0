# Sourced by the suites that drive a real server from a shell script (tests/mcp, tests/openapi):
# starts `toolhost serve` on a free loopback port with a throw-away data dir and waits for the
# address it reports.
#   serve_toolhost NAME ROOT DATA   sets `pid` and `url`; NAME prefixes its error messages.
# The binary is $TOOLHOST_BIN, or target/debug/toolhost built now and copied into DATA (a shared
# CARGO_TARGET_DIR may be rebuilt by another checkout meanwhile). The caller's EXIT trap must
# kill "$pid" and remove DATA.
serve_toolhost() {
  local name=$1 root=$2 data=$3 bin=${TOOLHOST_BIN:-}
  if [ -z "$bin" ]; then
    (cd "$root" && cargo build --locked -q -p toolhost --bin toolhost)
    cp "${CARGO_TARGET_DIR:-$root/target}/debug/toolhost" "$data/toolhost"
    bin=$data/toolhost
  fi
  # Created here, not by the background job's redirection, which may come after the first read.
  : >"$data/server.log"
  "$bin" serve --addr 127.0.0.1:0 --data "$data/store" >"$data/server.log" 2>&1 &
  pid=$!
  url=""
  for _ in $(seq 1 100); do
    url=$(sed -n 's/^toolhost listening on \(http:[^ ]*\)$/\1/p' "$data/server.log" | head -n 1)
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$data/server.log" >&2; echo "$name: server did not start" >&2; exit 1; }
    sleep 0.1
  done
  cat "$data/server.log" >&2
  echo "$name: server did not report its address" >&2
  exit 1
}
