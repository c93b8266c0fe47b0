#!/usr/bin/env bash
# Runs every test: installs what is missing, then the Rust unit and integration tests of the
# whole workspace (server and sandbox). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
started=$(date +%s)
cargo test --workspace --locked --no-fail-fast
(cd tests/js && node --test)
echo "scripts/test.sh: all tests passed in $(( $(date +%s) - started ))s"
