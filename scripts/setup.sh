#!/usr/bin/env bash
# Installs what building and testing toolhost needs on a fresh Debian machine, skipping what is
# already there. Safe to run repeatedly.
set -euo pipefail

need_apt=()
# chromium: the dashboard and guide tests (tests/browser) drive Debian's Chromium with
# playwright-core; no browser is downloaded.
for pkg in build-essential cmake libsimde-dev pkg-config chromium; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
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

# node and npm (tests/js, tests/browser), from Debian when missing; a node installed otherwise
# (e.g. one that bundles npm) is kept.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs and npm"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm
fi
js_dir="$(dirname "$0")/../tests/js/x402"
# The stamp is the lock file the installed tree came from: reinstall only when it changed.
if ! cmp -s "$js_dir/package-lock.json" "$js_dir/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: installing tests/js/x402 packages"
  (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi

# tests/browser: playwright-core pinned by package-lock.json; reinstalled only when the lock changes.
browser_dir="$(dirname "$0")/../tests/browser"
if [ -f "$browser_dir/package-lock.json" ] && ! cmp -s "$browser_dir/package-lock.json" "$browser_dir/node_modules/.installed-lock.json"; then
  echo "setup: installing tests/browser packages"
  (cd "$browser_dir" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi
