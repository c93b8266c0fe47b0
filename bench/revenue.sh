#!/usr/bin/env bash
# Revenue reports as a builder's ledger grows, on PostgreSQL: `GET /ai/builders/revenue`,
# `GET /ai/builders/payouts` (its unpaid balance) and `GET /ai/admin/revenue` over a ledger of
# SALES sales, answered by this build (the database sums the sales in one statement) and by
# TOOLHOST_BASE_BIN (an earlier release), each on its own database filled with the same sales,
# requests interleaved. Both must answer the same report.
#
# Usage: TOOLHOST_BASE_BIN=/path/to/toolhost bench/revenue.sh [SALES...]   (default: 10000 100000)
# Knobs: ROUNDS (5: requests per report, build and ledger size; the medians are reported),
# SKIP_BUILD=1 (use target/release/toolhost as it is), KEEP_WORK=1.
# The sales are one builder's over 300 days, 20 endpoints, a third recorded only, one in a
# hundred refunded in part (written by SQL straight into each database, as the release that
# reads them stores them). Loopback only; servers and the cluster are removed at exit.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"
# shellcheck source=lib/pg.sh
. "$BENCH_DIR/lib/pg.sh"
trap 'rc=$?; cleanup; pg_stop; exit $rc' EXIT

ROUNDS=${ROUNDS:-5}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000)
[ -x "${TOOLHOST_BASE_BIN:-}" ] || die "set TOOLHOST_BASE_BIN to an earlier release's toolhost binary"
for t in curl python3 psql; do command -v "$t" >/dev/null || die "$t is missing"; done
export RUST_LOG=${RUST_LOG:-warn}

TARGET=${CARGO_TARGET_DIR:-$REPO/target}
if [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$TARGET/release/toolhost" ]; then
  log "SKIP_BUILD=1: using $TARGET/release/toolhost as it is"
else
  (cd "$REPO" && cargo build --release -p toolhost --bin toolhost) >&2 || die "release build failed"
fi
declare -A BIN_OF=([now]="$TARGET/release/toolhost" [base]="$TOOLHOST_BASE_BIN") URL_OF KEY_OF ID_OF
COMMANDS=()
pg_start toolhost_now toolhost_base

ADMIN=bench-admin-token
for build in base now; do
  port=$(free_port)
  start_bg "$build" "${BIN_OF[$build]}" serve --addr "127.0.0.1:$port" --data "$WORK/$build-data" \
    --admin-token "$ADMIN" --store "$(pg_url "toolhost_$build")"
  URL_OF[$build]="http://127.0.0.1:$port"
  for _ in $(seq 600); do curl -sf "${URL_OF[$build]}/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -sf "${URL_OF[$build]}/healthz" >/dev/null || die "$build not ready: $(tail -5 "$WORK/$build.log")"
  made=$(curl -sf -X POST "${URL_OF[$build]}/ai/admin/builders" -H "x-admin-token: $ADMIN" \
    -H 'content-type: application/json' -d '{"name": "seller"}') || die "no builder on $build"
  KEY_OF[$build]=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["builderKey"])' <<<"$made")
  ID_OF[$build]=$(python3 -c 'import json,sys; b=json.load(sys.stdin); print(b.get("builderId") or b["builder"]["id"])' <<<"$made")
done

# fill BUILD FROM TO: sales FROM..TO-1 of the builder, spread over the 300 days before now.
fill() {
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "toolhost_$1" \
    -v seller="${ID_OF[$1]}" -v from="$2" -v to="$3" -v total="${SIZES[-1]}" <<'SQL' >/dev/null
CREATE TEMP TABLE new_sales AS
SELECT i,
       'rcpt_' || lpad(to_hex(at_ms), 12, '0') || '7' || lpad(to_hex(i), 19, '0') AS id,
       at_ms, 'e' || (i % 20) AS endpoint, 1000 + i % 7 AS amount,
       CASE WHEN i % 3 = 0 THEN 'recorded' ELSE 'collected' END AS collection
FROM (SELECT i, (extract(epoch FROM now()) * 1000)::BIGINT
                - (:total - i)::BIGINT * (300 * 86400000::BIGINT / :total) AS at_ms
      FROM generate_series(:from, :to - 1) AS i) AS t;
INSERT INTO toolhost_sales (receipt_id, seller, endpoint, at_ms, amount, collection, entry)
SELECT id, :'seller', endpoint, at_ms, amount, collection,
       convert_to(json_build_object(
           'receiptId', id, 'endpointSlug', endpoint, 'seller', :'seller',
           'amount', round(amount::NUMERIC / 1000000, 6), 'method', 'x402',
           'at', to_char(to_timestamp(at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'collection', collection)::TEXT, 'UTF8')
FROM new_sales;
INSERT INTO toolhost_kv (tree, key, value)
SELECT 'ledger', convert_to('refund/' || id, 'UTF8'),
       convert_to(json_build_object(
           'refundId', 'rf_' || i, 'receiptId', id, 'endpointSlug', endpoint, 'seller', :'seller',
           'charged', amount::TEXT, 'amount', (amount / 2)::TEXT, 'reason', 'bench',
           'refundedBy', 'owner', 'paymentMethod', 'x402', 'returnedTo', 'recorded',
           'transaction', NULL, 'afterPayout', false, 'refundedAt', '2026-11-01T00:00:00Z',
           'signature', json_build_object('alg', 'ed25519', 'publicKey', '', 'value', ''))::TEXT,
           'UTF8')
FROM new_sales WHERE i % 100 = 7;
-- A release with sales' method as a column (migration 10) writes it with the sale; one with
-- refunds in a table of their own (migration 12) keeps them there.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_name = 'toolhost_sales' AND column_name = 'method') THEN
    UPDATE toolhost_sales SET method = 'x402' WHERE method IS NULL;
  END IF;
  IF to_regclass('toolhost_refunds') IS NOT NULL THEN
    INSERT INTO toolhost_refunds (receipt_id, seller, amount, entry)
    SELECT convert_from(substring(key FROM 8), 'UTF8'),
           convert_from(value, 'UTF8')::JSONB ->> 'seller',
           (convert_from(value, 'UTF8')::JSONB ->> 'amount')::BIGINT, value
    FROM toolhost_kv
    WHERE tree = 'ledger' AND key >= 'refund/'::BYTEA AND key < 'refund0'::BYTEA;
    DELETE FROM toolhost_kv
    WHERE tree = 'ledger' AND key >= 'refund/'::BYTEA AND key < 'refund0'::BYTEA;
    ANALYZE toolhost_refunds;
  END IF;
END $$;
ANALYZE toolhost_sales;
ANALYZE toolhost_kv;
SQL
}

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m}'; }
# fetch BUILD PATH: one report, its body in $WORK/BUILD.json; prints milliseconds.
fetch() {
  local auth=(-H "x-builder-key: ${KEY_OF[$1]}")
  [[ $2 == /ai/admin/* ]] && auth=(-H "x-admin-token: $ADMIN")
  curl -sf -o "$WORK/$1.json" -w '%{time_total}\n' "${auth[@]}" "${URL_OF[$1]}$2" |
    awk '{printf "%.1f\n", $1 * 1000}' || die "$2 failed on $1: $(tail -3 "$WORK/$1.log")"
}
same_report() { # the two builds' last answers, less the builder's id and the request's time
  python3 - "$WORK/base.json" "$WORK/now.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for r in (a, b):
    r.pop("builderId", None)
    r.pop("since", None)
print("same" if a == b else "DIFFERENT")
PY
}

printf '| sales | report | %s (ms, median) | this build (ms, median) | ratio | answers |\n|---|---|---|---|---|---|\n' "$(basename "$TOOLHOST_BASE_BIN")"
filled=0
for size in "${SIZES[@]}"; do
  log "ledger of $size sales"
  for build in base now; do fill "$build" "$filled" "$size"; done
  filled=$size
  for path in "/ai/builders/revenue?since=365d" "/ai/builders/payouts" "/ai/admin/revenue?since=365d"; do
    declare -A MS=([base]='' [now]='')
    for _ in $(seq "$ROUNDS"); do
      for build in base now; do MS[$build]+="$(fetch "$build" "$path") "; done
    done
    base=$(tr ' ' '\n' <<<"${MS[base]}" | grep . | median)
    now=$(tr ' ' '\n' <<<"${MS[now]}" | grep . | median)
    ratio=$(awk -v a="$base" -v b="$now" 'BEGIN {printf "%.1fx", (b > 0) ? a / b : 0}')
    printf '| %s | `%s` | %s | %s | %s | %s |\n' "$size" "${path%%\?*}" "$base" "$now" "$ratio" "$(same_report)"
  done
done
