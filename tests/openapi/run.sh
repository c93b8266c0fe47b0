#!/usr/bin/env bash
# Checks that /openapi.json says exactly what the server does: starts the server binary on a
# free loopback port with a throw-away data dir and an admin token, seeds a builder, two
# endpoints (one the builder's, one the admin's), a secret and a developer credit, then runs
# schemathesis (PyPI, pinned in requirements.txt) against the live document with every check,
# sending the admin token and the builder key, and a bounded number of examples per operation.
# Any response the document does not describe (status, content type, body shape), any
# schema-valid request refused, any schema-invalid one accepted, any 5xx fails the run.
# Needs `bash scripts/setup.sh` first (.venv).
#   TOOLHOST_BIN             server binary to use (default: build and use target/debug/toolhost)
#   OPENAPI_MAX_EXAMPLES     examples per operation and phase (default 30)
set -euo pipefail

# Generated load from one loopback address: the per-client limit on anonymous writes would throttle it.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
st=$here/.venv/bin/schemathesis
[ -x "$st" ] || { echo "openapi tests: $st missing; run scripts/setup.sh" >&2; exit 1; }

data=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$data"' EXIT
TOOLHOST_ADMIN_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export TOOLHOST_ADMIN_TOKEN
# shellcheck source=../lib/serve.sh
source "$root/tests/lib/serve.sh"
serve_toolhost "openapi tests" "$root" "$data"
echo "openapi tests: server at $url"

# POST a JSON body and print the answer; any non-2xx stops the run.
post() {
  curl -fsS -X POST "$url$1" -H 'Content-Type: application/json' "${@:3}" -d "$2"
}
admin=(-H "X-Admin-Token: $TOOLHOST_ADMIN_TOKEN")
key=$(post /ai/admin/builders '{"name":"Schema Builder","contact":"schema@example.com"}' "${admin[@]}" |
  "$here/.venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["builderKey"])')
builder=(-H "X-Builder-Key: $key")
post /ai/endpoints/create '{"slug":"echo-js","title":"Echo","priceUsd":0,
  "source":"export default async (req) => ({echo: req.body})",
  "inputSchema":{"type":"object","properties":{"text":{"type":"string","maxLength":50}}},
  "safetyAttestation":{"accepted":true}}' "${builder[@]}" >/dev/null
post /ai/endpoints/create '{"slug":"fixed-answer","title":"Fixed","priceUsd":0,
  "response":{"answer":42}}' "${admin[@]}" >/dev/null
post /ai/endpoints/echo-js/secrets '{"set":{"API_TOKEN":"s3cret"}}' "${builder[@]}" >/dev/null
# A developer credit on every request, so paid calls and the paid registration get past 402.
credit=$(post /ai/admin/credits '{"amountUsd":1000}' "${admin[@]}" |
  "$here/.venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["credit"]["token"])')

# The admin token, the builder key and the credit on every request: the admin reaches every
# route past its credential check, the builder key is what the builder-only routes read.
# One worker: schemathesis's workers are threads, and CPython 3.11's `ast` (Hypothesis parses
# lambdas' source to describe them) keeps its recursion depth per interpreter, not per thread,
# so two threads parsing at once can fail with "AST constructor recursion depth mismatch".
run() {
  "$st" --config-file "$here/schemathesis.toml" run "$url/openapi.json" \
    --header "X-Admin-Token: $TOOLHOST_ADMIN_TOKEN" \
    --header "X-Builder-Key: $key" \
    --header "X-Developer-Credit: $credit" \
    --max-examples "${OPENAPI_MAX_EXAMPLES:-30}" \
    --seed 1 \
    --workers 1 \
    --request-timeout 20 \
    --no-color \
    "$@"
}
status=0
started=$SECONDS
cd "$data"  # schemathesis keeps its example database in the working directory
# Key rotation revokes the key every other request sends, so it runs alone, last.
run --exclude-path /ai/builders/keys/rotate "$@" || status=$?
run --include-path /ai/builders/keys/rotate --phases examples,coverage,fuzzing "$@" || status=$?
echo "openapi tests: schemathesis took $((SECONDS - started))s"
if [ "$status" -ne 0 ]; then
  echo "openapi tests: FAILED (server log tail below)" >&2
  tail -n 20 "$data/server.log" >&2
fi
exit "$status"
