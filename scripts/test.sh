#!/usr/bin/env bash
# Runs every test: installs what is missing, then the Rust unit and integration tests of the
# whole workspace (server and sandbox; they include on-chain settlement against a local anvil
# node, tests/api/chain.rs, the store conformance suite on sled and a throwaway PostgreSQL, and
# three toolhost nodes on one PostgreSQL, tests/api/cluster.rs), the fuzz targets for a bounded
# time (scripts/fuzz.sh), the API suite once more on PostgreSQL, the JS handler tests, the
# handler type checks (tests/types), the MCP client suites (tests/mcp/run.sh), schemathesis
# against the OpenAPI document (tests/openapi/run.sh), the vendored CodeMirror bundle against its
# pins (scripts/vendor-codemirror.sh --check), and the dashboard and guide in headless Chromium
# (tests/browser/run.sh). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
setup_started=$(date +%s)
bash scripts/setup.sh
started=$(date +%s)
# Each step's wall time, printed at the end (CI's budget is 45 minutes: this says where it goes).
timings=()
step_started=$started
timings+=("$(printf '%5ds  %s' $((started - setup_started)) "setup (scripts/setup.sh)")")
step() {
  local now
  now=$(date +%s)
  timings+=("$(printf '%5ds  %s' $((now - step_started)) "$1")")
  step_started=$now
}
cargo test --workspace --locked --no-fail-fast
step "cargo test --workspace (builds included)"
# The wall around sandbox worker processes, probed from inside one (a test-only feature that
# runs native code in the worker, standing for a compromised engine). `--workspace` with one
# test target, here and below: a `-p` selection unifies dependency features differently
# (no dev-dependencies of the other members), which rebuilt half the tree for each step.
cargo test --workspace --features sandbox/wall-probe --test wall --locked --no-fail-fast
step "sandbox wall-probe"
# The parsers that take untrusted bytes, fuzzed for a bounded time from the checked-in corpus
# (docs/fuzzing.md); a crash fails the run and prints the input. FUZZ_SECONDS=0 skips it.
bash scripts/fuzz.sh
step "fuzz"
# The API suite again with every server's state in PostgreSQL (a throwaway cluster on loopback,
# a schema per server): the shared store must keep every promise the embedded one does.
TOOLHOST_TEST_STORE=postgres cargo test --workspace --test api --locked --no-fail-fast -- --skip cluster::
step "API suite on PostgreSQL"
(cd tests/js && node --test)
step "JS handler tests"
# The handler types: every shipped handler and doc example type-checks against
# web/toolhost.d.ts (tsc's checkJs, strict), a wrong handler fails where marked, and the d.ts
# declares nothing the runtime lacks (tests/types/README.md).
(cd tests/types && node --test)
step "handler types"
# The server binary the API suites just ran (built by `cargo test`) serves the MCP, browser
# and schemathesis steps. A `cargo build -p toolhost` here unified dependency features apart
# from the test builds and rebuilt half the tree (about 250 s of CI, in the MCP step).
target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir=$PWD/$target_dir ;; esac
export TOOLHOST_BIN=$target_dir/debug/toolhost
test -x "$TOOLHOST_BIN"
# MCP: the TypeScript and Python SDK clients and the conformance suite against a real server.
bash tests/mcp/run.sh
step "MCP clients and conformance"
# The dashboard's vendored code editor is what its pinned packages build (scripts/codemirror).
bash scripts/vendor-codemirror.sh --check
step "CodeMirror pins"
# The dashboard and the guide in headless Chromium.
bash tests/browser/run.sh
step "browser tests"
# The OpenAPI document against what the server does (schemathesis, every check).
bash tests/openapi/run.sh
step "schemathesis"
printf '%s\n' "${timings[@]}"
echo "scripts/test.sh: all tests passed in $(( $(date +%s) - started ))s"
