#!/usr/bin/env bash
# Regenerates web/dashboard/vendor/codemirror.js, the dashboard's code editor (CodeMirror 6 with
# JavaScript/TypeScript and JSON highlighting and lint diagnostics), from the versions pinned by
# scripts/codemirror/package-lock.json: one minified ES module, committed, so the dashboard stays
# offline under its CSP (`script-src 'self'`, no CDN) and the server needs no Node at run time.
# The packages' licences are written next to it (codemirror.LICENSES.txt).
#
#   bash scripts/vendor-codemirror.sh          # rebuild (needs npm and the registry)
#   bash scripts/vendor-codemirror.sh --check  # rebuild into a temporary file and fail if it differs
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/scripts/codemirror"
out_dir="$root/web/dashboard/vendor"

(cd "$src" && npm ci --no-audit --no-fund --loglevel=error)

target="$out_dir"
if [ "${1:-}" = "--check" ]; then
  target="$(mktemp -d)"
  trap 'rm -rf "$target"' EXIT
fi
mkdir -p "$target"

"$src/node_modules/.bin/esbuild" "$src/entry.mjs" --bundle --format=esm --minify \
  --legal-comments=none --target=es2020 --log-level=warning --outfile="$target/codemirror.js"

# Every bundled package's licence, in a stable order.
{
  echo "Licences of the packages bundled into codemirror.js (built by scripts/vendor-codemirror.sh)."
  (cd "$src" && npm ls --all --omit=dev --parseable) | tail -n +2 | sort -u | while read -r dir; do
    name="$(node -p "const p=require('$dir/package.json'); p.name+'@'+p.version+' ('+p.license+')'")"
    echo
    echo "================================================================================"
    echo "$name"
    echo "================================================================================"
    for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/license*; do
      if [ -f "$f" ]; then cat "$f"; fi
    done
  done
} >"$target/codemirror.LICENSES.txt"

if [ "${1:-}" = "--check" ]; then
  for f in codemirror.js codemirror.LICENSES.txt; do
    if ! cmp -s "$target/$f" "$out_dir/$f"; then
      echo "web/dashboard/vendor/$f is not what scripts/vendor-codemirror.sh builds: run it and commit" >&2
      exit 1
    fi
  done
  echo "web/dashboard/vendor is up to date"
fi
