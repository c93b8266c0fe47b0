# shellcheck shell=bash
# Shared by bench/run.sh and bench/idle-isolates.sh; source it, don't run it.
# Needs: BENCH_DIR (bench/), REPO (repo root).

# Load from one loopback address: the per-client limit on anonymous writes would throttle it.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0

PY=${PYTHON:-python3}
HELPER="$BENCH_DIR/lib/bench.py"
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolhost-bench}
PEERS_DIR=${PEERS_DIR:-$BENCH_CACHE/peers}
WORKERD_VERSION=${WORKERD_VERSION:-1.20261117.1}
DENO_VERSION=${DENO_VERSION:-2.9.6}

log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=install.sh
source "$BENCH_DIR/lib/install.sh"

# ---------- process cleanup ----------
# Every server we start is recorded here (pid per line) and stopped on exit.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-bench.XXXXXX")
PIDS_FILE="$WORK/pids"
: >"$PIDS_FILE"
mkdir -p "$WORK/pidfiles"

stop_pid() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do # up to 10 s
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
  local pid f
  while read -r pid; do [ -n "$pid" ] && stop_pid "$pid"; done <"$PIDS_FILE"
  # servers spawned by the cold-start helper, if it was interrupted before stopping them
  for f in "$WORK"/pidfiles/*; do [ -f "$f" ] && stop_pid "$(cat "$f")"; done
  if [ "${KEEP_WORK:-0}" = 1 ]; then log "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_bg NAME CMD...: start a server in the background, logging to $WORK/NAME.log; sets BG_PID.
start_bg() {
  local name=$1; shift
  "$@" >"$WORK/$name.log" 2>&1 </dev/null &
  BG_PID=$!
  echo "$BG_PID" >>"$PIDS_FILE"
}

# ---------- peers ----------
find_first() { local p; for p in "$@"; do [ -x "$p" ] && { echo "$p"; return 0; }; done; return 1; }

# install_peers: sets WORKERD_BIN, DENO_BIN, NODE_BIN (empty when unavailable, with a reason in
# PEER_SKIPS).
PEER_SKIPS=()
install_peers() {
  mkdir -p "$PEERS_DIR"
  local nm="$PEERS_DIR/node_modules"
  WORKERD_BIN=$(find_first "$nm/@cloudflare/workerd-linux-64/bin/workerd" "$nm/workerd/bin/workerd" || true)
  DENO_BIN=$(find_first "$nm/@deno/linux-x64-glibc/deno" "$nm/deno/deno" "$PEERS_DIR/pypi/deno/bin/deno" "$PEERS_DIR/pypi/bin/deno" || true)
  if { [ -z "$WORKERD_BIN" ] || [ -z "$DENO_BIN" ]; } && command -v npm >/dev/null; then
    local want=()
    [ -z "$WORKERD_BIN" ] && want+=("workerd@$WORKERD_VERSION")
    [ -z "$DENO_BIN" ] && want+=("deno@$DENO_VERSION")
    log "installing from npm into $PEERS_DIR: ${want[*]}"
    [ -f "$PEERS_DIR/package.json" ] || echo '{"name":"toolhost-bench-peers","private":true}' >"$PEERS_DIR/package.json"
    # The binaries come in the platform packages (optional dependencies); no postinstall needed.
    (cd "$PEERS_DIR" && timeout 600 npm install --no-audit --no-fund --loglevel=error "${want[@]}") >&2 ||
      log "npm install failed (${want[*]})"
    WORKERD_BIN=$(find_first "$nm/@cloudflare/workerd-linux-64/bin/workerd" "$nm/workerd/bin/workerd" || true)
    DENO_BIN=$(find_first "$nm/@deno/linux-x64-glibc/deno" "$nm/deno/deno" || true)
  fi
  if [ -z "$DENO_BIN" ]; then
    log "deno not from npm; trying the PyPI wheel"
    timeout 600 "$PY" -m pip install --quiet --target "$PEERS_DIR/pypi" "deno==$DENO_VERSION" >&2 ||
      timeout 600 "$PY" -m pip install --quiet --target "$PEERS_DIR/pypi" deno >&2 || log "pip install deno failed"
    DENO_BIN=$(find_first "$PEERS_DIR/pypi/deno/bin/deno" "$PEERS_DIR/pypi/bin/deno" ||
      find "$PEERS_DIR/pypi" -maxdepth 4 -type f -name deno -perm -u+x 2>/dev/null | head -1 || true)
  fi
  NODE_BIN=$(command -v node || true)
  [ -n "$WORKERD_BIN" ] && ! "$WORKERD_BIN" --version >/dev/null 2>&1 && { PEER_SKIPS+=("workerd: binary at $WORKERD_BIN does not run"); WORKERD_BIN=; }
  [ -n "$DENO_BIN" ] && ! "$DENO_BIN" --version >/dev/null 2>&1 && { PEER_SKIPS+=("deno: binary at $DENO_BIN does not run"); DENO_BIN=; }
  [ -z "$WORKERD_BIN" ] && PEER_SKIPS+=("workerd: not installed (npm workerd@$WORKERD_VERSION failed)")
  [ -z "$DENO_BIN" ] && PEER_SKIPS+=("deno: not installed (npm deno@$DENO_VERSION and PyPI deno failed)")
  [ -z "$NODE_BIN" ] && PEER_SKIPS+=("node: not on PATH")
  return 0
}

# ---------- toolhost ----------
# build_toolhost: sets TOOLHOST_BIN. TOOLHOST_BIN=path skips the build; SKIP_BUILD=1 uses the
# existing release binary.
build_toolhost() {
  if [ -n "${TOOLHOST_BIN:-}" ]; then
    [ -x "$TOOLHOST_BIN" ] || die "TOOLHOST_BIN=$TOOLHOST_BIN is not executable"
    TOOLHOST_DESC="a given binary (TOOLHOST_BIN=$TOOLHOST_BIN)"
    return
  fi
  local target=${CARGO_TARGET_DIR:-$REPO/target}
  if [ -n "${TOOLHOST_REV:-}" ]; then
    # Build a committed revision from a `git archive` snapshot (the work tree and the git state are
    # left alone), sharing the target dir so dependencies are reused; the binary is copied out.
    local sha
    sha=$(git -C "$REPO" rev-parse --verify "$TOOLHOST_REV^{commit}") || die "unknown revision $TOOLHOST_REV"
    # One snapshot dir per commit, kept, so repeated runs rebuild nothing.
    local src="$BENCH_CACHE/src-$sha"
    if [ ! -f "$src/Cargo.toml" ]; then
      rm -rf "$src" && mkdir -p "$src"
      git -C "$REPO" archive --format=tar "$sha" | tar -x -C "$src" || die "git archive $TOOLHOST_REV failed"
    fi
    log "cargo build --release -p toolhost (snapshot of $TOOLHOST_REV in $src, target dir $target)"
    (cd "$src" && CARGO_TARGET_DIR="$target" cargo build --release -p toolhost) >&2 || die "release build of $TOOLHOST_REV failed"
    cp "$target/release/toolhost" "$WORK/toolhost-$TOOLHOST_REV"
    TOOLHOST_BIN="$WORK/toolhost-$TOOLHOST_REV"
    TOOLHOST_DESC="commit ${sha:0:7} ($TOOLHOST_REV, git archive snapshot)"
    return
  fi
  TOOLHOST_BIN="$target/release/toolhost"
  TOOLHOST_DESC="the work tree at $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
  [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null)" ] && TOOLHOST_DESC+=" with modified tracked files"
  if [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$TOOLHOST_BIN" ]; then
    log "SKIP_BUILD=1: using $TOOLHOST_BIN as it is"
    return
  fi
  log "cargo build --release -p toolhost (in $REPO)"
  (cd "$REPO" && cargo build --release -p toolhost) >&2 || die "release build failed"
  [ -x "$TOOLHOST_BIN" ] || die "no binary at $TOOLHOST_BIN"
}

# build_ceiling: sets CEILING_BIN and CEILING_DESC, the axum-ceiling peer (bench/axum-ceiling/).
# AXUM_CEILING_BIN=path uses that binary; SKIP_BUILD=1 uses the existing release binary. It is
# built from the work tree even under TOOLHOST_REV: it is the yardstick, not the code under test.
build_ceiling() {
  local deps
  deps=$(awk '/^name = "(axum|tokio)"$/ {n = $3; getline; gsub(/"/, "", n); printf "%s%s %s", sep, n, $3; sep = ", "}' "$REPO/Cargo.lock" | tr -d '"')
  if [ -n "${AXUM_CEILING_BIN:-}" ]; then
    [ -x "$AXUM_CEILING_BIN" ] || die "AXUM_CEILING_BIN=$AXUM_CEILING_BIN is not executable"
    CEILING_BIN=$AXUM_CEILING_BIN
    CEILING_DESC="a given binary (AXUM_CEILING_BIN=$AXUM_CEILING_BIN)"
    return
  fi
  local target=${CARGO_TARGET_DIR:-$REPO/target}
  CEILING_BIN="$target/release/axum-ceiling"
  CEILING_DESC="bench/axum-ceiling from the work tree at $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?'), release profile ($deps from Cargo.lock)"
  if [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$CEILING_BIN" ]; then
    log "SKIP_BUILD=1: using $CEILING_BIN as it is"
    return
  fi
  log "cargo build --release -p axum-ceiling (in $REPO)"
  (cd "$REPO" && cargo build --release -p axum-ceiling) >&2 || die "release build of axum-ceiling failed"
  [ -x "$CEILING_BIN" ] || die "no binary at $CEILING_BIN"
}

# toolhost_cmd PORT DATA SEED: the serve command line (RUST_LOG is set by the caller's env).
toolhost_cmd() {
  echo "$TOOLHOST_BIN" serve --addr "127.0.0.1:$1" --data "$2" --seed-dir "$3" --admin-token bench-admin-token
}

cpu_json() { "$PY" "$HELPER" cpu; }
