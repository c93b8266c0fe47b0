//! One batch, one transaction: how a batch's conditions are held and its writes sent.
//!
//! A batch's conditions are its only reads, so a transaction is correct when each condition
//! still holds at its commit. The transaction makes sure of that with row locks, not with
//! `SERIALIZABLE`'s predicate locks: every concurrent call inserts its time-ordered keys
//! (receipt ids, sale keys) next to the others', and a serializable check of their absence
//! locked the index page they all share, so any two concurrent calls conflicted and one rolled
//! back (2.2-2.8 rollbacks per request, bench/RESULTS.md). So each key a condition names is
//! held, in key order (concurrent batches lock in the same order), before anything is written:
//! - a key that must hold a value is read `FOR UPDATE`: nobody changes it until this commits;
//! - a key that must be absent is *claimed*: inserted with `ON CONFLICT DO NOTHING`, with the
//!   value the batch puts there, or an empty placeholder deleted again before commit when the
//!   batch does not put it. One row inserted means it was absent, and anyone else inserting it
//!   waits for this transaction; none means it is there and the condition fails.
//!
//! Consecutive keys held the same way are held by one statement (claims: one `INSERT ...
//! SELECT FROM unnest(...)` whatever their trees; reads: one `= ANY(...) FOR UPDATE` per tree,
//! which a btree visits in key order), and a batch's puts and each tree's deletes are one
//! statement each, so a transaction costs the database a few statements, not one per key.
//!
//! Typed members (sales, receipts and free receipts' proofs, payout packets, paid-out marks,
//! pending settlements, nonces, payment identifiers, refunds, builders' debts and payout
//! versions, developer credits, the receipt log's pending entries, leaves, interior nodes and
//! state, endpoints' records and revisions, deleted slugs' reservations and owed wipes, builders
//! and their keys and payout settings, handlers' entries and usage, secrets, rollout tallies) are
//! held and written the same way in their records' tables (`tables`), keyed by id: a key is a
//! [`Place`] and the bytes naming a row there (a leaf's: its index, big-endian; a log node's:
//! `hash/<level><index>`, as a key-value engine keys it; a handler entry's: its key's bytes).
//!
//! A failed condition rolls the transaction back. The hot path (a nonce claimed, a receipt
//! written where none may be, a balance swapped) then needs no retries: a claim loses by its
//! row count, a swap waits for the row. Deadlocks (two batches holding keys the other then
//! writes) are retried like conflicts.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::feed::{SQL_BUMP_GENERATION, SQL_NOTIFY, SQL_RECORD_CHANGE};
use super::tables::{Columns, Row, Table};
use super::{classify, column, Phase, TxError};
use crate::{receipt_log, Batch, Condition, HandlerSpace, StoreError, Tree, Write};

const SQL_BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";
/// A transaction whose commit does not wait for its flush
/// ([`Store::apply_unsynced`](crate::Store::apply_unsynced)).
const SQL_BEGIN_UNSYNCED: &str =
    "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL synchronous_commit TO OFF";
/// Holds the present keys of one tree a run of conditions names, in key order (a btree scan
/// of `= ANY` visits the array's keys sorted), until commit (see the module docs).
pub(super) const SQL_LOCK_KEYS: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key = ANY($2::BYTEA[]) ORDER BY key FOR UPDATE";
/// Claims a run of conditions' absent keys, in the arrays' order: each key returned was absent
/// and is now this transaction's; a key not returned is present.
const SQL_CLAIM_KEYS: &str = "INSERT INTO toolhost_kv (tree, key, value) \
     SELECT * FROM unnest($1::TEXT[], $2::BYTEA[], $3::BYTEA[]) \
     ON CONFLICT (tree, key) DO NOTHING RETURNING tree, key";
/// Puts every key a batch writes (and did not put by claiming it), in the arrays' order.
const SQL_PUT_KEYS: &str = "INSERT INTO toolhost_kv (tree, key, value) \
     SELECT * FROM unnest($1::TEXT[], $2::BYTEA[], $3::BYTEA[]) \
     ON CONFLICT (tree, key) DO UPDATE SET value = excluded.value";
/// Deletes keys of one tree; returns those that were there.
const SQL_DELETE_KEYS: &str =
    "DELETE FROM toolhost_kv WHERE tree = $1 AND key = ANY($2::BYTEA[]) RETURNING key";
/// Where a key a batch holds or writes lives: a tree of the key-value table, or a typed
/// record's table (the key: the record's id's bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Place {
    Kv(Tree),
    Table(Table),
}

impl Place {
    /// Places in the order their keys are locked: the key-value table's trees by name, then
    /// the typed records' tables by name (any order does, as long as every transaction takes
    /// the same one).
    fn rank(self) -> (u8, &'static str) {
        (matches!(self, Place::Table(_)) as u8, self.name())
    }

    /// A tree's stored name, or a table's.
    fn name(self) -> &'static str {
        match self {
            Place::Kv(tree) => tree.name(),
            Place::Table(table) => table.name(),
        }
    }

    fn is_watched(self) -> bool {
        self.watched_as().is_some()
    }

    /// The tree whose change feed publishes writes here, if any: a watched tree's own, and the
    /// `endpoints` tree's for endpoints' records (every node reloads an endpoint by its slug,
    /// whichever shape the engine keeps it in).
    fn watched_as(self) -> Option<Tree> {
        match self {
            Place::Kv(tree) => tree.is_watched().then_some(tree),
            Place::Table(Table::Endpoints) => Some(Tree::Endpoints),
            Place::Table(_) => None,
        }
    }
}

/// A condition's place and key, and what it wants there (`None`: nothing).
pub(super) fn condition_parts(condition: &Condition) -> (Place, &[u8], Option<&[u8]>) {
    match condition {
        Condition::Absent { tree, key } => (Place::Kv(*tree), key, None),
        Condition::Equals { tree, key, value } => (Place::Kv(*tree), key, value.as_deref()),
        Condition::Sale { receipt_id, entry } => (
            Place::Table(Table::Sales),
            receipt_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Receipt { receipt_id, entry } => (
            Place::Table(Table::Receipts),
            receipt_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Packet {
            packet_id, entry, ..
        } => (
            Place::Table(Table::Packets),
            packet_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::PaidOut { receipt_id, packet } => (
            Place::Table(Table::PaidOut),
            receipt_id.as_bytes(),
            packet.as_deref(),
        ),
        Condition::Nonce { key, entry } => (
            Place::Table(Table::Nonces),
            key.as_bytes(),
            entry.as_deref(),
        ),
        Condition::PaymentId { key, entry } => (
            Place::Table(Table::PaymentIds),
            key.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Refund { receipt_id, entry } => (
            Place::Table(Table::Refunds),
            receipt_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::PendingSettlement { receipt_id, entry } => (
            Place::Table(Table::PendingSettlements),
            receipt_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Builder { builder_id, entry } => (
            Place::Table(Table::Builders),
            builder_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::BuilderKey { key_sha256, entry } => (
            Place::Table(Table::BuilderKeys),
            key_sha256.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Endpoint { slug, entry } => (
            Place::Table(Table::Endpoints),
            slug.as_bytes(),
            entry.as_deref(),
        ),
        Condition::SlugReservation { slug, entry } => (
            Place::Table(Table::SlugReservations),
            slug.as_bytes(),
            entry.as_deref(),
        ),
        Condition::RefundClaim { receipt_id, entry } => (
            Place::Table(Table::RefundClaims),
            receipt_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Debt { key, entry } => {
            (Place::Table(Table::Debts), key.as_bytes(), entry.as_deref())
        }
        Condition::PayoutVersion { builder, entry } => (
            Place::Table(Table::PayoutVersions),
            builder.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Credit { credit_id, entry } => (
            Place::Table(Table::Credits),
            credit_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::CreditBalance { credit_id, entry } => (
            Place::Table(Table::CreditBalances),
            credit_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::CreditHold { hold_id, entry } => (
            Place::Table(Table::CreditHolds),
            hold_id.as_bytes(),
            entry.as_deref(),
        ),
        Condition::LogPending { name, entry } => (
            Place::Table(Table::LogPending),
            name.as_bytes(),
            entry.as_deref(),
        ),
        Condition::LogState { state, entry } => (
            Place::Table(Table::LogState),
            state.name().as_bytes(),
            entry.as_deref(),
        ),
        Condition::HandlerEntry {
            space,
            entry_key,
            entry,
        } => (
            Place::Table(handler_table(*space)),
            entry_key,
            entry.as_deref(),
        ),
        Condition::HandlerUsage { key, entry } => (
            Place::Table(Table::HandlerUsage),
            key.as_bytes(),
            entry.as_deref(),
        ),
        Condition::BuilderUsage { key, entry } => (
            Place::Table(Table::BuilderUsage),
            key.as_bytes(),
            entry.as_deref(),
        ),
        Condition::Secret { key, entry } => (
            Place::Table(Table::Secrets),
            key.as_bytes(),
            entry.as_deref(),
        ),
    }
}

/// A write's place, its key (a number's big-endian bytes for a table keyed by numbers), the
/// value it puts (`None`: a delete), and the row of a typed put.
pub(super) type WriteParts<'b> = (Place, Cow<'b, [u8]>, Option<&'b [u8]>, Option<Row<'b>>);

/// The table of a handler's space.
fn handler_table(space: HandlerSpace) -> Table {
    match space {
        HandlerSpace::Kv => Table::HandlerKv,
        HandlerSpace::Files => Table::HandlerFiles,
    }
}

/// A write's [`WriteParts`].
pub(super) fn write_parts(write: &Write) -> WriteParts<'_> {
    fn typed<'b>(table: Table, id: &'b str, row: Option<Row<'b>>) -> WriteParts<'b> {
        (
            Place::Table(table),
            id.as_bytes().into(),
            row.map(Row::entry),
            row,
        )
    }
    match write {
        Write::Put { tree, key, value } => (Place::Kv(*tree), key.into(), Some(value), None),
        Write::Delete { tree, key } => (Place::Kv(*tree), key.into(), None, None),
        Write::PutSale(sale) => typed(Table::Sales, &sale.receipt_id, Some(Row::Sale(sale))),
        Write::DeleteSale { receipt_id, .. } => typed(Table::Sales, receipt_id, None),
        Write::PutReceipt(receipt) => typed(
            Table::Receipts,
            &receipt.receipt_id,
            Some(Row::Receipt(receipt)),
        ),
        Write::DeleteReceipt { receipt_id } => typed(Table::Receipts, receipt_id, None),
        Write::PutReceiptProof { receipt_id, proof } => {
            typed(Table::ReceiptProofs, receipt_id, Some(Row::Entry(proof)))
        }
        Write::PutPacket(packet) => {
            typed(Table::Packets, &packet.packet_id, Some(Row::Packet(packet)))
        }
        Write::PutPaidOut(mark) => {
            typed(Table::PaidOut, &mark.receipt_id, Some(Row::PaidOut(mark)))
        }
        Write::PutPendingSettlement { receipt_id, entry } => typed(
            Table::PendingSettlements,
            receipt_id,
            Some(Row::Entry(entry)),
        ),
        Write::DeletePendingSettlement { receipt_id } => {
            typed(Table::PendingSettlements, receipt_id, None)
        }
        Write::PutNonce(nonce) => typed(Table::Nonces, &nonce.key, Some(Row::Nonce(nonce))),
        Write::DeleteNonce { key } => typed(Table::Nonces, key, None),
        Write::PutPaymentId(payment_id) => typed(
            Table::PaymentIds,
            &payment_id.key,
            Some(Row::PaymentId(payment_id)),
        ),
        Write::PutRefund(refund) => typed(
            Table::Refunds,
            &refund.receipt_id,
            Some(Row::Refund(refund)),
        ),
        Write::PutRefundClaim { receipt_id, entry } => {
            typed(Table::RefundClaims, receipt_id, Some(Row::Entry(entry)))
        }
        Write::DeleteRefundClaim { receipt_id } => typed(Table::RefundClaims, receipt_id, None),
        Write::PutBuilder(builder) => typed(
            Table::Builders,
            &builder.builder_id,
            Some(Row::Entry(&builder.entry)),
        ),
        Write::PutBuilderKey(key) => typed(
            Table::BuilderKeys,
            &key.key_sha256,
            Some(Row::BuilderKey(key)),
        ),
        Write::PutEndpoint(endpoint) => typed(
            Table::Endpoints,
            &endpoint.slug,
            Some(Row::Endpoint(endpoint)),
        ),
        Write::DeleteEndpoint { slug } => typed(Table::Endpoints, slug, None),
        Write::PutSlugReservation { slug, entry } => {
            typed(Table::SlugReservations, slug, Some(Row::Entry(entry)))
        }
        Write::DeleteSlugReservation { slug } => typed(Table::SlugReservations, slug, None),
        Write::PutOwedWipe { endpoint_id } => {
            typed(Table::OwedWipes, endpoint_id, Some(Row::Entry(b"1")))
        }
        Write::DeleteOwedWipe { endpoint_id } => typed(Table::OwedWipes, endpoint_id, None),
        Write::PutPayoutSettings(settings) => typed(
            Table::PayoutSettings,
            &settings.builder,
            Some(Row::PayoutSettings(settings)),
        ),
        Write::PutRevision(revision) => typed(
            Table::Revisions,
            &revision.key,
            Some(Row::Revision(revision)),
        ),
        Write::DeleteRevision { key } => typed(Table::Revisions, key, None),
        Write::PutDebt(debt) => typed(Table::Debts, &debt.key, Some(Row::Debt(debt))),
        Write::DeleteDebt { key } => typed(Table::Debts, key, None),
        Write::PutPayoutVersion {
            builder,
            version,
            entry,
        } => typed(
            Table::PayoutVersions,
            builder,
            Some(Row::Number(*version, entry)),
        ),
        Write::PutCredit(credit) => {
            typed(Table::Credits, &credit.credit_id, Some(Row::Credit(credit)))
        }
        Write::PutCreditBalance {
            credit_id,
            units,
            entry,
        } => typed(
            Table::CreditBalances,
            credit_id,
            Some(Row::Number(*units, entry)),
        ),
        Write::PutCreditHold(hold) => typed(
            Table::CreditHolds,
            &hold.hold_id,
            Some(Row::CreditHold(hold)),
        ),
        Write::DeleteCreditHold { hold_id } => typed(Table::CreditHolds, hold_id, None),
        Write::PutLogPending { name, entry } => {
            typed(Table::LogPending, name, Some(Row::Entry(entry)))
        }
        Write::DeleteLogPending { name } => typed(Table::LogPending, name, None),
        Write::PutHandlerEntry(row) => (
            Place::Table(handler_table(row.space)),
            Cow::Borrowed(&row.entry_key),
            Some(&row.entry),
            Some(Row::HandlerEntry(row)),
        ),
        Write::DeleteHandlerEntry { space, entry_key } => (
            Place::Table(handler_table(*space)),
            Cow::Borrowed(entry_key),
            None,
            None,
        ),
        Write::PutHandlerUsage(usage) => typed(
            Table::HandlerUsage,
            &usage.key,
            Some(Row::HandlerUsage(usage)),
        ),
        Write::DeleteHandlerUsage { key } => typed(Table::HandlerUsage, key, None),
        Write::PutBuilderUsage(totals) => typed(
            Table::BuilderUsage,
            &totals.key,
            Some(Row::BuilderUsage(totals)),
        ),
        Write::DeleteBuilderUsage { key } => typed(Table::BuilderUsage, key, None),
        Write::PutRolloutTally(tally) => typed(
            Table::RolloutTallies,
            &tally.key,
            Some(Row::RolloutTally(tally)),
        ),
        Write::PutSecret(secret) => typed(Table::Secrets, &secret.key, Some(Row::Secret(secret))),
        Write::DeleteSecret { key } => typed(Table::Secrets, key, None),
        Write::PutLogState { state, entry } => {
            typed(Table::LogState, state.name(), Some(Row::Entry(entry)))
        }
        Write::DeleteLogState { state } => typed(Table::LogState, state.name(), None),
        Write::PutLogNode { level, index, hash } => {
            let row = Row::LogNode(*level, *index, hash);
            (
                Place::Table(Table::LogNodes),
                receipt_log::kv::node_key(*level, *index).into(),
                Some(row.entry()),
                Some(row),
            )
        }
        Write::PutLogLeaf(leaf) => {
            let row = Row::LogLeaf(leaf);
            let key = leaf.leaf.to_be_bytes().to_vec().into();
            (
                Place::Table(Table::LogLeaves),
                key,
                Some(row.entry()),
                Some(row),
            )
        }
    }
}

/// One or more batches as one transaction runs them: the keys their conditions hold, their
/// conditions, and their writes reduced to the final effect on each key (a later write to a
/// key replaces an earlier one, as in sled), so the writes can be sent together in any order.
///
/// Each batch is a *member*: all of a member's writes land or none, whatever the others'
/// conditions say. Members never share a key (the committer groups only batches that do
/// not), so each key held or written belongs to one member.
pub(super) struct Plan<'b> {
    /// Every member's conditions in order, each with its member and its index there.
    conditions: Vec<(usize, usize, &'b Condition)>,
    /// The keys the conditions name, each once, in the order they are locked.
    holds: Vec<Hold<'b>>,
    /// For each condition, the index of its key in `holds`.
    held_by: Vec<usize>,
    /// In first-write order, member by member.
    writes: Vec<PlannedWrite<'b>>,
    members: usize,
    /// Whether the commit waits until it is durable
    /// ([`Store::apply_unsynced`](crate::Store::apply_unsynced) does not).
    pub(super) synced: bool,
}

impl<'b> Plan<'b> {
    pub(super) fn new(members: &[&'b Batch]) -> Self {
        let mut writes: Vec<PlannedWrite<'b>> = Vec::new();
        let mut index: HashMap<(Place, Cow<'b, [u8]>), usize> = HashMap::new();
        let mut conditions = Vec::new();
        for (member, batch) in members.iter().enumerate() {
            for write in &batch.writes {
                let (place, key, value, row) = write_parts(write);
                match index.get(&(place, key.clone())) {
                    Some(&i) => {
                        debug_assert_eq!(writes[i].member, member, "members share a key");
                        writes[i].value = value;
                        writes[i].row = row;
                    }
                    None => {
                        index.insert((place, key.clone()), writes.len());
                        writes.push(PlannedWrite {
                            member,
                            place,
                            key,
                            value,
                            row,
                            claimed: false,
                        });
                    }
                }
            }
            conditions.extend(
                batch
                    .conditions
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (member, i, c)),
            );
        }
        // Each key once: read if any condition wants a value there, claimed otherwise.
        let mut holds: Vec<Hold<'b>> = Vec::new();
        for &(member, _, condition) in &conditions {
            let (place, key, wanted) = condition_parts(condition);
            let wants_value = wanted.is_some();
            match holds.iter_mut().find(|h| h.place == place && h.key == key) {
                Some(hold) => {
                    debug_assert_eq!(hold.member, member, "members share a key");
                    hold.read |= wants_value;
                }
                None => holds.push(Hold {
                    member,
                    place,
                    key,
                    read: wants_value,
                    write: index.get(&(place, Cow::Borrowed(key))).copied(),
                }),
            }
        }
        holds.sort_by(|a, b| (a.place.rank(), a.key).cmp(&(b.place.rank(), b.key)));
        let held_by = conditions
            .iter()
            .map(|(_, _, condition)| {
                let (place, key, _) = condition_parts(condition);
                holds
                    .iter()
                    .position(|h| h.place == place && h.key == key)
                    .expect("every condition's key is held")
            })
            .collect();
        // A claimed key the batch puts is inserted with its value by the claim.
        for hold in holds.iter().filter(|h| !h.read) {
            if let Some(write) = hold.write.map(|i| &mut writes[i]) {
                write.claimed = write.value.is_some();
            }
        }
        Plan {
            conditions,
            holds,
            held_by,
            writes,
            members: members.len(),
            synced: true,
        }
    }

    /// The places its conditions and writes name, each once.
    fn places(&self) -> Vec<Place> {
        let holds = self.holds.iter().map(|h| h.place);
        let mut places: Vec<Place> = Vec::new();
        for place in holds.chain(self.writes.iter().map(|w| w.place)) {
            if !places.contains(&place) {
                places.push(place);
            }
        }
        places
    }

    /// Whether the plan is claims alone, one a member, each putting what it claims (a nonce
    /// claimed, an id reserved), and nothing watched: whatever a claim finds, the transaction
    /// then holds what it should commit (a claim that lost inserted nothing, and its member
    /// writes nothing else), so its `COMMIT` need not wait for the claims' answers.
    fn is_claims_only(&self) -> bool {
        let mut holds_of = vec![0usize; self.members];
        for hold in &self.holds {
            let claimed = hold.write.is_some_and(|i| self.writes[i].claimed);
            if hold.read || !claimed {
                return false;
            }
            holds_of[hold.member] += 1;
        }
        holds_of.iter().all(|&n| n == 1)
            && self.conditions.len() == self.holds.len()
            && self.writes.iter().all(|w| w.claimed)
            && !self.writes_watched()
    }

    /// Whether any of its writes is to a watched tree.
    pub(super) fn writes_watched(&self) -> bool {
        self.writes.iter().any(|w| w.place.is_watched())
    }
}

/// A key a batch's conditions name, held from its condition to the commit.
struct Hold<'b> {
    member: usize,
    place: Place,
    key: &'b [u8],
    /// Read `FOR UPDATE` (a condition wants a value there); otherwise claimed.
    read: bool,
    /// The batch's write to this key, if any (an index in [`Plan::writes`]).
    write: Option<usize>,
}

/// The final write to one key.
struct PlannedWrite<'b> {
    member: usize,
    place: Place,
    key: Cow<'b, [u8]>,
    /// `Some(value)` to put, `None` to delete.
    value: Option<&'b [u8]>,
    /// The row of a typed record's put (its entry is `value`).
    row: Option<Row<'b>>,
    /// Put by its condition's claim already (the key was absent, and is now this value).
    claimed: bool,
}

/// What a committed transaction did.
pub(super) struct Applied {
    /// Per member: the rows affected by each of its writes (in first-write order), or the index
    /// of its first condition that did not hold (then nothing of it was written).
    pub(super) members: Vec<Result<Vec<u64>, usize>>,
    /// The watched keys written, per tree, with the last generation each tree took.
    pub(super) watched: Vec<(Tree, Vec<Vec<u8>>, i64)>,
}

/// The statements a transaction may send, prepared (or found in the connection's cache) before
/// it begins, so nothing it sends waits for a reply to be sent: its statements go out in the
/// order they are written, and the commit after the writes (see [`try_apply`]).
///
/// Only those its plan needs: each statement found in the cache is a lookup by its SQL text
/// (hashed whole), and a transaction names a few of the many tables.
struct Prepared {
    /// The key-value table's, when the plan names a key there.
    kv: Option<PlaceStatements>,
    /// The change feed's, when the plan writes a watched tree.
    feed: Option<FeedStatements>,
    /// The typed records' tables' statements, in [`Table::ALL`]'s order; `None` for a table
    /// the plan does not name.
    tables: Vec<Option<PlaceStatements>>,
}

/// The statements that hold, put and delete keys of one place: the key-value table's, or a
/// typed record table's ([`tables::Statements`](super::tables::Statements)).
struct PlaceStatements {
    lock: tokio_postgres::Statement,
    claim: tokio_postgres::Statement,
    put: tokio_postgres::Statement,
    delete: tokio_postgres::Statement,
}

impl PlaceStatements {
    /// Each found in the connection's cache but once per connection and statement.
    async fn on(
        client: &deadpool_postgres::Client,
        [lock, claim, put, delete]: [&str; 4],
    ) -> Result<PlaceStatements, tokio_postgres::Error> {
        Ok(PlaceStatements {
            lock: client.prepare_cached(lock).await?,
            claim: client.prepare_cached(claim).await?,
            put: client.prepare_cached(put).await?,
            delete: client.prepare_cached(delete).await?,
        })
    }
}

/// The statements that record a watched tree's changes ([`super::feed`]).
struct FeedStatements {
    bump: tokio_postgres::Statement,
    record: tokio_postgres::Statement,
}

impl Prepared {
    async fn on(
        client: &deadpool_postgres::Client,
        plan: &Plan<'_>,
    ) -> Result<Prepared, tokio_postgres::Error> {
        let named = plan.places();
        let kv = match named.iter().any(|p| matches!(p, Place::Kv(_))) {
            true => Some(
                PlaceStatements::on(
                    client,
                    [SQL_LOCK_KEYS, SQL_CLAIM_KEYS, SQL_PUT_KEYS, SQL_DELETE_KEYS],
                )
                .await?,
            ),
            false => None,
        };
        let mut tables = Vec::with_capacity(Table::ALL.len());
        for table in Table::ALL {
            tables.push(match named.contains(&Place::Table(table)) {
                true => {
                    let sql = table.statements();
                    let sql = [&*sql.lock, &sql.claim, &sql.put, &sql.delete];
                    Some(PlaceStatements::on(client, sql).await?)
                }
                false => None,
            });
        }
        let feed = match plan.writes_watched() {
            true => Some(FeedStatements {
                bump: client.prepare_cached(SQL_BUMP_GENERATION).await?,
                record: client.prepare_cached(SQL_RECORD_CHANGE).await?,
            }),
            false => None,
        };
        Ok(Prepared { kv, feed, tables })
    }

    fn kv(&self) -> &PlaceStatements {
        self.kv
            .as_ref()
            .expect("prepared when its plan names a key there")
    }

    fn feed(&self) -> &FeedStatements {
        (self.feed.as_ref()).expect("prepared when its plan writes a watched tree")
    }

    fn table(&self, table: Table) -> &PlaceStatements {
        self.tables[table as usize]
            .as_ref()
            .expect("prepared for every table its plan names")
    }
}

/// A pooled connection while a transaction may be open on it. Dropped open (an error mid-way,
/// or the caller gone while it waited), the connection leaves the pool and closes, which rolls
/// the transaction back: it is never handed to another caller inside one.
struct OpenTransaction(Option<deadpool_postgres::Client>);

impl OpenTransaction {
    fn client(&self) -> &deadpool_postgres::Client {
        self.0.as_ref().expect("taken only by drop")
    }

    /// The transaction ended (committed or rolled back): the connection may serve others.
    fn ended(mut self) {
        drop(self.0.take());
    }
}

impl Drop for OpenTransaction {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

/// Runs `plan` in one transaction that holds its conditions' keys (see the module docs); with
/// `notify`, one that writes a watched tree also notifies the other nodes' listeners (at its
/// commit). A member whose condition fails is left out: what it claimed is deleted again and
/// none of its writes are sent; the others commit.
///
/// Two round trips when the batch has conditions, one when it has none: `BEGIN` goes with the
/// holds (or, without conditions, with the writes), and `COMMIT` with the writes, all
/// pipelined. One, too, for a plan of claims alone ([`Plan::is_claims_only`]): `BEGIN`, the
/// claims and `COMMIT` together. A write that fails aborts the transaction, so the `COMMIT`
/// behind it rolls back: nothing of the batch lands, as with a commit sent after the writes'
/// replies.
pub(super) async fn try_apply(
    client: deadpool_postgres::Client,
    plan: &Plan<'_>,
    notify: bool,
) -> Result<Applied, TxError> {
    let before = |e: tokio_postgres::Error| classify(&e, Phase::Before);
    let statements = Prepared::on(&client, plan).await.map_err(before)?;
    let open = OpenTransaction(Some(client));
    let client = open.client();
    let begin = match plan.synced {
        true => SQL_BEGIN,
        false => SQL_BEGIN_UNSYNCED,
    };

    if plan.is_claims_only() {
        let (began, held, committed) = futures::join!(
            client.batch_execute(begin),
            hold_keys(client, &statements, plan),
            client.batch_execute("COMMIT")
        );
        // A claim the server refused aborted the transaction, and the `COMMIT` rolled it back.
        committed.map_err(|e| classify(&e, Phase::Commit))?;
        open.ended();
        let states = began.and(held).map_err(before)?;
        return Ok(Applied {
            members: outcomes(plan, failed_conditions(plan, &states), &HashSet::new()),
            watched: Vec::new(),
        });
    }

    let began = !plan.holds.is_empty();
    let mut states = Vec::new();
    let mut failed = vec![None; plan.members];
    if began {
        let (began, held) = futures::future::join(
            client.batch_execute(begin),
            hold_keys(client, &statements, plan),
        )
        .await;
        states = began.and(held).map_err(before)?;
        failed = failed_conditions(plan, &states);
        if failed.iter().all(Option::is_some) {
            client.batch_execute("ROLLBACK").await.map_err(before)?;
            open.ended();
            return Ok(Applied {
                members: failed.into_iter().map(|f| Err(f.unwrap_or(0))).collect(),
                watched: Vec::new(),
            });
        }
    }
    let live = |member: usize| failed[member].is_none();

    // Keys claimed that must not stay: placeholders a member that commits did not write over
    // (those keys stay absent), and whatever a member that failed claimed. A key a claim found
    // present is someone else's, never deleted here.
    let unclaimed = (plan.holds.iter().zip(&states))
        .filter(|(h, held)| {
            !h.read && matches!(held, Held::Claimed) && (!live(h.member) || h.write.is_none())
        })
        .map(|(h, _)| (h.place, h.key));
    let deletes = (plan.writes.iter())
        .filter(|w| live(w.member) && w.value.is_none())
        .map(|w| (w.place, &*w.key));
    let mut deleted_keys: Vec<(Place, &[u8])> = deletes.chain(unclaimed).collect();
    deleted_keys.sort_unstable_by(|a, b| (a.0.rank(), a.1).cmp(&(b.0.rank(), b.1)));
    // The puts its claims did not make, in key order (concurrent batches lock the rows they
    // overwrite in the same order): the key-value table's, then each typed record table's.
    let mut puts: Vec<&PlannedWrite> = (plan.writes.iter())
        .filter(|w| live(w.member) && w.value.is_some() && !w.claimed)
        .collect();
    puts.sort_unstable_by(|a, b| (a.place.rank(), &a.key).cmp(&(b.place.rank(), &b.key)));
    let (table_puts, kv_puts): (Vec<&PlannedWrite>, Vec<&PlannedWrite>) =
        (puts.into_iter()).partition(|w| matches!(w.place, Place::Table(_)));
    let mut watched: Vec<(Tree, Vec<&[u8]>)> = Vec::new();
    for write in (plan.writes.iter()).filter(|w| live(w.member)) {
        let Some(tree) = write.place.watched_as() else {
            continue;
        };
        match watched.iter_mut().find(|(t, _)| *t == tree) {
            Some((_, keys)) => keys.push(&*write.key),
            None => watched.push((tree, vec![&*write.key])),
        }
    }

    // Every statement below is sent when first polled, in this order, and `join` polls them in
    // order: `BEGIN` (unless sent with the holds), the writes, the feed, `NOTIFY`, `COMMIT`.
    let statements = &statements;
    let begin = async {
        match began {
            true => Ok(()),
            false => client.batch_execute(begin).await,
        }
    };
    let put = async {
        if kv_puts.is_empty() {
            return Ok(());
        }
        let trees: Vec<&str> = kv_puts.iter().map(|w| w.place.name()).collect();
        let keys: Vec<&[u8]> = kv_puts.iter().map(|w| &*w.key).collect();
        let values: Vec<&[u8]> = kv_puts
            .iter()
            .map(|w| w.value.unwrap_or_default())
            .collect();
        client
            .execute(&statements.kv().put, &[&trees, &keys, &values])
            .await
            .map(drop)
    };
    let put_rows =
        futures::future::try_join_all(table_puts.chunk_by(|a, b| a.place == b.place).map(
            |run| async move {
                let Place::Table(table) = run[0].place else {
                    return Ok(());
                };
                let mut rows = Columns::new(table);
                for write in run {
                    rows.push(&write.key, write.row);
                }
                (client.execute(&statements.table(table).put, &rows.params()))
                    .await
                    .map(drop)
            },
        ));
    let delete = futures::future::try_join_all(deleted_keys.chunk_by(|a, b| a.0 == b.0).map(
        |run| async move {
            let place = run[0].0;
            let rows = match place {
                Place::Kv(tree) => {
                    let keys: Vec<&[u8]> = run.iter().map(|(_, key)| *key).collect();
                    client
                        .query(&statements.kv().delete, &[&tree.name(), &keys])
                        .await?
                }
                Place::Table(table) => {
                    let ids = table.keys(run.iter().map(|(_, key)| *key));
                    client
                        .query(&statements.table(table).delete, &[ids.param()])
                        .await?
                }
            };
            rows.iter()
                .map(|row| Ok((place, key_of(place, row)?)))
                .collect::<Result<Vec<_>, tokio_postgres::Error>>()
        },
    ));
    // Watched trees: take one generation per key, and record each key under its own (the
    // records read the generation the bump before them took).
    let feed = futures::future::try_join_all(watched.iter().map(|(tree, keys)| async move {
        let name = tree.name();
        let count = keys.len() as i64;
        let records = keys.iter().enumerate().map(|(i, key)| {
            let below = count - 1 - i as i64;
            async move { (client.execute(&statements.feed().record, &[&name, &below, key])).await }
        });
        let (row, _) = futures::future::try_join(
            client.query_opt(&statements.feed().bump, &[&name, &count]),
            futures::future::try_join_all(records),
        )
        .await?;
        Ok::<_, tokio_postgres::Error>(row)
    }));
    let notified = async {
        match notify && !watched.is_empty() {
            true => client.batch_execute(SQL_NOTIFY).await,
            false => Ok(()),
        }
    };
    let (began, put, put_rows, found, bumped, notified, committed) = futures::join!(
        begin,
        put,
        put_rows,
        delete,
        feed,
        notified,
        client.batch_execute("COMMIT")
    );
    // A statement the server refused aborted the transaction, and the `COMMIT` rolled it
    // back; a connection lost on the way leaves the commit's outcome unknown.
    let written = began
        .and(put)
        .and(put_rows.map(drop))
        .and(notified)
        .and(found)
        .and_then(|found| Ok((found, bumped?)));
    committed.map_err(|e| classify(&e, Phase::Commit))?;
    open.ended();
    let (found, bumped) = written.map_err(|e| classify(&e, Phase::Commit))?;

    let found: HashSet<(Place, Vec<u8>)> = found.into_iter().flatten().collect();
    let members = outcomes(plan, failed, &found);
    let mut generations = Vec::new();
    for ((tree, keys), row) in watched.into_iter().zip(bumped) {
        let row = row.ok_or_else(|| {
            TxError::Store(StoreError::Engine(format!(
                "no generation row for watched tree {}",
                tree.name()
            )))
        })?;
        let last = column::<i64>(&row, 0).map_err(TxError::Store)?;
        generations.push((tree, keys.into_iter().map(<[u8]>::to_vec).collect(), last));
    }
    Ok(Applied {
        members,
        watched: generations,
    })
}

/// Each member's outcome: the rows each of its writes affected (in first-write order), or the
/// index of its condition that did not hold (`failed`); `found` holds the keys deletes found.
fn outcomes(
    plan: &Plan<'_>,
    failed: Vec<Option<usize>>,
    found: &HashSet<(Place, Vec<u8>)>,
) -> Vec<Result<Vec<u64>, usize>> {
    let mut members: Vec<Result<Vec<u64>, usize>> = (failed.into_iter())
        .map(|failed| failed.map_or(Ok(Vec::new()), Err))
        .collect();
    for (i, write) in plan.writes.iter().enumerate() {
        let Ok(affected) = &mut members[write.member] else {
            continue;
        };
        // A key claimed with a placeholder and deleted by the batch was absent before.
        let missing = write.value.is_none()
            && (plan.holds.iter().any(|h| !h.read && h.write == Some(i))
                || !found.contains(&(write.place, write.key.to_vec())));
        affected.push(u64::from(!missing));
    }
    members
}

/// For each member, the index (in its batch) of its first condition that does not hold, given
/// what holding their keys found.
fn failed_conditions(plan: &Plan<'_>, states: &[Held]) -> Vec<Option<usize>> {
    let mut failed = vec![None; plan.members];
    for (&(member, index, condition), &h) in plan.conditions.iter().zip(&plan.held_by) {
        let (_, _, wanted) = condition_parts(condition);
        let holds = match (wanted, &states[h]) {
            (Some(want), Held::Value(value)) => value.as_deref() == Some(want),
            (Some(_), _) => false,
            (None, Held::Value(value)) => value.is_none(),
            (None, Held::Claimed) => true,
            (None, Held::Present) => false,
        };
        if !holds && failed[member].is_none() {
            failed[member] = Some(index);
        }
    }
    failed
}

/// What a transaction holds of a condition's key.
enum Held {
    /// Read `FOR UPDATE`: its value (`None`: absent), unchanged by others until commit.
    Value(Option<Vec<u8>>),
    /// Claimed: it was absent, and now only this transaction may insert it.
    Claimed,
    /// A claim found it present (its value is not read: every condition on it asks for
    /// absence).
    Present,
}

/// Holds every key the plan's conditions name, in the plan's lock order. Each run of
/// consecutive holds of one kind is one statement (claims: one insert whatever their trees;
/// reads: one `FOR UPDATE` select per tree), the statements sent together (tokio-postgres
/// pipelines queries awaited concurrently, in the order they are polled) and run in order, so
/// the keys are locked in the plan's order with a statement per run rather than per key.
async fn hold_keys(
    client: &deadpool_postgres::Client,
    statements: &Prepared,
    plan: &Plan<'_>,
) -> Result<Vec<Held>, tokio_postgres::Error> {
    // Claims in the key-value table go together whatever their trees; anything else, one
    // place at a time.
    let kv_claim = |hold: &Hold| !hold.read && matches!(hold.place, Place::Kv(_));
    let runs = plan
        .holds
        .chunk_by(|a, b| a.read == b.read && (a.place == b.place || kv_claim(a) && kv_claim(b)))
        .map(|run| async move {
            let place = run[0].place;
            if run[0].read {
                let rows = match place {
                    Place::Kv(tree) => {
                        let keys: Vec<&[u8]> = run.iter().map(|hold| hold.key).collect();
                        client
                            .query(&statements.kv().lock, &[&tree.name(), &keys])
                            .await?
                    }
                    Place::Table(table) => {
                        let ids = table.keys(run.iter().map(|hold| hold.key));
                        (client.query(&statements.table(table).lock, &[ids.param()])).await?
                    }
                };
                let mut values: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
                for row in rows {
                    values.insert(key_of(place, &row)?, row.try_get(1)?);
                }
                return Ok(run
                    .iter()
                    .map(|hold| Held::Value(values.remove(hold.key)))
                    .collect::<Vec<_>>());
            }
            // The batch's value when the claim puts it, else an empty placeholder.
            let claimed_write = |hold: &Hold| match hold.write.map(|i| &plan.writes[i]) {
                Some(write) if write.claimed => Some(write),
                _ => None,
            };
            let claimed: HashSet<(Place, Vec<u8>)> = match place {
                Place::Kv(_) => {
                    let trees: Vec<&str> = run.iter().map(|hold| hold.place.name()).collect();
                    let keys: Vec<&[u8]> = run.iter().map(|hold| hold.key).collect();
                    let values: Vec<&[u8]> = (run.iter())
                        .map(|hold| {
                            claimed_write(hold)
                                .and_then(|w| w.value)
                                .unwrap_or_default()
                        })
                        .collect();
                    let rows =
                        (client.query(&statements.kv().claim, &[&trees, &keys, &values])).await?;
                    let mut claimed = HashSet::new();
                    for row in rows {
                        let tree: String = row.try_get(0)?;
                        if let Some(tree) = Tree::named(&tree) {
                            claimed.insert((Place::Kv(tree), row.try_get(1)?));
                        }
                    }
                    claimed
                }
                Place::Table(table) => {
                    let mut rows = Columns::new(table);
                    for hold in run {
                        rows.push(hold.key, claimed_write(hold).and_then(|w| w.row));
                    }
                    let claim = &statements.table(table).claim;
                    let mut claimed = HashSet::new();
                    for row in client.query(claim, &rows.params()).await? {
                        claimed.insert((place, key_of(place, &row)?));
                    }
                    claimed
                }
            };
            Ok(run
                .iter()
                .map(
                    |hold| match claimed.contains(&(hold.place, hold.key.to_vec())) {
                        true => Held::Claimed,
                        false => Held::Present,
                    },
                )
                .collect())
        });
    let held = futures::future::try_join_all(runs).await?;
    Ok(held.into_iter().flatten().collect())
}

/// The key of a row a statement of `place` returned first: a key-value key, or a record's id.
fn key_of(place: Place, row: &tokio_postgres::Row) -> Result<Vec<u8>, tokio_postgres::Error> {
    match place {
        Place::Kv(_) => row.try_get(0),
        Place::Table(table) => table.key_of(row),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(plan: &Plan<'_>) -> Vec<(Place, Vec<u8>, Option<Vec<u8>>)> {
        plan.writes
            .iter()
            .map(|w| (w.place, w.key.to_vec(), w.value.map(<[u8]>::to_vec)))
            .collect()
    }

    #[test]
    fn plan_keeps_the_last_write_to_each_key() {
        let batch = Batch::new()
            .put(Tree::Endpoints, b"a".to_vec(), b"1".to_vec())
            .put(Tree::Logs, b"a".to_vec(), b"x".to_vec())
            .delete(Tree::Endpoints, b"a".to_vec())
            .put(Tree::Endpoints, b"b".to_vec(), b"2".to_vec())
            .put(Tree::Endpoints, b"a".to_vec(), b"3".to_vec());
        let plan = Plan::new(&[&batch]);
        assert_eq!(
            keys_of(&plan),
            [
                (
                    Place::Kv(Tree::Endpoints),
                    b"a".to_vec(),
                    Some(b"3".to_vec())
                ),
                (Place::Kv(Tree::Logs), b"a".to_vec(), Some(b"x".to_vec())),
                (
                    Place::Kv(Tree::Endpoints),
                    b"b".to_vec(),
                    Some(b"2".to_vec())
                ),
            ]
        );
        assert!(plan.writes_watched());
    }

    #[test]
    fn claims_alone_are_told_apart() {
        let claim = |key: &str| {
            Batch::new()
                .require_absent(Tree::Logs, key)
                .put(Tree::Logs, key, "1")
        };
        assert!(Plan::new(&[&claim("a")]).is_claims_only());
        assert!(Plan::new(&[&claim("a"), &claim("b")]).is_claims_only());
        let others = [
            // A placeholder, deleted again.
            Batch::new().require_absent(Tree::Logs, "a"),
            // Two claims: one may win and the other lose.
            claim("a")
                .require_absent(Tree::Logs, "b")
                .put(Tree::Logs, "b", "2"),
            // A write beside the claim, and a claimed key deleted again.
            claim("a").put(Tree::Logs, "c", "3"),
            claim("a").delete(Tree::Logs, "a"),
            // A value read.
            (Batch::new().require_equals(Tree::Logs, "a", Some(b"0".to_vec()))).put(
                Tree::Logs,
                "a",
                "1",
            ),
            // A watched tree's claim.
            (Batch::new().require_absent(Tree::Endpoints, "a")).put(Tree::Endpoints, "a", "1"),
            // Nothing held.
            Batch::new().put(Tree::Logs, "a", "1"),
        ];
        for batch in &others {
            assert!(!Plan::new(&[batch]).is_claims_only());
            assert!(!Plan::new(&[&claim("z"), batch]).is_claims_only());
        }
    }
}
