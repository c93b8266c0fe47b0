//! The tables of typed records (sales, receipts, payout packets, paid-out marks, pending
//! settlements, nonces, payment identifiers, refunds, builders' debts and payout versions,
//! developer credits, the receipt log's pending entries and leaves, endpoints' records and
//! revisions, builders' payout settings, builders and their keys, handlers' kv entries and files
//! and their usage records, endpoints' secrets, rollout tallies, free receipts' proofs, the
//! receipt log's interior nodes and state, deleted slugs' reservations, wipes owed) as a
//! transaction holds and writes them: each declared once ([`Shape`]: its key, its columns, its
//! entry), and the four statements every such table needs made from that declaration, so a
//! record kind is added by declaring its table and the columns of its row, not by writing its
//! SQL again.
//!
//! Rows go to the database column by column (`unnest` of one array per column), so a
//! transaction claims or puts any number of a table's rows in one statement.

use std::borrow::Cow;
use std::sync::LazyLock;

use tokio_postgres::types::ToSql;

use crate::{
    BuilderKeyRow, BuilderUsageRow, CreditHoldRow, CreditRow, DebtRow, EndpointRow,
    HandlerEntryRow, HandlerUsageRow, LeafRow, NonceRow, PacketRow, PaidOutRow, PaymentIdRow,
    PayoutSettingsRow, ReceiptRow, RefundRow, RevisionRow, RolloutTallyRow, SaleRow, SecretRow,
};

/// A table of typed records, keyed by an id (text, a number for the log's leaves, bytes for
/// handlers' entries and the log's interior nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Table {
    /// `toolhost_sales`, migration 5.
    Sales,
    /// `toolhost_receipts`, migration 6.
    Receipts,
    /// `toolhost_packets`, migration 7.
    Packets,
    /// `toolhost_nonces`, migration 8.
    Nonces,
    /// `toolhost_log_pending`, migration 9.
    LogPending,
    /// `toolhost_log_leaves`, migration 9.
    LogLeaves,
    /// `toolhost_payment_ids`, migration 11.
    PaymentIds,
    /// `toolhost_refunds`, migration 12.
    Refunds,
    /// `toolhost_paid_out`, migration 13.
    PaidOut,
    /// `toolhost_pending_settlements`, migration 14.
    PendingSettlements,
    /// `toolhost_refund_claims`, migration 17.
    RefundClaims,
    /// `toolhost_debts`, migration 16.
    Debts,
    /// `toolhost_payout_versions`, migration 16.
    PayoutVersions,
    /// `toolhost_credits`, migration 15.
    Credits,
    /// `toolhost_credit_balances`, migration 15.
    CreditBalances,
    /// `toolhost_credit_holds`, migration 15.
    CreditHolds,
    /// `toolhost_revisions`, migration 18.
    Revisions,
    /// `toolhost_payout_settings`, migration 19.
    PayoutSettings,
    /// `toolhost_endpoints`, migration 20.
    Endpoints,
    /// `toolhost_builders`, migration 21.
    Builders,
    /// `toolhost_builder_keys`, migration 21.
    BuilderKeys,
    /// `toolhost_handler_kv`, migration 22.
    HandlerKv,
    /// `toolhost_handler_files`, migration 22.
    HandlerFiles,
    /// `toolhost_handler_usage`, migration 23.
    HandlerUsage,
    /// `toolhost_builder_usage`, migration 23.
    BuilderUsage,
    /// `toolhost_secrets`, migration 24.
    Secrets,
    /// `toolhost_rollout_tallies`, migration 25.
    RolloutTallies,
    /// `toolhost_receipt_proofs`, migration 26.
    ReceiptProofs,
    /// `toolhost_log_nodes`, migration 27.
    LogNodes,
    /// `toolhost_log_state`, migration 27.
    LogState,
    /// `toolhost_slug_reservations`, migration 28.
    SlugReservations,
    /// `toolhost_owed_wipes`, migration 28.
    OwedWipes,
}

/// A column's type: how a batch's values are sent for it.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    BigInt,
    Bool,
    Bytes,
}

impl Kind {
    fn array(self) -> &'static str {
        match self {
            Kind::Text => "TEXT[]",
            Kind::BigInt => "BIGINT[]",
            Kind::Bool => "BOOLEAN[]",
            Kind::Bytes => "BYTEA[]",
        }
    }
}

/// A table's layout: its key (text, a number: the key's bytes are then its big-endian value,
/// or bytes as they are), its columns in their order, then `entry` (the record as the domain
/// reads it back).
struct Shape {
    name: &'static str,
    key: (&'static str, Kind),
    columns: &'static [(&'static str, Kind)],
}

const SALES: Shape = Shape {
    name: "toolhost_sales",
    key: ("receipt_id", Kind::Text),
    columns: &[
        ("seller", Kind::Text),
        ("endpoint", Kind::Text),
        ("at_ms", Kind::BigInt),
        ("amount", Kind::BigInt),
        ("collection", Kind::Text),
        ("method", Kind::Text),
    ],
};

const RECEIPTS: Shape = Shape {
    name: "toolhost_receipts",
    key: ("receipt_id", Kind::Text),
    columns: &[
        ("endpoint", Kind::Text),
        ("payer", Kind::Text),
        ("free", Kind::Bool),
        ("issued_at_ms", Kind::BigInt),
    ],
};

const PACKETS: Shape = Shape {
    name: "toolhost_packets",
    key: ("packet_id", Kind::Text),
    columns: &[("builder", Kind::Text), ("status", Kind::Text)],
};

const NONCES: Shape = Shape {
    name: "toolhost_nonces",
    key: ("nonce_key", Kind::Text),
    columns: &[("state", Kind::Text)],
};

const RECEIPT_PROOFS: Shape = Shape {
    name: "toolhost_receipt_proofs",
    key: ("receipt_id", Kind::Text),
    columns: &[],
};

const LOG_PENDING: Shape = Shape {
    name: "toolhost_log_pending",
    key: ("name", Kind::Text),
    columns: &[],
};

/// Keyed by where a key-value engine keeps a node (`hash/<level><index>`: one key for the
/// pair), the level and the index its columns.
const LOG_NODES: Shape = Shape {
    name: "toolhost_log_nodes",
    key: ("node", Kind::Bytes),
    columns: &[("level", Kind::BigInt), ("node_index", Kind::BigInt)],
};

const SLUG_RESERVATIONS: Shape = Shape {
    name: "toolhost_slug_reservations",
    key: ("slug", Kind::Text),
    columns: &[],
};

const OWED_WIPES: Shape = Shape {
    name: "toolhost_owed_wipes",
    key: ("endpoint_id", Kind::Text),
    columns: &[],
};

const LOG_STATE: Shape = Shape {
    name: "toolhost_log_state",
    key: ("name", Kind::Text),
    columns: &[],
};

const LOG_LEAVES: Shape = Shape {
    name: "toolhost_log_leaves",
    key: ("leaf", Kind::BigInt),
    columns: &[("name", Kind::Text), ("hash", Kind::Bytes)],
};

const PAYMENT_IDS: Shape = Shape {
    name: "toolhost_payment_ids",
    key: ("payment_key", Kind::Text),
    columns: &[
        ("payer", Kind::Text),
        ("answered", Kind::Bool),
        ("created_at_ms", Kind::BigInt),
    ],
};

const REFUNDS: Shape = Shape {
    name: "toolhost_refunds",
    key: ("receipt_id", Kind::Text),
    columns: &[("seller", Kind::Text), ("amount", Kind::BigInt)],
};

/// The entry is the packet id's bytes, as the key-value shape keeps it; the column is the same
/// id as text, which SQL joins by.
const PAID_OUT: Shape = Shape {
    name: "toolhost_paid_out",
    key: ("receipt_id", Kind::Text),
    columns: &[("packet_id", Kind::Text)],
};

const PENDING_SETTLEMENTS: Shape = Shape {
    name: "toolhost_pending_settlements",
    key: ("receipt_id", Kind::Text),
    columns: &[],
};

const REFUND_CLAIMS: Shape = Shape {
    name: "toolhost_refund_claims",
    key: ("receipt_id", Kind::Text),
    columns: &[],
};

/// The entry is the units as decimal text, as the key-value shape keeps them.
const DEBTS: Shape = Shape {
    name: "toolhost_debts",
    key: ("debt_key", Kind::Text),
    columns: &[("builder", Kind::Text), ("units", Kind::BigInt)],
};

/// The entry is the version as decimal text, as the key-value shape keeps it.
const PAYOUT_VERSIONS: Shape = Shape {
    name: "toolhost_payout_versions",
    key: ("builder", Kind::Text),
    columns: &[("version", Kind::BigInt)],
};

const CREDITS: Shape = Shape {
    name: "toolhost_credits",
    key: ("credit_id", Kind::Text),
    columns: &[("token_sha256", Kind::Text)],
};

/// The entry is the units as decimal text, as the key-value shape keeps them; the column is
/// the same number, which SQL can add up.
const CREDIT_BALANCES: Shape = Shape {
    name: "toolhost_credit_balances",
    key: ("credit_id", Kind::Text),
    columns: &[("units", Kind::BigInt)],
};

const REVISIONS: Shape = Shape {
    name: "toolhost_revisions",
    key: ("revision_key", Kind::Text),
    columns: &[("endpoint_id", Kind::Text), ("number", Kind::BigInt)],
};

const PAYOUT_SETTINGS: Shape = Shape {
    name: "toolhost_payout_settings",
    key: ("builder", Kind::Text),
    columns: &[("pay_to", Kind::Text), ("network", Kind::Text)],
};

const ENDPOINTS: Shape = Shape {
    name: "toolhost_endpoints",
    key: ("slug", Kind::Text),
    columns: &[("endpoint_id", Kind::Text), ("builder", Kind::Text)],
};

const BUILDERS: Shape = Shape {
    name: "toolhost_builders",
    key: ("builder_id", Kind::Text),
    columns: &[],
};

const BUILDER_KEYS: Shape = Shape {
    name: "toolhost_builder_keys",
    key: ("key_sha256", Kind::Text),
    columns: &[("builder_id", Kind::Text), ("revoked", Kind::Bool)],
};

/// Keyed by `{endpointId}/{key}` as bytes: a listing's order and range are the bytes', as on
/// every engine, whatever the database's collation.
const HANDLER_KV: Shape = Shape {
    name: "toolhost_handler_kv",
    key: ("entry_key", Kind::Bytes),
    columns: &[("endpoint_id", Kind::Text)],
};

const HANDLER_FILES: Shape = Shape {
    name: "toolhost_handler_files",
    key: ("entry_key", Kind::Bytes),
    columns: &[("endpoint_id", Kind::Text)],
};

const HANDLER_USAGE: Shape = Shape {
    name: "toolhost_handler_usage",
    key: ("usage_key", Kind::Text),
    columns: &[
        ("space", Kind::Text),
        ("endpoint_id", Kind::Text),
        ("builder", Kind::Text),
        ("entries", Kind::BigInt),
        ("bytes", Kind::BigInt),
    ],
};

const BUILDER_USAGE: Shape = Shape {
    name: "toolhost_builder_usage",
    key: ("usage_key", Kind::Text),
    columns: &[
        ("space", Kind::Text),
        ("builder", Kind::Text),
        ("entries", Kind::BigInt),
        ("bytes", Kind::BigInt),
    ],
};

const SECRETS: Shape = Shape {
    name: "toolhost_secrets",
    key: ("secret_key", Kind::Text),
    columns: &[("endpoint_id", Kind::Text), ("name", Kind::Text)],
};

const ROLLOUT_TALLIES: Shape = Shape {
    name: "toolhost_rollout_tallies",
    key: ("tally_key", Kind::Text),
    columns: &[
        ("endpoint_id", Kind::Text),
        ("node_id", Kind::Text),
        ("rollout", Kind::Text),
    ],
};

const CREDIT_HOLDS: Shape = Shape {
    name: "toolhost_credit_holds",
    key: ("hold_id", Kind::Text),
    columns: &[("credit_id", Kind::Text)],
};

/// The statements of one table, each taking keys (or rows, column by column) as arrays.
pub(super) struct Statements {
    /// Reads the present rows of the keys `FOR UPDATE`, in key order: key, entry.
    pub(super) lock: String,
    /// Inserts the rows whose keys are absent; returns their keys.
    pub(super) claim: String,
    /// Inserts or replaces the rows.
    pub(super) put: String,
    /// Deletes the keys' rows; returns the keys that were there.
    pub(super) delete: String,
}

impl Shape {
    fn statements(&self) -> Statements {
        let Shape { name, .. } = self;
        let (key, key_kind) = self.key;
        let keys = key_kind.array();
        let values: Vec<&str> = (self.columns.iter().map(|(column, _)| *column))
            .chain(["entry"])
            .collect();
        let arrays: Vec<String> = std::iter::once(keys)
            .chain(self.columns.iter().map(|(_, kind)| kind.array()))
            .chain(["BYTEA[]"])
            .enumerate()
            .map(|(i, array)| format!("${}::{array}", i + 1))
            .collect();
        let insert = format!(
            "INSERT INTO {name} ({key}, {}) SELECT * FROM unnest({})",
            values.join(", "),
            arrays.join(", ")
        );
        let updates: Vec<String> = (values.iter())
            .map(|column| format!("{column} = excluded.{column}"))
            .collect();
        Statements {
            lock: format!(
                "SELECT {key}, entry FROM {name} WHERE {key} = ANY($1::{keys}) \
                 ORDER BY {key} FOR UPDATE"
            ),
            claim: format!("{insert} ON CONFLICT ({key}) DO NOTHING RETURNING {key}"),
            put: format!(
                "{insert} ON CONFLICT ({key}) DO UPDATE SET {}",
                updates.join(", ")
            ),
            delete: format!("DELETE FROM {name} WHERE {key} = ANY($1::{keys}) RETURNING {key}"),
        }
    }
}

impl Table {
    /// Every table, in the order of the variants.
    pub(super) const ALL: [Table; 32] = [
        Table::Sales,
        Table::Receipts,
        Table::Packets,
        Table::Nonces,
        Table::LogPending,
        Table::LogLeaves,
        Table::PaymentIds,
        Table::Refunds,
        Table::PaidOut,
        Table::PendingSettlements,
        Table::RefundClaims,
        Table::Debts,
        Table::PayoutVersions,
        Table::Credits,
        Table::CreditBalances,
        Table::CreditHolds,
        Table::Revisions,
        Table::PayoutSettings,
        Table::Endpoints,
        Table::Builders,
        Table::BuilderKeys,
        Table::HandlerKv,
        Table::HandlerFiles,
        Table::HandlerUsage,
        Table::BuilderUsage,
        Table::Secrets,
        Table::RolloutTallies,
        Table::ReceiptProofs,
        Table::LogNodes,
        Table::LogState,
        Table::SlugReservations,
        Table::OwedWipes,
    ];

    fn shape(self) -> &'static Shape {
        match self {
            Table::Sales => &SALES,
            Table::Receipts => &RECEIPTS,
            Table::Packets => &PACKETS,
            Table::Nonces => &NONCES,
            Table::LogPending => &LOG_PENDING,
            Table::LogLeaves => &LOG_LEAVES,
            Table::PaymentIds => &PAYMENT_IDS,
            Table::Refunds => &REFUNDS,
            Table::PaidOut => &PAID_OUT,
            Table::PendingSettlements => &PENDING_SETTLEMENTS,
            Table::RefundClaims => &REFUND_CLAIMS,
            Table::Debts => &DEBTS,
            Table::PayoutVersions => &PAYOUT_VERSIONS,
            Table::Credits => &CREDITS,
            Table::CreditBalances => &CREDIT_BALANCES,
            Table::CreditHolds => &CREDIT_HOLDS,
            Table::Revisions => &REVISIONS,
            Table::PayoutSettings => &PAYOUT_SETTINGS,
            Table::Endpoints => &ENDPOINTS,
            Table::Builders => &BUILDERS,
            Table::BuilderKeys => &BUILDER_KEYS,
            Table::HandlerKv => &HANDLER_KV,
            Table::HandlerFiles => &HANDLER_FILES,
            Table::HandlerUsage => &HANDLER_USAGE,
            Table::BuilderUsage => &BUILDER_USAGE,
            Table::Secrets => &SECRETS,
            Table::RolloutTallies => &ROLLOUT_TALLIES,
            Table::ReceiptProofs => &RECEIPT_PROOFS,
            Table::LogNodes => &LOG_NODES,
            Table::LogState => &LOG_STATE,
            Table::SlugReservations => &SLUG_RESERVATIONS,
            Table::OwedWipes => &OWED_WIPES,
        }
    }

    /// Its name: the order transactions lock tables in.
    pub(super) fn name(self) -> &'static str {
        self.shape().name
    }

    pub(super) fn statements(self) -> &'static Statements {
        static SALES_SQL: LazyLock<Statements> = LazyLock::new(|| SALES.statements());
        static RECEIPTS_SQL: LazyLock<Statements> = LazyLock::new(|| RECEIPTS.statements());
        static PACKETS_SQL: LazyLock<Statements> = LazyLock::new(|| PACKETS.statements());
        static NONCES_SQL: LazyLock<Statements> = LazyLock::new(|| NONCES.statements());
        static LOG_PENDING_SQL: LazyLock<Statements> = LazyLock::new(|| LOG_PENDING.statements());
        static LOG_LEAVES_SQL: LazyLock<Statements> = LazyLock::new(|| LOG_LEAVES.statements());
        static PAYMENT_IDS_SQL: LazyLock<Statements> = LazyLock::new(|| PAYMENT_IDS.statements());
        static REFUNDS_SQL: LazyLock<Statements> = LazyLock::new(|| REFUNDS.statements());
        static PAID_OUT_SQL: LazyLock<Statements> = LazyLock::new(|| PAID_OUT.statements());
        static PENDING_SETTLEMENTS_SQL: LazyLock<Statements> =
            LazyLock::new(|| PENDING_SETTLEMENTS.statements());
        static REFUND_CLAIMS_SQL: LazyLock<Statements> =
            LazyLock::new(|| REFUND_CLAIMS.statements());
        static DEBTS_SQL: LazyLock<Statements> = LazyLock::new(|| DEBTS.statements());
        static PAYOUT_VERSIONS_SQL: LazyLock<Statements> =
            LazyLock::new(|| PAYOUT_VERSIONS.statements());
        static CREDITS_SQL: LazyLock<Statements> = LazyLock::new(|| CREDITS.statements());
        static CREDIT_BALANCES_SQL: LazyLock<Statements> =
            LazyLock::new(|| CREDIT_BALANCES.statements());
        static CREDIT_HOLDS_SQL: LazyLock<Statements> = LazyLock::new(|| CREDIT_HOLDS.statements());
        static REVISIONS_SQL: LazyLock<Statements> = LazyLock::new(|| REVISIONS.statements());
        static PAYOUT_SETTINGS_SQL: LazyLock<Statements> =
            LazyLock::new(|| PAYOUT_SETTINGS.statements());
        static ENDPOINTS_SQL: LazyLock<Statements> = LazyLock::new(|| ENDPOINTS.statements());
        static BUILDERS_SQL: LazyLock<Statements> = LazyLock::new(|| BUILDERS.statements());
        static BUILDER_KEYS_SQL: LazyLock<Statements> = LazyLock::new(|| BUILDER_KEYS.statements());
        static HANDLER_KV_SQL: LazyLock<Statements> = LazyLock::new(|| HANDLER_KV.statements());
        static HANDLER_FILES_SQL: LazyLock<Statements> =
            LazyLock::new(|| HANDLER_FILES.statements());
        static HANDLER_USAGE_SQL: LazyLock<Statements> =
            LazyLock::new(|| HANDLER_USAGE.statements());
        static BUILDER_USAGE_SQL: LazyLock<Statements> =
            LazyLock::new(|| BUILDER_USAGE.statements());
        static SECRETS_SQL: LazyLock<Statements> = LazyLock::new(|| SECRETS.statements());
        static ROLLOUT_TALLIES_SQL: LazyLock<Statements> =
            LazyLock::new(|| ROLLOUT_TALLIES.statements());
        static RECEIPT_PROOFS_SQL: LazyLock<Statements> =
            LazyLock::new(|| RECEIPT_PROOFS.statements());
        static LOG_NODES_SQL: LazyLock<Statements> = LazyLock::new(|| LOG_NODES.statements());
        static LOG_STATE_SQL: LazyLock<Statements> = LazyLock::new(|| LOG_STATE.statements());
        static SLUG_RESERVATIONS_SQL: LazyLock<Statements> =
            LazyLock::new(|| SLUG_RESERVATIONS.statements());
        static OWED_WIPES_SQL: LazyLock<Statements> = LazyLock::new(|| OWED_WIPES.statements());
        match self {
            Table::Sales => &SALES_SQL,
            Table::Receipts => &RECEIPTS_SQL,
            Table::Packets => &PACKETS_SQL,
            Table::Nonces => &NONCES_SQL,
            Table::LogPending => &LOG_PENDING_SQL,
            Table::LogLeaves => &LOG_LEAVES_SQL,
            Table::PaymentIds => &PAYMENT_IDS_SQL,
            Table::Refunds => &REFUNDS_SQL,
            Table::PaidOut => &PAID_OUT_SQL,
            Table::PendingSettlements => &PENDING_SETTLEMENTS_SQL,
            Table::RefundClaims => &REFUND_CLAIMS_SQL,
            Table::Debts => &DEBTS_SQL,
            Table::PayoutVersions => &PAYOUT_VERSIONS_SQL,
            Table::Credits => &CREDITS_SQL,
            Table::CreditBalances => &CREDIT_BALANCES_SQL,
            Table::CreditHolds => &CREDIT_HOLDS_SQL,
            Table::Revisions => &REVISIONS_SQL,
            Table::PayoutSettings => &PAYOUT_SETTINGS_SQL,
            Table::Endpoints => &ENDPOINTS_SQL,
            Table::Builders => &BUILDERS_SQL,
            Table::BuilderKeys => &BUILDER_KEYS_SQL,
            Table::HandlerKv => &HANDLER_KV_SQL,
            Table::HandlerFiles => &HANDLER_FILES_SQL,
            Table::HandlerUsage => &HANDLER_USAGE_SQL,
            Table::BuilderUsage => &BUILDER_USAGE_SQL,
            Table::Secrets => &SECRETS_SQL,
            Table::RolloutTallies => &ROLLOUT_TALLIES_SQL,
            Table::ReceiptProofs => &RECEIPT_PROOFS_SQL,
            Table::LogNodes => &LOG_NODES_SQL,
            Table::LogState => &LOG_STATE_SQL,
            Table::SlugReservations => &SLUG_RESERVATIONS_SQL,
            Table::OwedWipes => &OWED_WIPES_SQL,
        }
    }

    /// The keys of its rows as the parameter its statements take (text, numbers or bytes).
    pub(super) fn keys<'b>(self, keys: impl IntoIterator<Item = &'b [u8]>) -> Keys<'b> {
        let mut column = Keys::new(self);
        keys.into_iter().for_each(|key| column.push(key));
        column
    }

    /// The key of a row one of its statements returned first, as a batch names it.
    pub(super) fn key_of(
        self,
        row: &tokio_postgres::Row,
    ) -> Result<Vec<u8>, tokio_postgres::Error> {
        match self.shape().key.1 {
            Kind::BigInt => Ok(row.try_get::<_, i64>(0)?.to_be_bytes().to_vec()),
            Kind::Bytes => row.try_get::<_, Vec<u8>>(0),
            Kind::Text | Kind::Bool => Ok(row.try_get::<_, String>(0)?.into_bytes()),
        }
    }
}

/// A table's keys, for a statement: text ids, numbers (a key's bytes are its big-endian
/// value; the log's leaf indexes), or bytes as they are (handlers' entries).
pub(super) enum Keys<'b> {
    Text(Vec<Cow<'b, str>>),
    BigInt(Vec<i64>),
    Bytes(Vec<&'b [u8]>),
}

impl<'b> Keys<'b> {
    fn new(table: Table) -> Self {
        match table.shape().key.1 {
            Kind::BigInt => Keys::BigInt(Vec::new()),
            Kind::Bytes => Keys::Bytes(Vec::new()),
            Kind::Text | Kind::Bool => Keys::Text(Vec::new()),
        }
    }

    fn push(&mut self, key: &'b [u8]) {
        match self {
            Keys::Text(keys) => keys.push(String::from_utf8_lossy(key)),
            // A numeric key is only ever the 8 bytes `write_parts` makes of a leaf's index
            // (nothing is conditioned on or deleted from a numeric table by other keys).
            Keys::BigInt(keys) => {
                let bytes = <[u8; 8]>::try_from(key).unwrap_or_default();
                keys.push(i64::from_be_bytes(bytes));
            }
            Keys::Bytes(keys) => keys.push(key),
        }
    }

    pub(super) fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Keys::Text(keys) => keys,
            Keys::BigInt(keys) => keys,
            Keys::Bytes(keys) => keys,
        }
    }
}

/// A typed record a batch puts.
#[derive(Clone, Copy)]
pub(super) enum Row<'b> {
    Sale(&'b SaleRow),
    Receipt(&'b ReceiptRow),
    Packet(&'b PacketRow),
    Nonce(&'b NonceRow),
    /// A record that is its entry alone, its id the key (a receipt log entry pending, a
    /// pending settlement, a refund claim, a builder, a free receipt's proof, the log's state,
    /// a slug's reservation, a wipe owed).
    Entry(&'b [u8]),
    LogLeaf(&'b LeafRow),
    /// An interior node of the receipt log's tree: its level, its index, its hash.
    LogNode(u8, u64, &'b [u8; 32]),
    PaymentId(&'b PaymentIdRow),
    Refund(&'b RefundRow),
    PaidOut(&'b PaidOutRow),
    Debt(&'b DebtRow),
    /// A number kept as decimal text too (the entry): a payout version, a credit's balance.
    Number(i64, &'b [u8]),
    Credit(&'b CreditRow),
    CreditHold(&'b CreditHoldRow),
    Revision(&'b RevisionRow),
    PayoutSettings(&'b PayoutSettingsRow),
    Endpoint(&'b EndpointRow),
    BuilderKey(&'b BuilderKeyRow),
    HandlerEntry(&'b HandlerEntryRow),
    HandlerUsage(&'b HandlerUsageRow),
    BuilderUsage(&'b BuilderUsageRow),
    Secret(&'b SecretRow),
    RolloutTally(&'b RolloutTallyRow),
}

/// One value of a column.
enum Value<'b> {
    Text(Option<&'b str>),
    BigInt(i64),
    Bool(bool),
    Bytes(&'b [u8]),
}

impl<'b> Row<'b> {
    /// Its values, in its table's column order (after the key, before the entry).
    fn values(self) -> Vec<Value<'b>> {
        match self {
            Row::Sale(sale) => vec![
                Value::Text(sale.seller.as_deref()),
                Value::Text(sale.endpoint.as_deref()),
                Value::BigInt(sale.at_ms),
                Value::BigInt(sale.amount),
                Value::Text(sale.collection.as_deref()),
                Value::Text(Some(&sale.method)),
            ],
            Row::Receipt(receipt) => vec![
                Value::Text(receipt.endpoint.as_deref()),
                Value::Text(receipt.payer.as_deref()),
                Value::Bool(receipt.free),
                Value::BigInt(receipt.issued_at_ms),
            ],
            Row::Packet(packet) => vec![
                Value::Text(Some(&packet.builder)),
                Value::Text(Some(&packet.status)),
            ],
            Row::Nonce(nonce) => vec![Value::Text(Some(nonce.state.name()))],
            Row::Entry(_) => Vec::new(),
            Row::LogLeaf(leaf) => vec![Value::Text(Some(&leaf.name)), Value::Bytes(&leaf.hash)],
            // An index past i64 is past any tree a log can hold.
            Row::LogNode(level, index, _) => vec![
                Value::BigInt(i64::from(level)),
                Value::BigInt(i64::try_from(index).unwrap_or(i64::MAX)),
            ],
            Row::PaymentId(payment_id) => vec![
                Value::Text(Some(payment_id.payer())),
                Value::Bool(payment_id.answered),
                Value::BigInt(payment_id.created_at_ms),
            ],
            Row::Refund(refund) => vec![
                Value::Text(refund.seller.as_deref()),
                Value::BigInt(refund.amount),
            ],
            Row::PaidOut(mark) => vec![Value::Text(Some(&mark.packet_id))],
            Row::Debt(debt) => vec![Value::Text(Some(debt.builder())), Value::BigInt(debt.units)],
            Row::Number(number, _) => vec![Value::BigInt(number)],
            Row::Credit(credit) => vec![Value::Text(Some(&credit.token_sha256))],
            Row::CreditHold(hold) => vec![Value::Text(Some(&hold.credit_id))],
            Row::Revision(revision) => vec![
                Value::Text(Some(&revision.endpoint_id)),
                Value::BigInt(revision.number),
            ],
            Row::PayoutSettings(settings) => vec![
                Value::Text(Some(&settings.pay_to)),
                Value::Text(Some(&settings.network)),
            ],
            Row::Endpoint(endpoint) => vec![
                Value::Text(Some(&endpoint.endpoint_id)),
                Value::Text(endpoint.builder.as_deref()),
            ],
            Row::BuilderKey(key) => {
                vec![Value::Text(Some(&key.builder_id)), Value::Bool(key.revoked)]
            }
            Row::HandlerEntry(entry) => vec![Value::Text(Some(&entry.endpoint_id))],
            Row::HandlerUsage(usage) => vec![
                Value::Text(Some(usage.space.name())),
                Value::Text(Some(&usage.endpoint_id)),
                Value::Text(usage.builder.as_deref()),
                Value::BigInt(usage.count),
                Value::BigInt(usage.bytes),
            ],
            Row::BuilderUsage(totals) => vec![
                Value::Text(Some(totals.space.name())),
                Value::Text(Some(&totals.builder)),
                Value::BigInt(totals.count),
                Value::BigInt(totals.bytes),
            ],
            Row::Secret(secret) => vec![
                Value::Text(Some(&secret.endpoint_id)),
                Value::Text(Some(&secret.name)),
            ],
            Row::RolloutTally(tally) => vec![
                Value::Text(Some(&tally.endpoint_id)),
                Value::Text(Some(&tally.node_id)),
                Value::Text(Some(&tally.rollout)),
            ],
        }
    }

    pub(super) fn entry(self) -> &'b [u8] {
        match self {
            Row::Sale(sale) => &sale.entry,
            Row::Receipt(receipt) => &receipt.entry,
            Row::Packet(packet) => &packet.entry,
            Row::Nonce(nonce) => &nonce.entry,
            Row::Entry(entry) => entry,
            Row::LogLeaf(leaf) => &leaf.entry,
            Row::LogNode(_, _, hash) => hash.as_slice(),
            Row::PaymentId(payment_id) => &payment_id.entry,
            Row::Refund(refund) => &refund.entry,
            Row::PaidOut(mark) => mark.packet_id.as_bytes(),
            Row::Debt(debt) => &debt.entry,
            Row::Number(_, entry) => entry,
            Row::Credit(credit) => &credit.entry,
            Row::CreditHold(hold) => &hold.entry,
            Row::Revision(revision) => &revision.entry,
            Row::PayoutSettings(settings) => &settings.entry,
            Row::Endpoint(endpoint) => &endpoint.entry,
            Row::BuilderKey(key) => &key.entry,
            Row::HandlerEntry(entry) => &entry.entry,
            Row::HandlerUsage(usage) => &usage.entry,
            Row::BuilderUsage(totals) => &totals.entry,
            Row::Secret(secret) => &secret.entry,
            Row::RolloutTally(tally) => &tally.entry,
        }
    }
}

/// One column's values, for `unnest`.
enum Column<'b> {
    Text(Vec<Option<&'b str>>),
    BigInt(Vec<i64>),
    Bool(Vec<bool>),
    Bytes(Vec<&'b [u8]>),
}

impl<'b> Column<'b> {
    fn push(&mut self, value: Value<'b>) {
        match (self, value) {
            (Column::Text(values), Value::Text(value)) => values.push(value),
            (Column::BigInt(values), Value::BigInt(value)) => values.push(value),
            (Column::Bool(values), Value::Bool(value)) => values.push(value),
            (Column::Bytes(values), Value::Bytes(value)) => values.push(value),
            _ => debug_assert!(false, "a row's values follow its table's columns"),
        }
    }

    /// A placeholder's value: what a key claimed without a row holds until it is deleted
    /// again before the commit.
    fn push_placeholder(&mut self) {
        match self {
            Column::Text(values) => values.push(None),
            Column::BigInt(values) => values.push(0),
            Column::Bool(values) => values.push(false),
            Column::Bytes(values) => values.push(&[]),
        }
    }

    fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Column::Text(values) => values,
            Column::BigInt(values) => values,
            Column::Bool(values) => values,
            Column::Bytes(values) => values,
        }
    }
}

/// Rows of one table column by column: the parameters of its claim and put statements.
pub(super) struct Columns<'b> {
    keys: Keys<'b>,
    columns: Vec<Column<'b>>,
    entries: Vec<&'b [u8]>,
}

impl<'b> Columns<'b> {
    pub(super) fn new(table: Table) -> Self {
        let columns = (table.shape().columns.iter())
            .map(|(_, kind)| match kind {
                Kind::Text => Column::Text(Vec::new()),
                Kind::BigInt => Column::BigInt(Vec::new()),
                Kind::Bool => Column::Bool(Vec::new()),
                Kind::Bytes => Column::Bytes(Vec::new()),
            })
            .collect();
        Columns {
            keys: Keys::new(table),
            columns,
            entries: Vec::new(),
        }
    }

    /// Adds the row of `key`: `row`, or a placeholder with an empty entry.
    pub(super) fn push(&mut self, key: &'b [u8], row: Option<Row<'b>>) {
        self.keys.push(key);
        match row {
            Some(row) => {
                for (column, value) in self.columns.iter_mut().zip(row.values()) {
                    column.push(value);
                }
                self.entries.push(row.entry());
            }
            None => {
                self.columns.iter_mut().for_each(Column::push_placeholder);
                self.entries.push(&[]);
            }
        }
    }

    pub(super) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        let keys = self.keys.param();
        let entries: &(dyn ToSql + Sync) = &self.entries;
        std::iter::once(keys)
            .chain(self.columns.iter().map(Column::param))
            .chain([entries])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's values follow its table's columns, kind by kind (a value of another kind would
    /// leave one column's array short, and `unnest` would pad it with nulls); `Table::ALL` is
    /// in the variants' order (statements are found by a table's index in it).
    #[test]
    fn rows_follow_their_tables_columns() {
        let sale = SaleRow {
            receipt_id: "r".into(),
            seller: None,
            endpoint: None,
            at_ms: 0,
            amount: 0,
            collection: None,
            method: "x402".into(),
            entry: Vec::new(),
        };
        let receipt = ReceiptRow {
            receipt_id: "r".into(),
            endpoint: None,
            payer: None,
            free: false,
            issued_at_ms: 0,
            entry: Vec::new(),
        };
        let packet = PacketRow {
            packet_id: "p".into(),
            builder: "b".into(),
            status: "pending".into(),
            entry: Vec::new(),
        };
        let nonce = NonceRow {
            key: "n".into(),
            state: crate::NonceState::Claimed,
            entry: Vec::new(),
        };
        let leaf = LeafRow {
            leaf: 0,
            name: "r".into(),
            hash: [0; 32],
            entry: Vec::new(),
        };
        let payment_id = PaymentIdRow {
            key: "0xpayer/id".into(),
            answered: false,
            created_at_ms: 0,
            entry: Vec::new(),
        };
        let refund = RefundRow {
            receipt_id: "r".into(),
            seller: None,
            amount: 0,
            entry: Vec::new(),
        };
        let mark = PaidOutRow {
            receipt_id: "r".into(),
            packet_id: "p".into(),
        };
        let debt = DebtRow::new("b", "r", 1);
        let credit = CreditRow {
            credit_id: "c".into(),
            token_sha256: "00".into(),
            entry: Vec::new(),
        };
        let hold = CreditHoldRow {
            hold_id: "h".into(),
            credit_id: "c".into(),
            entry: Vec::new(),
        };
        let revision = RevisionRow::new("ep", 1, Vec::new());
        let settings = PayoutSettingsRow {
            builder: "b".into(),
            pay_to: "0x".into(),
            network: "eip155:1".into(),
            entry: Vec::new(),
        };
        let endpoint = EndpointRow {
            slug: "s".into(),
            endpoint_id: "ep".into(),
            builder: None,
            entry: Vec::new(),
        };
        let key = BuilderKeyRow {
            key_sha256: "00".into(),
            builder_id: "b".into(),
            revoked: false,
            entry: Vec::new(),
        };
        let handler_entry = HandlerEntryRow::new(crate::HandlerSpace::Kv, "ep", "k", b"v".to_vec());
        let usage = HandlerUsageRow::new(crate::HandlerSpace::Kv, "ep", None, (1, 1), Vec::new());
        let totals = BuilderUsageRow::new(crate::HandlerSpace::Kv, "b", (1, 1), Vec::new());
        let secret = SecretRow::new("ep", "API_KEY", Vec::new());
        let tally = RolloutTallyRow::new("ep", "node", "r1", Vec::new());
        let rows = [
            (Table::RolloutTallies, Row::RolloutTally(&tally)),
            (Table::Secrets, Row::Secret(&secret)),
            (Table::HandlerUsage, Row::HandlerUsage(&usage)),
            (Table::BuilderUsage, Row::BuilderUsage(&totals)),
            (Table::HandlerKv, Row::HandlerEntry(&handler_entry)),
            (Table::HandlerFiles, Row::HandlerEntry(&handler_entry)),
            (Table::Builders, Row::Entry(b"entry")),
            (Table::BuilderKeys, Row::BuilderKey(&key)),
            (Table::Endpoints, Row::Endpoint(&endpoint)),
            (Table::PayoutSettings, Row::PayoutSettings(&settings)),
            (Table::Revisions, Row::Revision(&revision)),
            (Table::PaidOut, Row::PaidOut(&mark)),
            (Table::PaymentIds, Row::PaymentId(&payment_id)),
            (Table::Refunds, Row::Refund(&refund)),
            (Table::Sales, Row::Sale(&sale)),
            (Table::Receipts, Row::Receipt(&receipt)),
            (Table::Packets, Row::Packet(&packet)),
            (Table::Nonces, Row::Nonce(&nonce)),
            (Table::LogPending, Row::Entry(b"entry")),
            (Table::ReceiptProofs, Row::Entry(b"proof")),
            (Table::LogState, Row::Entry(b"note")),
            (Table::SlugReservations, Row::Entry(b"{}")),
            (Table::OwedWipes, Row::Entry(b"1")),
            (Table::LogNodes, Row::LogNode(1, 2, &[3; 32])),
            (Table::PendingSettlements, Row::Entry(b"entry")),
            (Table::Credits, Row::Credit(&credit)),
            (Table::CreditBalances, Row::Number(0, b"0")),
            (Table::RefundClaims, Row::Entry(b"entry")),
            (Table::Debts, Row::Debt(&debt)),
            (Table::PayoutVersions, Row::Number(1, b"1")),
            (Table::CreditHolds, Row::CreditHold(&hold)),
            (Table::LogLeaves, Row::LogLeaf(&leaf)),
        ];
        for (i, table) in Table::ALL.into_iter().enumerate() {
            assert_eq!(table as usize, i);
            let (_, row) = rows
                .iter()
                .find(|(t, _)| *t == table)
                .expect("a row of each");
            let kinds: Vec<&str> = (row.values().iter())
                .map(|value| match value {
                    Value::Text(_) => Kind::Text.array(),
                    Value::BigInt(_) => Kind::BigInt.array(),
                    Value::Bool(_) => Kind::Bool.array(),
                    Value::Bytes(_) => Kind::Bytes.array(),
                })
                .collect();
            let columns: Vec<&str> = (table.shape().columns.iter())
                .map(|(_, kind)| kind.array())
                .collect();
            assert_eq!(kinds, columns, "{table:?}");
        }
        let statements = Table::Sales.statements();
        assert_eq!(
            statements.claim,
            "INSERT INTO toolhost_sales (receipt_id, seller, endpoint, at_ms, amount, collection, \
             method, entry) SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], \
             $4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::TEXT[], $8::BYTEA[]) \
             ON CONFLICT (receipt_id) DO NOTHING RETURNING receipt_id"
        );
        // A table without columns of its own, and one keyed by numbers.
        assert_eq!(
            Table::LogPending.statements().put,
            "INSERT INTO toolhost_log_pending (name, entry) SELECT * FROM unnest($1::TEXT[], \
             $2::BYTEA[]) ON CONFLICT (name) DO UPDATE SET entry = excluded.entry"
        );
        assert_eq!(
            Table::LogLeaves.statements().lock,
            "SELECT leaf, entry FROM toolhost_log_leaves WHERE leaf = ANY($1::BIGINT[]) \
             ORDER BY leaf FOR UPDATE"
        );
        // One keyed by bytes.
        assert_eq!(
            Table::HandlerKv.statements().delete,
            "DELETE FROM toolhost_handler_kv WHERE entry_key = ANY($1::BYTEA[]) \
             RETURNING entry_key"
        );
    }
}
