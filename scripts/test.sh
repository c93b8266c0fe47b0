#!/usr/bin/env bash
# Runs every test: installs what is missing, then the Rust unit and integration tests of the
# whole workspace (server and sandbox), the JS handler tests, and the MCP client suites
# (tests/mcp/run.sh). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
started=$(date +%s)
cargo test --workspace --locked --no-fail-fast
(cd tests/js && node --test)
# MCP: the TypeScript and Python SDK clients and the conformance suite against a real server.
bash tests/mcp/run.sh
echo "scripts/test.sh: all tests passed in $(( $(date +%s) - started ))s"
