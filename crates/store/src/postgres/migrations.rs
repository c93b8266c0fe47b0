//! Schema versions, applied in order at start-up; each runs once, in its own transaction, and
//! nodes starting together race harmlessly ([`migrate`]).

use deadpool_postgres::Pool;
use tokio_postgres::IsolationLevel;

use super::{backoff, column, pool_error, read_error, MAX_ATTEMPTS};
use crate::{StoreError, StoreResult};

/// Schema versions, applied in order at start-up; each runs once, in its own transaction.
/// Never edit a released one: add another.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "CREATE TABLE toolhost_kv (
         tree TEXT NOT NULL,
         key BYTEA NOT NULL,
         value BYTEA NOT NULL,
         PRIMARY KEY (tree, key)
     );
     CREATE TABLE toolhost_generations (
         tree TEXT PRIMARY KEY,
         gen BIGINT NOT NULL
     );
     CREATE TABLE toolhost_changes (
         tree TEXT NOT NULL,
         gen BIGINT NOT NULL,
         key BYTEA NOT NULL,
         at TIMESTAMPTZ NOT NULL DEFAULT now(),
         PRIMARY KEY (tree, gen)
     );",
    ),
    (
        2,
        // Endpoint logs leave the key-value table for their own ([`logs`]): every entry the
        // `logs` tree kept under `{endpoint}/{id}` moves (rollout tallies, under `rollout/`,
        // stay), and the per-endpoint counts in `meta` go.
        "CREATE TABLE toolhost_logs (
             endpoint TEXT COLLATE \"C\" NOT NULL,
             id TEXT COLLATE \"C\" NOT NULL,
             entry BYTEA NOT NULL,
             PRIMARY KEY (endpoint, id)
         );
         INSERT INTO toolhost_logs (endpoint, id, entry)
         SELECT convert_from(substring(key FROM 1 FOR position('/'::BYTEA IN key) - 1), 'UTF8'),
                convert_from(substring(key FROM position('/'::BYTEA IN key) + 1), 'UTF8'),
                value
         FROM toolhost_kv
         WHERE tree = 'logs' AND position('/'::BYTEA IN key) > 1
           AND substring(key FROM 1 FOR 8) <> 'rollout/'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'logs' AND position('/'::BYTEA IN key) > 1
           AND substring(key FROM 1 FOR 8) <> 'rollout/'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'meta' AND substring(key FROM 1 FOR 10) = 'log_count/'::BYTEA;",
    ),
    (
        3,
        // Builder events leave the key-value table for their own ([`events`]): every event the
        // `events` tree kept under `{builder}/{id}` moves, its endpoint read from its JSON.
        "CREATE TABLE toolhost_events (
             builder TEXT COLLATE \"C\" NOT NULL,
             id TEXT COLLATE \"C\" NOT NULL,
             endpoint TEXT COLLATE \"C\",
             entry BYTEA NOT NULL,
             PRIMARY KEY (builder, id)
         );
         CREATE INDEX toolhost_events_by_endpoint ON toolhost_events (builder, endpoint, id);
         CREATE INDEX toolhost_events_by_id ON toolhost_events (id);
         INSERT INTO toolhost_events (builder, id, endpoint, entry)
         SELECT convert_from(substring(key FROM 1 FOR position('/'::BYTEA IN key) - 1), 'UTF8'),
                convert_from(substring(key FROM position('/'::BYTEA IN key) + 1), 'UTF8'),
                convert_from(value, 'UTF8')::JSONB ->> 'endpointSlug',
                value
         FROM toolhost_kv
         WHERE tree = 'events' AND position('/'::BYTEA IN key) > 1;
         DELETE FROM toolhost_kv WHERE tree = 'events' AND position('/'::BYTEA IN key) > 1;",
    ),
    (
        4,
        // Quotes leave the key-value table for their own ([`quotes`](super::quotes)): every
        // quote the `quotes` tree kept under its id moves, its expiry read from its JSON (an
        // unreadable one expired at the epoch: it could never be honoured, and is swept).
        "CREATE TABLE toolhost_quotes (
             id TEXT COLLATE \"C\" PRIMARY KEY,
             expires_at_ms BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_quotes_by_expiry ON toolhost_quotes (expires_at_ms);
         CREATE FUNCTION pg_temp.toolhost_expiry_ms(entry BYTEA) RETURNS BIGINT
         LANGUAGE plpgsql AS $$
         BEGIN
             RETURN (extract(epoch FROM (convert_from(entry, 'UTF8')::JSONB ->> 'expiresAt')::TIMESTAMPTZ)
                     * 1000)::BIGINT;
         EXCEPTION WHEN OTHERS THEN
             RETURN 0;
         END $$;
         INSERT INTO toolhost_quotes (id, expires_at_ms, entry)
         SELECT convert_from(key, 'UTF8'), pg_temp.toolhost_expiry_ms(value), value
         FROM toolhost_kv WHERE tree = 'quotes';
         DELETE FROM toolhost_kv WHERE tree = 'quotes';",
    ),
    (
        5,
        // Sales leave the key-value table for their own ([`sales`](super::sales)): every sale
        // the `ledger` tree kept under `sale/{receiptId}` moves, its columns read from its JSON
        // (the amount a decimal of dollars, made atomic units exactly), and the copies under
        // `by_seller/` go: the table's index on the seller replaces them.
        "CREATE TABLE toolhost_sales (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             seller TEXT COLLATE \"C\",
             endpoint TEXT COLLATE \"C\",
             at_ms BIGINT NOT NULL,
             amount BIGINT NOT NULL,
             collection TEXT,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_sales_by_seller ON toolhost_sales (seller, receipt_id);
         INSERT INTO toolhost_sales (receipt_id, seller, endpoint, at_ms, amount, collection, entry)
         SELECT convert_from(substring(key FROM 6), 'UTF8'),
                sale ->> 'seller',
                sale ->> 'endpointSlug',
                floor(extract(epoch FROM (sale ->> 'at')::TIMESTAMPTZ) * 1000)::BIGINT,
                ((sale ->> 'amount')::NUMERIC * 1000000)::BIGINT,
                sale ->> 'collection',
                value
         FROM (SELECT key, value, convert_from(value, 'UTF8')::JSONB AS sale
               FROM toolhost_kv
               WHERE tree = 'ledger' AND substring(key FROM 1 FOR 5) = 'sale/'::BYTEA) AS sales;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND (substring(key FROM 1 FOR 5) = 'sale/'::BYTEA
                                    OR substring(key FROM 1 FOR 10) = 'by_seller/'::BYTEA);",
    ),
    (
        6,
        // Receipts leave the key-value table for their own ([`receipts`](super::receipts)):
        // every receipt the `receipts` tree kept under its id moves, its columns read from its
        // JSON. One that cannot be read moves as it is, never counted a free call's (a sweep
        // keeps it, as before).
        "CREATE TABLE toolhost_receipts (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             endpoint TEXT COLLATE \"C\",
             payer TEXT,
             free BOOLEAN NOT NULL,
             issued_at_ms BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_receipts_free_by_age ON toolhost_receipts (issued_at_ms) WHERE free;
         CREATE FUNCTION pg_temp.toolhost_json(entry BYTEA) RETURNS JSONB
         LANGUAGE plpgsql AS $$
         BEGIN
             RETURN convert_from(entry, 'UTF8')::JSONB;
         EXCEPTION WHEN OTHERS THEN
             RETURN NULL;
         END $$;
         CREATE FUNCTION pg_temp.toolhost_ms(at TEXT) RETURNS BIGINT
         LANGUAGE plpgsql AS $$
         BEGIN
             RETURN floor(extract(epoch FROM at::TIMESTAMPTZ) * 1000)::BIGINT;
         EXCEPTION WHEN OTHERS THEN
             RETURN NULL;
         END $$;
         INSERT INTO toolhost_receipts (receipt_id, endpoint, payer, free, issued_at_ms, entry)
         SELECT convert_from(key, 'UTF8'),
                receipt ->> 'endpointSlug',
                receipt ->> 'payer',
                coalesce(receipt ->> 'charged' = 'false' AND receipt ->> 'paymentMethod' = 'free'
                         AND pg_temp.toolhost_ms(receipt ->> 'issuedAt') IS NOT NULL, false),
                coalesce(pg_temp.toolhost_ms(receipt ->> 'issuedAt'), 0),
                value
         FROM (SELECT key, value, pg_temp.toolhost_json(value) AS receipt
               FROM toolhost_kv WHERE tree = 'receipts') AS receipts;
         DELETE FROM toolhost_kv WHERE tree = 'receipts';",
    ),
    (
        7,
        // Payout packets leave the key-value table for their own ([`packets`](super::packets)):
        // every packet the `ledger` tree kept under `packet/{builderId}/{packetId}` moves, its
        // status read from its JSON.
        "CREATE TABLE toolhost_packets (
             packet_id TEXT COLLATE \"C\" PRIMARY KEY,
             builder TEXT COLLATE \"C\",
             status TEXT,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_packets_by_builder ON toolhost_packets (builder, packet_id);
         INSERT INTO toolhost_packets (packet_id, builder, status, entry)
         SELECT split_part(convert_from(key, 'UTF8'), '/', 3),
                split_part(convert_from(key, 'UTF8'), '/', 2),
                convert_from(value, 'UTF8')::JSONB ->> 'status',
                value
         FROM toolhost_kv
         WHERE tree = 'ledger' AND substring(key FROM 1 FOR 7) = 'packet/'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND substring(key FROM 1 FOR 7) = 'packet/'::BYTEA;",
    ),
    (
        8,
        // Payment nonces leave the key-value table for their own ([`nonces`](super::nonces)):
        // every nonce the `nonces` tree kept moves, its state read from its entry as the
        // domain writes it (a claim record's JSON, `pending/` for a legacy claim, `failed/`
        // for a burned one, else the receipt id that spent it). The open ones are indexed
        // apart, so recovery reads only them.
        "CREATE TABLE toolhost_nonces (
             nonce_key TEXT COLLATE \"C\" PRIMARY KEY,
             state TEXT,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_nonces_open ON toolhost_nonces (nonce_key)
             WHERE state IN ('claimed', 'settling', 'legacy');
         INSERT INTO toolhost_nonces (nonce_key, state, entry)
         SELECT convert_from(key, 'UTF8'),
                CASE WHEN substring(value FROM 1 FOR 1) = '{'::BYTEA THEN
                         CASE WHEN position('\"state\":\"settling\"'::BYTEA IN value) > 0
                              THEN 'settling' ELSE 'claimed' END
                     WHEN substring(value FROM 1 FOR 8) = 'pending/'::BYTEA THEN 'legacy'
                     WHEN substring(value FROM 1 FOR 7) = 'failed/'::BYTEA THEN 'failed'
                     ELSE 'spent' END,
                value
         FROM toolhost_kv WHERE tree = 'nonces';
         DELETE FROM toolhost_kv WHERE tree = 'nonces';",
    ),
    (
        9,
        // The receipt log's pending entries and leaves leave the key-value table for tables
        // of their own ([`receipt_log`](super::receipt_log)): each `pending/<name>` moves, and
        // each leaf's three keys (`entry/<index>`, its hash `hash/<0><index>` and, for the
        // latest version under a name, `leaf/<name>`) become one row; a version a later one
        // replaced under its name has none (it is only read by index). The interior nodes
        // (`hash/<level><index>`, level 1 and up) and the log's checkpoint stay.
        "CREATE TABLE toolhost_log_pending (
             name TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_log_leaves (
             leaf BIGINT PRIMARY KEY,
             name TEXT COLLATE \"C\",
             hash BYTEA NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_log_leaves_by_name ON toolhost_log_leaves (name, leaf);
         INSERT INTO toolhost_log_pending (name, entry)
         SELECT convert_from(substring(key FROM 9), 'UTF8'), value
         FROM toolhost_kv
         WHERE tree = 'receipt_log' AND substring(key FROM 1 FOR 8) = 'pending/'::BYTEA;
         WITH entries AS (
             SELECT ('x' || encode(substring(key FROM 7), 'hex'))::BIT(64)::BIGINT AS leaf,
                    value
             FROM toolhost_kv
             WHERE tree = 'receipt_log' AND substring(key FROM 1 FOR 6) = 'entry/'::BYTEA
         ), hashes AS (
             SELECT ('x' || encode(substring(key FROM 7), 'hex'))::BIT(64)::BIGINT AS leaf,
                    value
             FROM toolhost_kv
             WHERE tree = 'receipt_log' AND substring(key FROM 1 FOR 6) = '\\x686173682f00'::BYTEA
         ), names AS (
             SELECT ('x' || encode(value, 'hex'))::BIT(64)::BIGINT AS leaf,
                    convert_from(substring(key FROM 6), 'UTF8') AS name
             FROM toolhost_kv
             WHERE tree = 'receipt_log' AND substring(key FROM 1 FOR 5) = 'leaf/'::BYTEA
         )
         INSERT INTO toolhost_log_leaves (leaf, name, hash, entry)
         SELECT entries.leaf, names.name, hashes.value, entries.value
         FROM entries JOIN hashes USING (leaf) LEFT JOIN names USING (leaf);
         DELETE FROM toolhost_kv
         WHERE tree = 'receipt_log'
           AND (substring(key FROM 1 FOR 8) = 'pending/'::BYTEA
                OR substring(key FROM 1 FOR 6) = 'entry/'::BYTEA
                OR substring(key FROM 1 FOR 6) = '\\x686173682f00'::BYTEA
                OR substring(key FROM 1 FOR 5) = 'leaf/'::BYTEA);",
    ),
    (
        10,
        // A sale's payment method becomes a column (read from its JSON for the sales already
        // stored): revenue reports group by it, summed by the database without reading each
        // sale's JSON ([`sales`](super::sales)).
        "ALTER TABLE toolhost_sales ADD COLUMN method TEXT;
         UPDATE toolhost_sales SET method = convert_from(entry, 'UTF8')::JSONB ->> 'method';",
    ),
    (
        11,
        // Payment identifiers leave the key-value table for their own
        // ([`payment_ids`](super::payment_ids)): every record the `payment_ids` tree kept under
        // `{payer}/{id}` moves, with its payer, whether its call answered and when it was
        // reserved read from its key and its JSON.
        "CREATE TABLE toolhost_payment_ids (
             payment_key TEXT COLLATE \"C\" PRIMARY KEY,
             payer TEXT COLLATE \"C\",
             answered BOOLEAN,
             created_at_ms BIGINT,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_payment_ids (payment_key, payer, answered, created_at_ms, entry)
         SELECT convert_from(key, 'UTF8'),
                split_part(convert_from(key, 'UTF8'), '/', 1),
                coalesce(jsonb_typeof(record -> 'answer') = 'object', false),
                (record ->> 'createdAtMs')::BIGINT,
                value
         FROM (SELECT key, value, convert_from(value, 'UTF8')::JSONB AS record
               FROM toolhost_kv WHERE tree = 'payment_ids') AS ids;
         DELETE FROM toolhost_kv WHERE tree = 'payment_ids';",
    ),
    (
        12,
        // Refunds leave the key-value table for their own ([`refunds`](super::refunds)): every
        // refund the `ledger` tree kept under `refund/{receiptId}` moves, its seller and amount
        // read from its JSON; a revenue report then joins them by receipt id.
        "CREATE TABLE toolhost_refunds (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             seller TEXT COLLATE \"C\",
             amount BIGINT,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_refunds (receipt_id, seller, amount, entry)
         SELECT convert_from(substring(key FROM 8), 'UTF8'),
                refund ->> 'seller',
                (refund ->> 'amount')::BIGINT,
                value
         FROM (SELECT key, value, convert_from(value, 'UTF8')::JSONB AS refund
               FROM toolhost_kv
               WHERE tree = 'ledger' AND key >= 'refund/'::BYTEA AND key < 'refund0'::BYTEA)
              AS refunds;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'refund/'::BYTEA AND key < 'refund0'::BYTEA;",
    ),
    (
        13,
        // Paid-out marks leave the key-value table for their own
        // ([`paid_out`](super::paid_out)): every mark the `ledger` tree kept under
        // `paid/{receiptId}` (its value the packet's id) moves; a payout view's sum then looks
        // a sale up in it.
        "CREATE TABLE toolhost_paid_out (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             packet_id TEXT COLLATE \"C\",
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_paid_out (receipt_id, packet_id, entry)
         SELECT convert_from(substring(key FROM 6), 'UTF8'), convert_from(value, 'UTF8'), value
         FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'paid/'::BYTEA AND key < 'paid0'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'paid/'::BYTEA AND key < 'paid0'::BYTEA;",
    ),
    (
        14,
        // Pending settlements leave the key-value table for their own
        // ([`pending_settlements`](super::pending_settlements)): every entry the `ledger` tree
        // kept under `pending/{receiptId}` moves; a revenue report's sums then join them by
        // receipt id, and the reconciler pages them by id.
        "CREATE TABLE toolhost_pending_settlements (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_pending_settlements (receipt_id, entry)
         SELECT convert_from(substring(key FROM 9), 'UTF8'), value
         FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'pending/'::BYTEA AND key < 'pending0'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'pending/'::BYTEA AND key < 'pending0'::BYTEA;",
    ),
    (
        15,
        // Developer credits leave the key-value table for their own
        // ([`credits`](super::credits)): each grant (`grant/{creditId}`) with its token's
        // digest (the `token/{sha256}` entry naming it; every release wrote the two in one
        // batch, but a grant is kept even without one), each balance (`balance/{creditId}`,
        // decimal text) and each hold (`hold/{holdId}`, its credit read from its JSON) moves.
        "CREATE TABLE toolhost_credits (
             credit_id TEXT COLLATE \"C\" PRIMARY KEY,
             token_sha256 TEXT COLLATE \"C\" UNIQUE,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_credit_balances (
             credit_id TEXT COLLATE \"C\" PRIMARY KEY,
             units BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_credit_holds (
             hold_id TEXT COLLATE \"C\" PRIMARY KEY,
             credit_id TEXT COLLATE \"C\" NOT NULL,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_credits (credit_id, token_sha256, entry)
         SELECT convert_from(substring(g.key FROM 7), 'UTF8'),
                convert_from(substring(t.key FROM 7), 'UTF8'),
                g.value
         FROM toolhost_kv g
         LEFT JOIN toolhost_kv t ON t.tree = 'credits' AND t.value = substring(g.key FROM 7)
              AND t.key >= 'token/'::BYTEA AND t.key < 'token0'::BYTEA
         WHERE g.tree = 'credits' AND g.key >= 'grant/'::BYTEA AND g.key < 'grant0'::BYTEA;
         INSERT INTO toolhost_credit_balances (credit_id, units, entry)
         SELECT convert_from(substring(key FROM 9), 'UTF8'),
                convert_from(value, 'UTF8')::BIGINT,
                value
         FROM toolhost_kv
         WHERE tree = 'credits' AND key >= 'balance/'::BYTEA AND key < 'balance0'::BYTEA;
         INSERT INTO toolhost_credit_holds (hold_id, credit_id, entry)
         SELECT convert_from(substring(key FROM 6), 'UTF8'),
                convert_from(value, 'UTF8')::JSONB ->> 'creditId',
                value
         FROM toolhost_kv
         WHERE tree = 'credits' AND key >= 'hold/'::BYTEA AND key < 'hold0'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'credits'
           AND ((key >= 'grant/'::BYTEA AND key < 'grant0'::BYTEA)
             OR (key >= 'token/'::BYTEA AND key < 'token0'::BYTEA)
             OR (key >= 'balance/'::BYTEA AND key < 'balance0'::BYTEA)
             OR (key >= 'hold/'::BYTEA AND key < 'hold0'::BYTEA));",
    ),
    (
        16,
        // Builders' debts and payout versions leave the key-value table for their own
        // ([`debts`](super::debts)): each `debt/{builderId}/{receiptId}` (units as decimal
        // text) and each `balance/{builderId}` (the version as decimal text) of the `ledger`
        // tree moves.
        "CREATE TABLE toolhost_debts (
             debt_key TEXT COLLATE \"C\" PRIMARY KEY,
             builder TEXT COLLATE \"C\" NOT NULL,
             units BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_debts_by_builder ON toolhost_debts (builder, debt_key);
         CREATE TABLE toolhost_payout_versions (
             builder TEXT COLLATE \"C\" PRIMARY KEY,
             version BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_debts (debt_key, builder, units, entry)
         SELECT debt_key, split_part(debt_key, '/', 1), convert_from(value, 'UTF8')::BIGINT, value
         FROM (SELECT convert_from(substring(key FROM 6), 'UTF8') AS debt_key, value
               FROM toolhost_kv
               WHERE tree = 'ledger' AND key >= 'debt/'::BYTEA AND key < 'debt0'::BYTEA) AS debts;
         INSERT INTO toolhost_payout_versions (builder, version, entry)
         SELECT convert_from(substring(key FROM 9), 'UTF8'), convert_from(value, 'UTF8')::BIGINT,
                value
         FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'balance/'::BYTEA AND key < 'balance0'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger'
           AND ((key >= 'debt/'::BYTEA AND key < 'debt0'::BYTEA)
             OR (key >= 'balance/'::BYTEA AND key < 'balance0'::BYTEA));",
    ),
    (
        17,
        // On-chain refunds in flight leave the key-value table for their own
        // ([`refund_claims`](super::refund_claims)): each claim the `ledger` tree kept under
        // `refunding/{receiptId}` moves.
        "CREATE TABLE toolhost_refund_claims (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_refund_claims (receipt_id, entry)
         SELECT convert_from(substring(key FROM 11), 'UTF8'), value
         FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'refunding/'::BYTEA AND key < 'refunding0'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'refunding/'::BYTEA AND key < 'refunding0'::BYTEA;",
    ),
    (
        18,
        // Endpoints' revisions leave the key-value table for their own
        // ([`revisions`](super::revisions)): each one the `revisions` tree kept under
        // `{endpointId}/{number:020}` moves, its endpoint and number columns of their own.
        "CREATE TABLE toolhost_revisions (
             revision_key TEXT COLLATE \"C\" PRIMARY KEY,
             endpoint_id TEXT COLLATE \"C\" NOT NULL,
             number BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_revisions_by_endpoint ON toolhost_revisions (endpoint_id, number);
         INSERT INTO toolhost_revisions (revision_key, endpoint_id, number, entry)
         SELECT revision_key, split_part(revision_key, '/', 1),
                split_part(revision_key, '/', 2)::BIGINT, value
         FROM (SELECT convert_from(key, 'UTF8') AS revision_key, value
               FROM toolhost_kv WHERE tree = 'revisions') AS revisions;
         DELETE FROM toolhost_kv WHERE tree = 'revisions';",
    ),
    (
        19,
        // Builders' payout settings leave the key-value table for their own
        // ([`payout_settings`](super::payout_settings)): each one the `ledger` tree kept under
        // `settings/{builderId}` moves, its address and network read from its JSON. After it
        // the `ledger` tree holds nothing on PostgreSQL.
        "CREATE TABLE toolhost_payout_settings (
             builder TEXT COLLATE \"C\" PRIMARY KEY,
             pay_to TEXT NOT NULL,
             network TEXT NOT NULL,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_payout_settings (builder, pay_to, network, entry)
         SELECT builder, COALESCE(settings->>'payTo', ''), COALESCE(settings->>'network', ''), value
         FROM (SELECT convert_from(substring(key FROM 10), 'UTF8') AS builder,
                      convert_from(value, 'UTF8')::JSONB AS settings, value
               FROM toolhost_kv
               WHERE tree = 'ledger' AND key >= 'settings/'::BYTEA AND key < 'settings0'::BYTEA)
              AS saved;
         DELETE FROM toolhost_kv
         WHERE tree = 'ledger' AND key >= 'settings/'::BYTEA AND key < 'settings0'::BYTEA;",
    ),
    (
        20,
        // Endpoints' records leave the key-value table for their own
        // ([`endpoints`](super::endpoints)): each one the `endpoints` tree kept under its slug
        // moves, its id and owning builder read from its JSON (as `JSON`, not `JSONB`: a
        // source may hold text `JSONB` refuses, such as `\u0000`, and only the two fields are
        // read).
        "CREATE TABLE toolhost_endpoints (
             slug TEXT COLLATE \"C\" PRIMARY KEY,
             endpoint_id TEXT COLLATE \"C\" NOT NULL,
             builder TEXT COLLATE \"C\",
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_endpoints (slug, endpoint_id, builder, entry)
         SELECT slug, COALESCE(endpoint->>'id', ''),
                CASE WHEN endpoint->'owner'->>'kind' = 'builder'
                     THEN endpoint->'owner'->>'id' END,
                value
         FROM (SELECT convert_from(key, 'UTF8') AS slug,
                      convert_from(value, 'UTF8')::JSON AS endpoint, value
               FROM toolhost_kv WHERE tree = 'endpoints') AS stored;
         DELETE FROM toolhost_kv WHERE tree = 'endpoints';",
    ),
    (
        21,
        // Builders and their keys leave the key-value table for their own
        // ([`builders`](super::builders)): each record the `builders` tree kept under
        // `builder/{builderId}` and each key entry under `key/{sha256}` moves, a key's builder
        // and whether it is revoked read from its JSON.
        "CREATE TABLE toolhost_builders (
             builder_id TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_builder_keys (
             key_sha256 TEXT COLLATE \"C\" PRIMARY KEY,
             builder_id TEXT COLLATE \"C\" NOT NULL,
             revoked BOOLEAN NOT NULL,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_builders (builder_id, entry)
         SELECT convert_from(substring(key FROM 9), 'UTF8'), value
         FROM toolhost_kv
         WHERE tree = 'builders' AND key >= 'builder/'::BYTEA AND key < 'builder0'::BYTEA;
         INSERT INTO toolhost_builder_keys (key_sha256, builder_id, revoked, entry)
         SELECT key_sha256, COALESCE(key_entry->>'builderId', ''),
                COALESCE(key_entry->>'revokedAt', '') <> '', value
         FROM (SELECT convert_from(substring(key FROM 5), 'UTF8') AS key_sha256,
                      convert_from(value, 'UTF8')::JSON AS key_entry, value
               FROM toolhost_kv
               WHERE tree = 'builders' AND key >= 'key/'::BYTEA AND key < 'key0'::BYTEA) AS keys;
         DELETE FROM toolhost_kv
         WHERE tree = 'builders'
           AND ((key >= 'builder/'::BYTEA AND key < 'builder0'::BYTEA)
             OR (key >= 'key/'::BYTEA AND key < 'key0'::BYTEA));",
    ),
    (
        22,
        // Handlers' kv entries and files leave the key-value table for a table per space
        // ([`handler_data`](super::handler_data)): each row the `handler_kv` and
        // `handler_files` trees kept under `{endpointId}/{key}` moves with its key as it was
        // (bytes: listings keep the bytes' order) and its endpoint id as a column. The id may
        // be null: a transaction's claim of an absent key inserts a row without one, and
        // deletes it again before it commits.
        "CREATE TABLE toolhost_handler_kv (
             entry_key BYTEA PRIMARY KEY,
             endpoint_id TEXT COLLATE \"C\",
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_handler_files (
             entry_key BYTEA PRIMARY KEY,
             endpoint_id TEXT COLLATE \"C\",
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_handler_kv (entry_key, endpoint_id, entry)
         SELECT key, convert_from(substring(key FROM 1
                                            FOR greatest(position('/'::BYTEA IN key) - 1, 0)),
                                  'UTF8'), value
         FROM toolhost_kv WHERE tree = 'handler_kv';
         INSERT INTO toolhost_handler_files (entry_key, endpoint_id, entry)
         SELECT key, convert_from(substring(key FROM 1
                                            FOR greatest(position('/'::BYTEA IN key) - 1, 0)),
                                  'UTF8'), value
         FROM toolhost_kv WHERE tree = 'handler_files';
         DELETE FROM toolhost_kv WHERE tree IN ('handler_kv', 'handler_files');",
    ),
    (
        23,
        // Handlers' usage records leave the key-value table for their own
        // ([`handler_data`](super::handler_data)): each endpoint's record the `meta` tree kept
        // under `usage/{space}/{endpointId}` and each builder's totals under
        // `builder-usage/{space}/{builderId}` move, their counts (and an endpoint's builder)
        // read from their JSON (as `JSON`: only those fields are read). Columns but the key
        // may be null: a transaction's claim of an absent key inserts a row without them.
        "CREATE TABLE toolhost_handler_usage (
             usage_key TEXT COLLATE \"C\" PRIMARY KEY,
             space TEXT COLLATE \"C\",
             endpoint_id TEXT COLLATE \"C\",
             builder TEXT COLLATE \"C\",
             entries BIGINT NOT NULL,
             bytes BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_builder_usage (
             usage_key TEXT COLLATE \"C\" PRIMARY KEY,
             space TEXT COLLATE \"C\",
             builder TEXT COLLATE \"C\",
             entries BIGINT NOT NULL,
             bytes BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_handler_usage
             (usage_key, space, endpoint_id, builder, entries, bytes, entry)
         SELECT usage_key, split_part(usage_key, '/', 1),
                substring(usage_key FROM position('/' IN usage_key) + 1),
                usage->>'builder', COALESCE((usage->>'count')::BIGINT, 0),
                COALESCE((usage->>'bytes')::BIGINT, 0), value
         FROM (SELECT convert_from(substring(key FROM 7), 'UTF8') AS usage_key,
                      convert_from(value, 'UTF8')::JSON AS usage, value
               FROM toolhost_kv
               WHERE tree = 'meta' AND key >= 'usage/'::BYTEA AND key < 'usage0'::BYTEA)
              AS records;
         INSERT INTO toolhost_builder_usage (usage_key, space, builder, entries, bytes, entry)
         SELECT usage_key, split_part(usage_key, '/', 1),
                substring(usage_key FROM position('/' IN usage_key) + 1),
                COALESCE((totals->>'count')::BIGINT, 0),
                COALESCE((totals->>'bytes')::BIGINT, 0), value
         FROM (SELECT convert_from(substring(key FROM 15), 'UTF8') AS usage_key,
                      convert_from(value, 'UTF8')::JSON AS totals, value
               FROM toolhost_kv
               WHERE tree = 'meta'
                 AND key >= 'builder-usage/'::BYTEA AND key < 'builder-usage0'::BYTEA)
              AS totals;
         DELETE FROM toolhost_kv
         WHERE tree = 'meta'
           AND ((key >= 'usage/'::BYTEA AND key < 'usage0'::BYTEA)
             OR (key >= 'builder-usage/'::BYTEA AND key < 'builder-usage0'::BYTEA));",
    ),
    (
        24,
        // Endpoints' secrets leave the key-value table for their own
        // ([`secrets`](super::secrets)): each one the `secrets` tree kept under
        // `{endpointId}/{NAME}` moves, still sealed (the key it was sealed with is kept as
        // it was), its endpoint and name read from its key. Columns but the key may be null:
        // a transaction's claim of an absent key inserts a row without them.
        "CREATE TABLE toolhost_secrets (
             secret_key TEXT COLLATE \"C\" PRIMARY KEY,
             endpoint_id TEXT COLLATE \"C\",
             name TEXT COLLATE \"C\",
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_secrets_by_endpoint ON toolhost_secrets (endpoint_id, name);
         INSERT INTO toolhost_secrets (secret_key, endpoint_id, name, entry)
         SELECT secret_key, split_part(secret_key, '/', 1),
                substring(secret_key FROM position('/' IN secret_key) + 1), value
         FROM (SELECT convert_from(key, 'UTF8') AS secret_key, value
               FROM toolhost_kv WHERE tree = 'secrets') AS sealed;
         DELETE FROM toolhost_kv WHERE tree = 'secrets';",
    ),
    (
        25,
        // Rollout tallies leave the key-value table for their own
        // ([`rollout_tallies`](super::rollout_tallies)): each node's count the `logs` tree kept
        // under `rollout/{endpointId}/{nodeId}` moves, the rollout it names read from its JSON
        // (as `JSON`: only that field is read). After it the `logs` tree holds nothing on
        // PostgreSQL. Columns but the key may be null: a transaction's claim of an absent key
        // inserts a row without them.
        "CREATE TABLE toolhost_rollout_tallies (
             tally_key TEXT COLLATE \"C\" PRIMARY KEY,
             endpoint_id TEXT COLLATE \"C\",
             node_id TEXT COLLATE \"C\",
             rollout TEXT COLLATE \"C\",
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_rollout_tallies_by_endpoint
             ON toolhost_rollout_tallies (endpoint_id, rollout, node_id);
         INSERT INTO toolhost_rollout_tallies (tally_key, endpoint_id, node_id, rollout, entry)
         SELECT tally_key, split_part(tally_key, '/', 1),
                substring(tally_key FROM position('/' IN tally_key) + 1),
                COALESCE(tally->>'rollout', ''), value
         FROM (SELECT convert_from(substring(key FROM 9), 'UTF8') AS tally_key,
                      convert_from(value, 'UTF8')::JSON AS tally, value
               FROM toolhost_kv
               WHERE tree = 'logs' AND key >= 'rollout/'::BYTEA AND key < 'rollout0'::BYTEA)
              AS counted;
         DELETE FROM toolhost_kv
         WHERE tree = 'logs' AND key >= 'rollout/'::BYTEA AND key < 'rollout0'::BYTEA;",
    ),
    (
        26,
        // Free calls' receipts' proofs leave the key-value table for their own
        // ([`receipts`](super::receipts)): each one the `receipt_proofs` tree kept under its
        // receipt's id moves as it is, so a free call's batch writes rows of typed tables only.
        "CREATE TABLE toolhost_receipt_proofs (
             receipt_id TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_receipt_proofs (receipt_id, entry)
         SELECT convert_from(key, 'UTF8'), value FROM toolhost_kv WHERE tree = 'receipt_proofs';
         DELETE FROM toolhost_kv WHERE tree = 'receipt_proofs';",
    ),
    (
        27,
        // The receipt log's own records leave the key-value table for tables of their own
        // ([`receipt_log`](super::receipt_log)): its state (`origin`, `checkpoint`, `backfill`,
        // `waiting`, each under its name) as it is, and each interior node
        // (`hash/<level><index>`, level 1 and up: migration 9 moved level 0's with their
        // leaves) under the same key, its level and index read from the key. After it the
        // `receipt_log` tree holds nothing on PostgreSQL.
        "CREATE TABLE toolhost_log_state (
             name TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_log_nodes (
             node BYTEA PRIMARY KEY,
             level BIGINT NOT NULL,
             node_index BIGINT NOT NULL,
             entry BYTEA NOT NULL
         );
         CREATE INDEX toolhost_log_nodes_by_level ON toolhost_log_nodes (level, node_index);
         INSERT INTO toolhost_log_state (name, entry)
         SELECT convert_from(key, 'UTF8'), value FROM toolhost_kv
         WHERE tree = 'receipt_log'
           AND key IN ('origin'::BYTEA, 'checkpoint'::BYTEA, 'backfill'::BYTEA, 'waiting'::BYTEA);
         INSERT INTO toolhost_log_nodes (node, level, node_index, entry)
         SELECT key, get_byte(key, 5),
                ('x' || encode(substring(key FROM 7), 'hex'))::BIT(64)::BIGINT, value
         FROM toolhost_kv
         WHERE tree = 'receipt_log' AND substring(key FROM 1 FOR 5) = 'hash/'::BYTEA
           AND length(key) = 14 AND get_byte(key, 5) > 0;
         DELETE FROM toolhost_kv
         WHERE tree = 'receipt_log'
           AND (key IN ('origin'::BYTEA, 'checkpoint'::BYTEA, 'backfill'::BYTEA, 'waiting'::BYTEA)
                OR (substring(key FROM 1 FOR 5) = 'hash/'::BYTEA
                    AND length(key) = 14 AND get_byte(key, 5) > 0));",
    ),
    (
        28,
        // Deleted slugs' reservations and the wipes deleted endpoints are owed leave the
        // key-value table for tables of their own ([`endpoints`](super::endpoints)): each
        // `slug-reserved/{slug}` and `wipe-owed/{endpointId}` of the `meta` tree moves as it
        // is. After it the `meta` tree holds only the service's keys and start-up markers.
        "CREATE TABLE toolhost_slug_reservations (
             slug TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         CREATE TABLE toolhost_owed_wipes (
             endpoint_id TEXT COLLATE \"C\" PRIMARY KEY,
             entry BYTEA NOT NULL
         );
         INSERT INTO toolhost_slug_reservations (slug, entry)
         SELECT convert_from(substring(key FROM 15), 'UTF8'), value FROM toolhost_kv
         WHERE tree = 'meta' AND key >= 'slug-reserved/'::BYTEA AND key < 'slug-reserved0'::BYTEA;
         INSERT INTO toolhost_owed_wipes (endpoint_id, entry)
         SELECT convert_from(substring(key FROM 11), 'UTF8'), value FROM toolhost_kv
         WHERE tree = 'meta' AND key >= 'wipe-owed/'::BYTEA AND key < 'wipe-owed0'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'meta'
           AND ((key >= 'slug-reserved/'::BYTEA AND key < 'slug-reserved0'::BYTEA)
                OR (key >= 'wipe-owed/'::BYTEA AND key < 'wipe-owed0'::BYTEA));",
    ),
];

const CREATE_MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS toolhost_migrations (
     version INT PRIMARY KEY,
     applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
 )";

/// Creates the migrations table and applies every migration not yet recorded there. Nodes
/// starting together race harmlessly: each migration's DDL and its record commit together, and
/// a node that loses (duplicate table, duplicate record or serialization failure) rolls back,
/// looks again and finds it applied.
pub(super) async fn migrate(pool: &Pool) -> StoreResult<()> {
    let mut client = pool.get().await.map_err(pool_error)?;
    retry_ddl(|| client.batch_execute(CREATE_MIGRATIONS_TABLE)).await?;
    for &(version, sql) in MIGRATIONS {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match apply_migration(&mut client, version, sql).await {
                Ok(()) => break,
                Err(e) if is_ddl_race(&e) && attempt < MAX_ATTEMPTS => {
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(e) => {
                    return Err(match read_error(e) {
                        StoreError::Engine(why) => {
                            StoreError::Engine(format!("migration {version}: {why}"))
                        }
                        other => other,
                    })
                }
            }
        }
    }
    let newest: Option<i32> = client
        .query_one("SELECT max(version) FROM toolhost_migrations", &[])
        .await
        .map_err(read_error)
        .and_then(|row| column(&row, 0))?;
    let known = MIGRATIONS.last().map(|m| m.0).unwrap_or(0);
    if newest.is_some_and(|v| v > known) {
        tracing::warn!(
            schema = newest,
            known,
            "the database schema is newer than this build knows; an older node is running \
             against a migrated database"
        );
    }
    Ok(())
}

async fn apply_migration(
    client: &mut deadpool_postgres::Client,
    version: i32,
    sql: &str,
) -> Result<(), tokio_postgres::Error> {
    let tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::Serializable)
        .start()
        .await?;
    let applied = tx
        .query_opt(
            "SELECT 1 FROM toolhost_migrations WHERE version = $1",
            &[&version],
        )
        .await?
        .is_some();
    if applied {
        return tx.commit().await;
    }
    // A migration moves whole trees once: the planner's own choice (a sequential scan is
    // often the best), not the index-only plans the connection keeps for the call path.
    tx.batch_execute("SET LOCAL enable_seqscan = on").await?;
    tx.batch_execute(sql).await?;
    tx.execute(
        "INSERT INTO toolhost_migrations (version) VALUES ($1)",
        &[&version],
    )
    .await?;
    tx.commit().await?;
    tracing::info!(version, "applied store migration");
    Ok(())
}

/// Concurrent DDL by another node: duplicate table/object/column/key or a serialization
/// failure.
fn is_ddl_race(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        // 42701: a column another node's same migration added first (migration 10).
        matches!(
            c.code(),
            "23505" | "42P07" | "42710" | "42701" | "40001" | "40P01"
        )
    })
}

async fn retry_ddl<F, Fut>(mut run: F) -> StoreResult<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), tokio_postgres::Error>>,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        match run().await {
            Ok(()) => return Ok(()),
            Err(e) if is_ddl_race(&e) && attempt < MAX_ATTEMPTS => {
                tokio::time::sleep(backoff(attempt)).await;
            }
            Err(e) => return Err(read_error(e)),
        }
    }
}
