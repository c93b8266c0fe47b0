#!/usr/bin/env bash
# One command from a fresh Debian machine to a running server on embedded defaults:
# installs the missing build packages (only those: the test tools come with scripts/test.sh),
# builds in release mode, serves on 127.0.0.1:8402 with ./data.
# Extra arguments go to `toolhost serve` (see `toolhost serve --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh serve
exec cargo run --release --locked -- serve "$@"
