#!/usr/bin/env bash
# Fuzzes the parsers that take untrusted bytes, bounded in time and runs (docs/fuzzing.md): builds
# every cargo-fuzz target in fuzz/ once, then runs each from its checked-in seed corpus
# (fuzz/corpus/<target>) for FUZZ_SECONDS (default 20) or FUZZ_RUNS executions (default 5
# million), whichever comes first. A crash fails the script and prints the panic, the input
# (base64 and as text) and the command that reproduces it. scripts/test.sh runs this;
# FUZZ_SECONDS=0 skips it. Installs cargo-fuzz when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-20}"
runs="${FUZZ_RUNS:-5000000}"
if [ "$seconds" = "0" ]; then
  echo "fuzz: skipped (FUZZ_SECONDS=0)"
  exit 0
fi
started=$(date +%s)
# cargo fuzz builds with unstable rustc flags (-Zsanitizer, sanitizer-coverage passes). Only the
# stable toolchain is installed; RUSTC_BOOTSTRAP=1 lets it accept them.
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --version 0.13.2 --locked --quiet
fi
# No AddressSanitizer: the workspace forbids `unsafe`, so what ASan would add is already a panic
# (bounds, overflow with debug assertions, which cargo fuzz turns on), at twice the build time.
flags=(--sanitizer none)
# The fuzz crate's own target dir (fuzz/target), apart from the workspace's.
unset CARGO_TARGET_DIR
cargo fuzz build "${flags[@]}"
built=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
for target in $(cargo fuzz list); do
  mkdir -p "$work/$target" "$work/artifacts/$target"
  log="$work/$target.log"
  # New inputs go to the scratch directory (listed first); the checked-in corpus is only read.
  if cargo fuzz run "${flags[@]}" "$target" "$work/$target" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/artifacts/$target/" -print_final_stats=1 >"$log" 2>&1; then
    executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    echo "fuzz: $target: ${executed:-?} inputs (${per_second:-?}/s), no crash"
  else
    failed+=("$target")
    echo "fuzz: $target FAILED; the end of its log:" >&2
    tail -n 40 "$log" >&2
    for found in "$work/artifacts/$target"/*; do
      [ -f "$found" ] || continue
      mkdir -p "fuzz/artifacts/$target"
      input="fuzz/artifacts/$target/$(basename "$found")"
      cp "$found" "$input"
      echo "fuzz: input $input (base64): $(base64 -w0 "$input")" >&2
      echo "fuzz: as text: $(head -c 300 "$input" | cat -v)" >&2
      echo "fuzz: reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none $target $input" >&2
    done
  fi
done
echo "fuzz: build $((built - started))s, total $(( $(date +%s) - started ))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}: fix them, add the input to fuzz/corpus/<target>/ and a regression test next to the code (docs/fuzzing.md)" >&2
  exit 1
fi
