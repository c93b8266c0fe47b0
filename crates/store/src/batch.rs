//! Atomic write batches with optimistic preconditions.
//!
//! A batch speaks two languages. Most members name a tree and a key, the shape every engine stores
//! generically. *Typed* members name a domain's record (a sale, a receipt, a payout packet, a
//! sale's paid-out mark, a pending settlement, a payment nonce, a payment identifier, a refund, a
//! builder's debt or payout version, a developer credit's grant, balance or hold, a receipt log's
//! pending entry, leaf, interior node or state, an endpoint's record or revision, a deleted slug's
//! reservation or a deleted endpoint's owed wipe, a builder's
//! record, key or payout settings, a handler's kv entry or file or usage record, an endpoint's
//! secret or rollout tally, a free receipt's proof), so each engine keeps it in a shape of its
//! own: a key-value engine lowers it to the keys every release has written
//! ([`Batch::into_keys`]), PostgreSQL to a row of the record's table.
//! Conditions of both kinds are numbered together, in the order they were added.

use super::builders::{self, BuilderKeyRow, BuilderRow};
use super::credits::{self, CreditHoldRow, CreditRow};
use super::debts::{self, DebtRow};
use super::endpoints::{self, EndpointRow};
use super::handler_data::{self, BuilderUsageRow, HandlerEntryRow, HandlerSpace, HandlerUsageRow};
use super::nonces::{self, NonceRow};
use super::packets::{self, PacketRow};
use super::paid_out::{self, PaidOutRow};
use super::payment_ids::{self, PaymentIdRow};
use super::payout_settings::{self, PayoutSettingsRow};
use super::pending_settlements;
use super::receipt_log::{self, LeafRow, LogState};
use super::receipts::ReceiptRow;
use super::refund_claims;
use super::refunds::{self, RefundRow};
use super::revisions::{self, RevisionRow};
use super::rollout_tallies::{self, RolloutTallyRow};
use super::sales::{self, SaleRow};
use super::secrets::{self, SecretRow};
use super::Tree;

/// A precondition checked inside the same atomic step as the writes.
#[derive(Debug, Clone)]
pub enum Condition {
    /// The key must not exist (claiming a nonce, reserving a slug).
    Absent { tree: Tree, key: Vec<u8> },
    /// The key must hold exactly these bytes (`None`: must be absent). This is compare-and-swap,
    /// used for balances: read, compute, then write only if nobody changed it meanwhile.
    Equals {
        tree: Tree,
        key: Vec<u8>,
        value: Option<Vec<u8>>,
    },
    /// The sale of `receipt_id` must be stored exactly as `entry` (`None`: there is none):
    /// recording a sale once, and changing or removing it only as it was read.
    Sale {
        receipt_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The receipt must be stored exactly as `entry` (`None`: there is none): issuing a
    /// receipt once, and re-signing it only as it was read.
    Receipt {
        receipt_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The builder's packet must be stored exactly as `entry` (`None`: there is none).
    Packet {
        builder: String,
        packet_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The sale of `receipt_id` must be marked paid out by `packet` (its id's bytes; `None`:
    /// not paid out): a sale paid out once, and refunded as its payout stood when read.
    PaidOut {
        receipt_id: String,
        packet: Option<Vec<u8>>,
    },
    /// The settlement of the sale of `receipt_id` must be pending as `entry` (`None`: not
    /// pending): a settlement concluded once, as read, and a sale paid out only once collected.
    PendingSettlement {
        receipt_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The nonce must be stored exactly as `entry` (`None`: there is none): claiming a payment
    /// once, and moving it on (settling, spent, burned, released) only as it was read.
    Nonce { key: String, entry: Option<Vec<u8>> },
    /// The payment identifier `{payer}/{id}` must be stored exactly as `entry` (`None`: there
    /// is none): an id reserved once, and taken over from a call that died only as it was read.
    PaymentId { key: String, entry: Option<Vec<u8>> },
    /// The refund of `receipt_id` must be stored exactly as `entry` (`None`: there is none):
    /// a receipt refunded once, and its sale paid out only as its refund was read.
    Refund {
        receipt_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The record of builder `builder_id` must be stored as `entry` (`None`: there is none): a
    /// builder changed only as it was read.
    Builder {
        builder_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The key entry under `key_sha256` must be stored as `entry` (`None`: that key was never
    /// issued): a key issued once.
    BuilderKey {
        key_sha256: String,
        entry: Option<Vec<u8>>,
    },
    /// The reservation of `slug` must be stored as `entry` (`None`: there is none): a slug
    /// claimed only past the reservation it was checked against.
    SlugReservation {
        slug: String,
        entry: Option<Vec<u8>>,
    },
    /// The record under `slug` must be stored as `entry` (`None`: the slug is free): a slug
    /// claimed once, an endpoint changed only as it was read.
    Endpoint {
        slug: String,
        entry: Option<Vec<u8>>,
    },
    /// The claim of `receipt_id`'s refund in flight must be stored as `entry` (`None`: there
    /// is none): one transfer back per receipt, noted and concluded only as it was read.
    RefundClaim {
        receipt_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The debt under `key` (`{builderId}/{receiptId}`) must be stored as `entry` (`None`:
    /// there is none): a debt deducted once, by the packet that read it.
    Debt { key: String, entry: Option<Vec<u8>> },
    /// `builder`'s payout version must be stored as `entry` (`None`: there is none): a
    /// balance spent only as it was read.
    PayoutVersion {
        builder: String,
        entry: Option<Vec<u8>>,
    },
    /// The grant `credit_id` must be stored as `entry` (`None`: there is none): a credit id
    /// issued once.
    Credit {
        credit_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The balance of `credit_id` must be stored as `entry` (its decimal text; `None`: there is
    /// none): a balance changed only as it was read.
    CreditBalance {
        credit_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The hold `hold_id` must be stored as `entry` (`None`: there is none): a hold settled or
    /// released once.
    CreditHold {
        hold_id: String,
        entry: Option<Vec<u8>>,
    },
    /// The receipt log's entry pending under `name` must be `entry` (`None`: there is none):
    /// an entry appended once, by the append that finds it pending.
    LogPending {
        name: String,
        entry: Option<Vec<u8>>,
    },
    /// The receipt log's `state` record must be `entry` (`None`: there is none): an append
    /// lands only on the checkpoint it built on.
    LogState {
        state: LogState,
        entry: Option<Vec<u8>>,
    },
    /// The entry under `entry_key` (`{endpointId}/{key}`) of a handler's `space` must be
    /// `entry` (`None`: there is none): a handler's commit lands only on what it read.
    HandlerEntry {
        space: HandlerSpace,
        entry_key: Vec<u8>,
        entry: Option<Vec<u8>>,
    },
    /// The usage record under `key` (`{space}/{endpointId}`) must be `entry` (`None`: there is
    /// none): an endpoint's counts changed only as they were read.
    HandlerUsage { key: String, entry: Option<Vec<u8>> },
    /// The builder's totals under `key` (`{space}/{builderId}`) must be `entry` (`None`: there
    /// are none): a builder's totals changed only as they were read.
    BuilderUsage { key: String, entry: Option<Vec<u8>> },
    /// The secret under `key` (`{owner}/{NAME}`) must be sealed as `entry` (`None`: there is
    /// none): a secret moved or re-sealed only as it was read.
    Secret { key: String, entry: Option<Vec<u8>> },
}

#[derive(Debug, Clone)]
pub enum Write {
    Put {
        tree: Tree,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        tree: Tree,
        key: Vec<u8>,
    },
    /// Stores a sale (replacing one of the same receipt id).
    PutSale(SaleRow),
    /// Removes the sale of `receipt_id`; `seller` is the one it was stored with (the key-value
    /// shape keeps a copy under the seller, removed with it).
    DeleteSale {
        receipt_id: String,
        seller: Option<String>,
    },
    /// Stores a receipt (replacing one of the same id).
    PutReceipt(ReceiptRow),
    /// Removes a receipt.
    DeleteReceipt {
        receipt_id: String,
    },
    /// Stores the proof of a free call's receipt (replacing one of the same receipt).
    PutReceiptProof {
        receipt_id: String,
        proof: Vec<u8>,
    },
    /// Stores a payout packet (replacing one of the same id).
    PutPacket(PacketRow),
    /// Marks a sale paid out by a packet (replacing a mark of the same sale).
    PutPaidOut(PaidOutRow),
    /// Stores the pending settlement of the sale of `receipt_id` (replacing one of the same
    /// sale).
    PutPendingSettlement {
        receipt_id: String,
        entry: Vec<u8>,
    },
    /// Removes the pending settlement of the sale of `receipt_id` (concluded).
    DeletePendingSettlement {
        receipt_id: String,
    },
    /// Stores a nonce (replacing one of the same key).
    PutNonce(NonceRow),
    /// Removes a nonce (a claim given back).
    DeleteNonce {
        key: String,
    },
    /// Stores a payment identifier's record (replacing one of the same key).
    PutPaymentId(PaymentIdRow),
    /// Stores a refund (replacing one of the same receipt id).
    PutRefund(RefundRow),
    /// Stores the claim of `receipt_id`'s refund in flight (replacing one of the same receipt).
    PutRefundClaim {
        receipt_id: String,
        entry: Vec<u8>,
    },
    /// Removes the claim of `receipt_id`'s refund (recorded, or nothing moved).
    DeleteRefundClaim {
        receipt_id: String,
    },
    /// Stores a builder's record (replacing the one of its id).
    PutBuilder(BuilderRow),
    /// Stores a key's entry (replacing the one of its digest: a key revoked).
    PutBuilderKey(BuilderKeyRow),
    /// Stores an endpoint's record under its slug (replacing the one there).
    PutEndpoint(EndpointRow),
    /// Removes the record under `slug`, freeing the slug.
    DeleteEndpoint {
        slug: String,
    },
    /// Stores the reservation of a deleted endpoint's `slug` (replacing one there).
    PutSlugReservation {
        slug: String,
        entry: Vec<u8>,
    },
    /// Removes the reservation of `slug` (over, or claimed by its holder).
    DeleteSlugReservation {
        slug: String,
    },
    /// Records that a deleted endpoint's data is owed a wipe.
    PutOwedWipe {
        endpoint_id: String,
    },
    /// Removes the record of a wipe owed (done).
    DeleteOwedWipe {
        endpoint_id: String,
    },
    /// Stores a builder's payout settings (replacing its earlier ones).
    PutPayoutSettings(PayoutSettingsRow),
    /// Stores an endpoint's revision (replacing one of the same endpoint and number).
    PutRevision(RevisionRow),
    /// Removes revision `key` (`{endpointId}/{number:020}`): one pushed out of the kept window.
    DeleteRevision {
        key: String,
    },
    /// Stores a debt (replacing one of the same key).
    PutDebt(DebtRow),
    /// Removes the debt under `key` (deducted).
    DeleteDebt {
        key: String,
    },
    /// Stores `builder`'s payout version: the number, and the same as the decimal text every
    /// engine keeps as its entry.
    PutPayoutVersion {
        builder: String,
        version: i64,
        entry: Vec<u8>,
    },
    /// Stores a grant (replacing one of the same id) and its token's digest.
    PutCredit(CreditRow),
    /// Stores the balance of `credit_id` (replacing it): atomic units, and the same as the
    /// decimal text every engine keeps as its entry.
    PutCreditBalance {
        credit_id: String,
        units: i64,
        entry: Vec<u8>,
    },
    /// Stores a hold (replacing one of the same id).
    PutCreditHold(CreditHoldRow),
    /// Removes a hold (settled or released).
    DeleteCreditHold {
        hold_id: String,
    },
    /// Stores a receipt log entry pending under `name` (replacing one of the same name).
    PutLogPending {
        name: String,
        entry: Vec<u8>,
    },
    /// Removes the entry pending under `name` (appended).
    DeleteLogPending {
        name: String,
    },
    /// Stores an appended leaf of the receipt log (replacing one of the same index).
    PutLogLeaf(LeafRow),
    /// Stores an interior node of the receipt log's tree (level 1 and up; a leaf's hash is
    /// its leaf's).
    PutLogNode {
        level: u8,
        index: u64,
        hash: [u8; 32],
    },
    /// Stores the receipt log's `state` record (replacing it).
    PutLogState {
        state: LogState,
        entry: Vec<u8>,
    },
    /// Removes the receipt log's `state` record.
    DeleteLogState {
        state: LogState,
    },
    /// Stores an entry of a handler's space (replacing one of the same key).
    PutHandlerEntry(HandlerEntryRow),
    /// Removes the entry under `entry_key` (`{endpointId}/{key}`) of a handler's `space`.
    DeleteHandlerEntry {
        space: HandlerSpace,
        entry_key: Vec<u8>,
    },
    /// Stores an endpoint's usage record (replacing the one of its space).
    PutHandlerUsage(HandlerUsageRow),
    /// Removes the usage record under `key` (`{space}/{endpointId}`).
    DeleteHandlerUsage {
        key: String,
    },
    /// Stores a builder's totals (replacing the ones of their space).
    PutBuilderUsage(BuilderUsageRow),
    /// Removes the builder's totals under `key` (`{space}/{builderId}`).
    DeleteBuilderUsage {
        key: String,
    },
    /// Stores a sealed secret (replacing the one of its key).
    PutSecret(SecretRow),
    /// Stores a node's count of an endpoint's rollout (replacing its earlier one).
    PutRolloutTally(RolloutTallyRow),
    /// Removes the secret under `key` (`{owner}/{NAME}`).
    DeleteSecret {
        key: String,
    },
}

/// Conditions and writes applied all-or-nothing by [`super::Store::apply`].
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub conditions: Vec<Condition>,
    pub writes: Vec<Write>,
}

impl Batch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn require_absent(mut self, tree: Tree, key: impl Into<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Absent {
            tree,
            key: key.into(),
        });
        self
    }

    pub fn require_equals(
        mut self,
        tree: Tree,
        key: impl Into<Vec<u8>>,
        value: Option<Vec<u8>>,
    ) -> Self {
        self.conditions.push(Condition::Equals {
            tree,
            key: key.into(),
            value,
        });
        self
    }

    pub fn put(mut self, tree: Tree, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        self.writes.push(Write::Put {
            tree,
            key: key.into(),
            value: value.into(),
        });
        self
    }

    pub fn delete(mut self, tree: Tree, key: impl Into<Vec<u8>>) -> Self {
        self.writes.push(Write::Delete {
            tree,
            key: key.into(),
        });
        self
    }

    /// Requires the sale of `receipt_id` to be stored as `entry` (`None`: that there is none).
    pub fn require_sale(mut self, receipt_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Sale {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_sale(mut self, sale: SaleRow) -> Self {
        self.writes.push(Write::PutSale(sale));
        self
    }

    pub fn delete_sale(mut self, receipt_id: &str, seller: Option<&str>) -> Self {
        self.writes.push(Write::DeleteSale {
            receipt_id: receipt_id.to_owned(),
            seller: seller.map(str::to_owned),
        });
        self
    }

    /// Requires the receipt to be stored as `entry` (`None`: that there is none).
    pub fn require_receipt(mut self, receipt_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Receipt {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_receipt(mut self, receipt: ReceiptRow) -> Self {
        self.writes.push(Write::PutReceipt(receipt));
        self
    }

    pub fn delete_receipt(mut self, receipt_id: &str) -> Self {
        self.writes.push(Write::DeleteReceipt {
            receipt_id: receipt_id.to_owned(),
        });
        self
    }

    pub fn put_receipt_proof(mut self, receipt_id: &str, proof: Vec<u8>) -> Self {
        self.writes.push(Write::PutReceiptProof {
            receipt_id: receipt_id.to_owned(),
            proof,
        });
        self
    }

    /// Requires the builder's packet to be stored as `entry` (`None`: that there is none).
    pub fn require_packet(
        mut self,
        builder: &str,
        packet_id: &str,
        entry: Option<Vec<u8>>,
    ) -> Self {
        self.conditions.push(Condition::Packet {
            builder: builder.to_owned(),
            packet_id: packet_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_packet(mut self, packet: PacketRow) -> Self {
        self.writes.push(Write::PutPacket(packet));
        self
    }

    /// Requires the sale of `receipt_id` to be marked paid out by `packet` (`None`: not paid
    /// out).
    pub fn require_paid_out(mut self, receipt_id: &str, packet: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::PaidOut {
            receipt_id: receipt_id.to_owned(),
            packet,
        });
        self
    }

    pub fn put_paid_out(mut self, mark: PaidOutRow) -> Self {
        self.writes.push(Write::PutPaidOut(mark));
        self
    }

    /// Requires the settlement of the sale of `receipt_id` to be pending as `entry` (`None`:
    /// that it is not pending).
    pub fn require_pending_settlement(mut self, receipt_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::PendingSettlement {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_pending_settlement(mut self, receipt_id: &str, entry: Vec<u8>) -> Self {
        self.writes.push(Write::PutPendingSettlement {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn delete_pending_settlement(mut self, receipt_id: &str) -> Self {
        self.writes.push(Write::DeletePendingSettlement {
            receipt_id: receipt_id.to_owned(),
        });
        self
    }

    /// Requires the nonce to be stored as `entry` (`None`: that there is none).
    pub fn require_nonce(mut self, key: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Nonce {
            key: key.to_owned(),
            entry,
        });
        self
    }

    pub fn put_nonce(mut self, nonce: NonceRow) -> Self {
        self.writes.push(Write::PutNonce(nonce));
        self
    }

    pub fn delete_nonce(mut self, key: &str) -> Self {
        self.writes.push(Write::DeleteNonce {
            key: key.to_owned(),
        });
        self
    }

    /// Requires the payment identifier `{payer}/{id}` to be stored as `entry` (`None`: that
    /// there is none).
    pub fn require_payment_id(mut self, key: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::PaymentId {
            key: key.to_owned(),
            entry,
        });
        self
    }

    pub fn put_payment_id(mut self, payment_id: PaymentIdRow) -> Self {
        self.writes.push(Write::PutPaymentId(payment_id));
        self
    }

    /// Requires the refund of `receipt_id` to be stored as `entry` (`None`: that there is
    /// none).
    pub fn require_refund(mut self, receipt_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Refund {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_refund(mut self, refund: RefundRow) -> Self {
        self.writes.push(Write::PutRefund(refund));
        self
    }

    /// Requires the claim of `receipt_id`'s refund in flight to be stored as `entry` (`None`:
    /// that there is none).
    pub fn require_refund_claim(mut self, receipt_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::RefundClaim {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_refund_claim(mut self, receipt_id: &str, entry: Vec<u8>) -> Self {
        self.writes.push(Write::PutRefundClaim {
            receipt_id: receipt_id.to_owned(),
            entry,
        });
        self
    }

    pub fn delete_refund_claim(mut self, receipt_id: &str) -> Self {
        self.writes.push(Write::DeleteRefundClaim {
            receipt_id: receipt_id.to_owned(),
        });
        self
    }

    /// Requires `builder`'s debt for the refund of `receipt_id` to be stored as `entry`
    /// (`None`: that there is none).
    pub fn require_debt(mut self, builder: &str, receipt_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Debt {
            key: debts::debt_key(builder, receipt_id),
            entry,
        });
        self
    }

    /// Requires the record of builder `builder_id` to be stored as `entry` (as read; `None`:
    /// that there is none).
    pub fn require_builder(mut self, builder_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Builder {
            builder_id: builder_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_builder(mut self, builder: BuilderRow) -> Self {
        self.writes.push(Write::PutBuilder(builder));
        self
    }

    /// Requires the key entry under `key_sha256` to be stored as `entry` (as read; `None`: that
    /// the key was never issued).
    pub fn require_builder_key(mut self, key_sha256: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::BuilderKey {
            key_sha256: key_sha256.to_owned(),
            entry,
        });
        self
    }

    pub fn put_builder_key(mut self, key: BuilderKeyRow) -> Self {
        self.writes.push(Write::PutBuilderKey(key));
        self
    }

    /// Requires the record under `slug` to be stored as `entry` (as read; `None`: that the
    /// slug is free).
    pub fn require_endpoint(mut self, slug: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Endpoint {
            slug: slug.to_owned(),
            entry,
        });
        self
    }

    pub fn put_endpoint(mut self, endpoint: EndpointRow) -> Self {
        self.writes.push(Write::PutEndpoint(endpoint));
        self
    }

    pub fn delete_endpoint(mut self, slug: &str) -> Self {
        self.writes.push(Write::DeleteEndpoint {
            slug: slug.to_owned(),
        });
        self
    }

    /// Requires the reservation of `slug` to be stored as `entry` (`None`: that there is none).
    pub fn require_slug_reservation(mut self, slug: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::SlugReservation {
            slug: slug.to_owned(),
            entry,
        });
        self
    }

    pub fn put_slug_reservation(mut self, slug: &str, entry: Vec<u8>) -> Self {
        self.writes.push(Write::PutSlugReservation {
            slug: slug.to_owned(),
            entry,
        });
        self
    }

    pub fn delete_slug_reservation(mut self, slug: &str) -> Self {
        self.writes.push(Write::DeleteSlugReservation {
            slug: slug.to_owned(),
        });
        self
    }

    pub fn put_owed_wipe(mut self, endpoint_id: &str) -> Self {
        self.writes.push(Write::PutOwedWipe {
            endpoint_id: endpoint_id.to_owned(),
        });
        self
    }

    pub fn delete_owed_wipe(mut self, endpoint_id: &str) -> Self {
        self.writes.push(Write::DeleteOwedWipe {
            endpoint_id: endpoint_id.to_owned(),
        });
        self
    }

    pub fn put_payout_settings(mut self, settings: PayoutSettingsRow) -> Self {
        self.writes.push(Write::PutPayoutSettings(settings));
        self
    }

    pub fn put_revision(mut self, revision: RevisionRow) -> Self {
        self.writes.push(Write::PutRevision(revision));
        self
    }

    pub fn delete_revision(mut self, endpoint_id: &str, number: u64) -> Self {
        self.writes.push(Write::DeleteRevision {
            key: revisions::revision_key(endpoint_id, number),
        });
        self
    }

    pub fn put_debt(mut self, debt: DebtRow) -> Self {
        self.writes.push(Write::PutDebt(debt));
        self
    }

    pub fn delete_debt(mut self, builder: &str, receipt_id: &str) -> Self {
        self.writes.push(Write::DeleteDebt {
            key: debts::debt_key(builder, receipt_id),
        });
        self
    }

    /// Requires `builder`'s payout version to be stored as `entry` (as read; `None`: that
    /// there is none).
    pub fn require_payout_version(mut self, builder: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::PayoutVersion {
            builder: builder.to_owned(),
            entry,
        });
        self
    }

    pub fn put_payout_version(mut self, builder: &str, version: i64) -> Self {
        self.writes.push(Write::PutPayoutVersion {
            builder: builder.to_owned(),
            version,
            entry: version.to_string().into_bytes(),
        });
        self
    }

    /// Requires the grant `credit_id` to be stored as `entry` (`None`: that there is none).
    pub fn require_credit(mut self, credit_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Credit {
            credit_id: credit_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_credit(mut self, credit: CreditRow) -> Self {
        self.writes.push(Write::PutCredit(credit));
        self
    }

    /// Requires the balance of `credit_id` to be stored as `entry` (as read; `None`: that
    /// there is none).
    pub fn require_credit_balance(mut self, credit_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::CreditBalance {
            credit_id: credit_id.to_owned(),
            entry,
        });
        self
    }

    /// Sets the balance of `credit_id` to `units` (atomic units; a balance is never negative,
    /// nor beyond `i64::MAX`, which the caller checks).
    pub fn put_credit_balance(mut self, credit_id: &str, units: i64) -> Self {
        self.writes.push(Write::PutCreditBalance {
            credit_id: credit_id.to_owned(),
            units,
            entry: units.to_string().into_bytes(),
        });
        self
    }

    /// Requires the hold `hold_id` to be stored as `entry` (`None`: that there is none).
    pub fn require_credit_hold(mut self, hold_id: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::CreditHold {
            hold_id: hold_id.to_owned(),
            entry,
        });
        self
    }

    pub fn put_credit_hold(mut self, hold: CreditHoldRow) -> Self {
        self.writes.push(Write::PutCreditHold(hold));
        self
    }

    pub fn delete_credit_hold(mut self, hold_id: &str) -> Self {
        self.writes.push(Write::DeleteCreditHold {
            hold_id: hold_id.to_owned(),
        });
        self
    }

    /// Requires the receipt log's entry pending under `name` to be `entry` (`None`: that
    /// there is none).
    pub fn require_log_pending(mut self, name: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::LogPending {
            name: name.to_owned(),
            entry,
        });
        self
    }

    pub fn put_log_pending(mut self, name: &str, entry: Vec<u8>) -> Self {
        self.writes.push(Write::PutLogPending {
            name: name.to_owned(),
            entry,
        });
        self
    }

    pub fn delete_log_pending(mut self, name: &str) -> Self {
        self.writes.push(Write::DeleteLogPending {
            name: name.to_owned(),
        });
        self
    }

    pub fn put_log_leaf(mut self, leaf: LeafRow) -> Self {
        self.writes.push(Write::PutLogLeaf(leaf));
        self
    }

    pub fn put_log_node(mut self, level: u8, index: u64, hash: [u8; 32]) -> Self {
        self.writes.push(Write::PutLogNode { level, index, hash });
        self
    }

    /// Requires the receipt log's `state` record to be `entry` (`None`: that there is none).
    pub fn require_log_state(mut self, state: LogState, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::LogState { state, entry });
        self
    }

    pub fn put_log_state(mut self, state: LogState, entry: Vec<u8>) -> Self {
        self.writes.push(Write::PutLogState { state, entry });
        self
    }

    pub fn delete_log_state(mut self, state: LogState) -> Self {
        self.writes.push(Write::DeleteLogState { state });
        self
    }

    /// Requires `key` of `endpoint_id`'s `space` to hold `entry` (as read; `None`: that there
    /// is none).
    pub fn require_handler_entry(
        mut self,
        space: HandlerSpace,
        endpoint_id: &str,
        key: &str,
        entry: Option<Vec<u8>>,
    ) -> Self {
        self.conditions.push(Condition::HandlerEntry {
            space,
            entry_key: handler_data::entry_key(endpoint_id, key),
            entry,
        });
        self
    }

    pub fn put_handler_entry(mut self, entry: HandlerEntryRow) -> Self {
        self.writes.push(Write::PutHandlerEntry(entry));
        self
    }

    pub fn delete_handler_entry(
        mut self,
        space: HandlerSpace,
        endpoint_id: &str,
        key: &str,
    ) -> Self {
        self.writes.push(Write::DeleteHandlerEntry {
            space,
            entry_key: handler_data::entry_key(endpoint_id, key),
        });
        self
    }

    /// Requires the usage record of `endpoint_id` in `space` to be `entry` (as read; `None`:
    /// that there is none).
    pub fn require_handler_usage(
        mut self,
        space: HandlerSpace,
        endpoint_id: &str,
        entry: Option<Vec<u8>>,
    ) -> Self {
        self.conditions.push(Condition::HandlerUsage {
            key: handler_data::usage_key(space, endpoint_id),
            entry,
        });
        self
    }

    pub fn put_handler_usage(mut self, usage: HandlerUsageRow) -> Self {
        self.writes.push(Write::PutHandlerUsage(usage));
        self
    }

    pub fn delete_handler_usage(mut self, space: HandlerSpace, endpoint_id: &str) -> Self {
        self.writes.push(Write::DeleteHandlerUsage {
            key: handler_data::usage_key(space, endpoint_id),
        });
        self
    }

    /// Requires `builder`'s totals in `space` to be `entry` (as read; `None`: that there are
    /// none).
    pub fn require_builder_usage(
        mut self,
        space: HandlerSpace,
        builder: &str,
        entry: Option<Vec<u8>>,
    ) -> Self {
        self.conditions.push(Condition::BuilderUsage {
            key: handler_data::usage_key(space, builder),
            entry,
        });
        self
    }

    pub fn put_builder_usage(mut self, totals: BuilderUsageRow) -> Self {
        self.writes.push(Write::PutBuilderUsage(totals));
        self
    }

    pub fn delete_builder_usage(mut self, space: HandlerSpace, builder: &str) -> Self {
        self.writes.push(Write::DeleteBuilderUsage {
            key: handler_data::usage_key(space, builder),
        });
        self
    }

    /// Requires secret `name` of `owner` to be sealed as `entry` (as read; `None`: that there
    /// is none).
    pub fn require_secret(mut self, owner: &str, name: &str, entry: Option<Vec<u8>>) -> Self {
        self.conditions.push(Condition::Secret {
            key: secrets::secret_key(owner, name),
            entry,
        });
        self
    }

    pub fn put_secret(mut self, secret: SecretRow) -> Self {
        self.writes.push(Write::PutSecret(secret));
        self
    }

    pub fn delete_secret(mut self, owner: &str, name: &str) -> Self {
        self.writes.push(Write::DeleteSecret {
            key: secrets::secret_key(owner, name),
        });
        self
    }

    pub fn put_rollout_tally(mut self, tally: RolloutTallyRow) -> Self {
        self.writes.push(Write::PutRolloutTally(tally));
        self
    }

    /// Appends another batch's conditions and writes after this one's (condition indexes of
    /// `self` are unchanged).
    pub fn extend(mut self, other: Batch) -> Self {
        self.conditions.extend(other.conditions);
        self.writes.extend(other.writes);
        self
    }

    /// The batch as a key-value engine runs it: typed members lowered to the keys their records
    /// keep there ([`sales::kv`], [`packets::kv`], [`paid_out::kv`], [`pending_settlements::kv`],
    /// [`nonces::kv`], [`payment_ids::kv`], [`refunds::kv`], [`refund_claims::kv`], [`debts::kv`],
    /// [`credits::kv`], [`revisions::kv`], [`payout_settings::kv`], [`endpoints::kv`],
    /// [`builders::kv`], [`receipt_log::kv`], [`handler_data::kv`], [`secrets::kv`],
    /// [`rollout_tallies::kv`]; a receipt under its id in the `receipts` tree, a free receipt's
    /// proof under the same id in the `receipt_proofs` tree), conditions still numbered as added.
    pub fn into_keys(self) -> KeyBatch {
        let conditions = (self.conditions.into_iter())
            .map(|condition| match condition {
                Condition::Absent { tree, key } => KeyCondition {
                    tree,
                    key,
                    expected: None,
                },
                Condition::Equals { tree, key, value } => KeyCondition {
                    tree,
                    key,
                    expected: value,
                },
                Condition::Sale { receipt_id, entry } => KeyCondition {
                    tree: Tree::Ledger,
                    key: sales::kv::sale_key(&receipt_id),
                    expected: entry,
                },
                Condition::Receipt { receipt_id, entry } => KeyCondition {
                    tree: Tree::Receipts,
                    key: receipt_id.into_bytes(),
                    expected: entry,
                },
                Condition::Packet {
                    builder,
                    packet_id,
                    entry,
                } => KeyCondition {
                    tree: Tree::Ledger,
                    key: packets::kv::packet_key(&builder, &packet_id),
                    expected: entry,
                },
                Condition::PaidOut { receipt_id, packet } => KeyCondition {
                    tree: paid_out::kv::PLACE.tree,
                    key: paid_out::kv::PLACE.key(&receipt_id),
                    expected: packet,
                },
                Condition::PendingSettlement { receipt_id, entry } => KeyCondition {
                    tree: pending_settlements::kv::PLACE.tree,
                    key: pending_settlements::kv::PLACE.key(&receipt_id),
                    expected: entry,
                },
                Condition::Nonce { key, entry } => KeyCondition {
                    tree: Tree::Nonces,
                    key: key.into_bytes(),
                    expected: entry,
                },
                Condition::PaymentId { key, entry } => KeyCondition {
                    tree: payment_ids::kv::TREE,
                    key: key.into_bytes(),
                    expected: entry,
                },
                Condition::Refund { receipt_id, entry } => KeyCondition {
                    tree: refunds::kv::PLACE.tree,
                    key: refunds::kv::PLACE.key(&receipt_id),
                    expected: entry,
                },
                Condition::Builder { builder_id, entry } => KeyCondition {
                    tree: builders::kv::BUILDERS.tree,
                    key: builders::kv::BUILDERS.key(&builder_id),
                    expected: entry,
                },
                Condition::BuilderKey { key_sha256, entry } => KeyCondition {
                    tree: builders::kv::KEYS.tree,
                    key: builders::kv::KEYS.key(&key_sha256),
                    expected: entry,
                },
                Condition::Endpoint { slug, entry } => KeyCondition {
                    tree: endpoints::kv::PLACE.tree,
                    key: endpoints::kv::PLACE.key(&slug),
                    expected: entry,
                },
                Condition::SlugReservation { slug, entry } => KeyCondition {
                    tree: endpoints::kv::RESERVATIONS.tree,
                    key: endpoints::kv::RESERVATIONS.key(&slug),
                    expected: entry,
                },
                Condition::RefundClaim { receipt_id, entry } => KeyCondition {
                    tree: refund_claims::kv::PLACE.tree,
                    key: refund_claims::kv::PLACE.key(&receipt_id),
                    expected: entry,
                },
                Condition::Debt { key, entry } => KeyCondition {
                    tree: debts::kv::DEBTS.tree,
                    key: debts::kv::DEBTS.key(&key),
                    expected: entry,
                },
                Condition::PayoutVersion { builder, entry } => KeyCondition {
                    tree: debts::kv::VERSIONS.tree,
                    key: debts::kv::VERSIONS.key(&builder),
                    expected: entry,
                },
                Condition::Credit { credit_id, entry } => KeyCondition {
                    tree: credits::kv::GRANTS.tree,
                    key: credits::kv::GRANTS.key(&credit_id),
                    expected: entry,
                },
                Condition::CreditBalance { credit_id, entry } => KeyCondition {
                    tree: credits::kv::BALANCES.tree,
                    key: credits::kv::BALANCES.key(&credit_id),
                    expected: entry,
                },
                Condition::CreditHold { hold_id, entry } => KeyCondition {
                    tree: credits::kv::HOLDS.tree,
                    key: credits::kv::HOLDS.key(&hold_id),
                    expected: entry,
                },
                Condition::LogPending { name, entry } => KeyCondition {
                    tree: receipt_log::kv::PENDING.tree,
                    key: receipt_log::kv::PENDING.key(&name),
                    expected: entry,
                },
                Condition::LogState { state, entry } => KeyCondition {
                    tree: Tree::ReceiptLog,
                    key: receipt_log::kv::state_key(state),
                    expected: entry,
                },
                Condition::HandlerEntry {
                    space,
                    entry_key,
                    entry,
                } => KeyCondition {
                    tree: handler_data::kv::tree(space),
                    key: entry_key,
                    expected: entry,
                },
                Condition::HandlerUsage { key, entry } => KeyCondition {
                    tree: handler_data::kv::USAGE.tree,
                    key: handler_data::kv::USAGE.key(&key),
                    expected: entry,
                },
                Condition::BuilderUsage { key, entry } => KeyCondition {
                    tree: handler_data::kv::BUILDER_USAGE.tree,
                    key: handler_data::kv::BUILDER_USAGE.key(&key),
                    expected: entry,
                },
                Condition::Secret { key, entry } => KeyCondition {
                    tree: secrets::kv::TREE,
                    key: key.into_bytes(),
                    expected: entry,
                },
            })
            .collect();
        let mut writes = Vec::with_capacity(self.writes.len());
        let mut ahead = Vec::new();
        // Nonces whose index entry a write of this batch removes.
        let mut unindexed = std::collections::HashSet::new();
        for write in self.writes {
            match write {
                Write::Put { tree, key, value } => writes.push(KeyWrite {
                    tree,
                    key,
                    value: Some(value),
                }),
                Write::Delete { tree, key } => writes.push(KeyWrite {
                    tree,
                    key,
                    value: None,
                }),
                Write::PutSale(sale) => writes.extend(sales::kv::put(sale)),
                Write::DeleteSale { receipt_id, seller } => {
                    writes.extend(sales::kv::delete(&receipt_id, seller.as_deref()))
                }
                Write::PutReceipt(receipt) => writes.push(KeyWrite {
                    tree: Tree::Receipts,
                    key: receipt.receipt_id.into_bytes(),
                    value: Some(receipt.entry),
                }),
                Write::DeleteReceipt { receipt_id } => writes.push(KeyWrite {
                    tree: Tree::Receipts,
                    key: receipt_id.into_bytes(),
                    value: None,
                }),
                Write::PutReceiptProof { receipt_id, proof } => writes.push(KeyWrite {
                    tree: Tree::ReceiptProofs,
                    key: receipt_id.into_bytes(),
                    value: Some(proof),
                }),
                Write::PutPacket(packet) => writes.push(KeyWrite {
                    tree: Tree::Ledger,
                    key: packets::kv::packet_key(&packet.builder, &packet.packet_id),
                    value: Some(packet.entry),
                }),
                Write::PutPaidOut(mark) => writes.push(KeyWrite {
                    tree: paid_out::kv::PLACE.tree,
                    key: paid_out::kv::PLACE.key(&mark.receipt_id),
                    value: Some(mark.packet_id.into_bytes()),
                }),
                Write::PutPendingSettlement { receipt_id, entry } => writes.push(KeyWrite {
                    tree: pending_settlements::kv::PLACE.tree,
                    key: pending_settlements::kv::PLACE.key(&receipt_id),
                    value: Some(entry),
                }),
                Write::DeletePendingSettlement { receipt_id } => writes.push(KeyWrite {
                    tree: pending_settlements::kv::PLACE.tree,
                    key: pending_settlements::kv::PLACE.key(&receipt_id),
                    value: None,
                }),
                Write::PutNonce(nonce) => {
                    let (index, put) = nonces::kv::put(nonce);
                    // Indexed ahead; and in order too when an earlier write of this batch
                    // removes the entry, so the later write wins, as for any key.
                    if index.value.is_some() {
                        ahead.push(index.clone());
                    }
                    if index.value.is_none() || unindexed.contains(&index.key) {
                        unindexed.insert(index.key.clone());
                        writes.push(index);
                    }
                    writes.push(put);
                }
                Write::DeleteNonce { key } => {
                    let [index, delete] = nonces::kv::delete(key);
                    unindexed.insert(index.key.clone());
                    writes.extend([index, delete]);
                }
                Write::PutPaymentId(payment_id) => writes.push(KeyWrite {
                    tree: payment_ids::kv::TREE,
                    key: payment_id.key.into_bytes(),
                    value: Some(payment_id.entry),
                }),
                Write::PutRefund(refund) => writes.push(KeyWrite {
                    tree: refunds::kv::PLACE.tree,
                    key: refunds::kv::PLACE.key(&refund.receipt_id),
                    value: Some(refund.entry),
                }),
                Write::PutRefundClaim { receipt_id, entry } => writes.push(KeyWrite {
                    tree: refund_claims::kv::PLACE.tree,
                    key: refund_claims::kv::PLACE.key(&receipt_id),
                    value: Some(entry),
                }),
                Write::DeleteRefundClaim { receipt_id } => writes.push(KeyWrite {
                    tree: refund_claims::kv::PLACE.tree,
                    key: refund_claims::kv::PLACE.key(&receipt_id),
                    value: None,
                }),
                Write::PutBuilder(builder) => writes.push(KeyWrite {
                    tree: builders::kv::BUILDERS.tree,
                    key: builders::kv::BUILDERS.key(&builder.builder_id),
                    value: Some(builder.entry),
                }),
                Write::PutBuilderKey(key) => writes.push(KeyWrite {
                    tree: builders::kv::KEYS.tree,
                    key: builders::kv::KEYS.key(&key.key_sha256),
                    value: Some(key.entry),
                }),
                Write::PutEndpoint(endpoint) => writes.push(KeyWrite {
                    tree: endpoints::kv::PLACE.tree,
                    key: endpoints::kv::PLACE.key(&endpoint.slug),
                    value: Some(endpoint.entry),
                }),
                Write::DeleteEndpoint { slug } => writes.push(KeyWrite {
                    tree: endpoints::kv::PLACE.tree,
                    key: endpoints::kv::PLACE.key(&slug),
                    value: None,
                }),
                Write::PutSlugReservation { slug, entry } => writes.push(KeyWrite {
                    tree: endpoints::kv::RESERVATIONS.tree,
                    key: endpoints::kv::RESERVATIONS.key(&slug),
                    value: Some(entry),
                }),
                Write::DeleteSlugReservation { slug } => writes.push(KeyWrite {
                    tree: endpoints::kv::RESERVATIONS.tree,
                    key: endpoints::kv::RESERVATIONS.key(&slug),
                    value: None,
                }),
                Write::PutOwedWipe { endpoint_id } => writes.push(KeyWrite {
                    tree: endpoints::kv::OWED_WIPES.tree,
                    key: endpoints::kv::OWED_WIPES.key(&endpoint_id),
                    value: Some(b"1".to_vec()),
                }),
                Write::DeleteOwedWipe { endpoint_id } => writes.push(KeyWrite {
                    tree: endpoints::kv::OWED_WIPES.tree,
                    key: endpoints::kv::OWED_WIPES.key(&endpoint_id),
                    value: None,
                }),
                Write::PutPayoutSettings(settings) => writes.push(KeyWrite {
                    tree: payout_settings::kv::PLACE.tree,
                    key: payout_settings::kv::PLACE.key(&settings.builder),
                    value: Some(settings.entry),
                }),
                Write::PutRevision(revision) => writes.push(KeyWrite {
                    tree: revisions::kv::TREE,
                    key: revision.key.into_bytes(),
                    value: Some(revision.entry),
                }),
                Write::DeleteRevision { key } => writes.push(KeyWrite {
                    tree: revisions::kv::TREE,
                    key: key.into_bytes(),
                    value: None,
                }),
                Write::PutDebt(debt) => writes.push(KeyWrite {
                    tree: debts::kv::DEBTS.tree,
                    key: debts::kv::DEBTS.key(&debt.key),
                    value: Some(debt.entry),
                }),
                Write::DeleteDebt { key } => writes.push(KeyWrite {
                    tree: debts::kv::DEBTS.tree,
                    key: debts::kv::DEBTS.key(&key),
                    value: None,
                }),
                Write::PutPayoutVersion { builder, entry, .. } => writes.push(KeyWrite {
                    tree: debts::kv::VERSIONS.tree,
                    key: debts::kv::VERSIONS.key(&builder),
                    value: Some(entry),
                }),
                Write::PutCredit(credit) => writes.extend(credits::kv::put(credit)),
                Write::PutCreditBalance {
                    credit_id, entry, ..
                } => writes.push(KeyWrite {
                    tree: credits::kv::BALANCES.tree,
                    key: credits::kv::BALANCES.key(&credit_id),
                    value: Some(entry),
                }),
                Write::PutCreditHold(hold) => writes.push(KeyWrite {
                    tree: credits::kv::HOLDS.tree,
                    key: credits::kv::HOLDS.key(&hold.hold_id),
                    value: Some(hold.entry),
                }),
                Write::DeleteCreditHold { hold_id } => writes.push(KeyWrite {
                    tree: credits::kv::HOLDS.tree,
                    key: credits::kv::HOLDS.key(&hold_id),
                    value: None,
                }),
                Write::PutLogPending { name, entry } => writes.push(KeyWrite {
                    tree: receipt_log::kv::PENDING.tree,
                    key: receipt_log::kv::PENDING.key(&name),
                    value: Some(entry),
                }),
                Write::DeleteLogPending { name } => writes.push(KeyWrite {
                    tree: receipt_log::kv::PENDING.tree,
                    key: receipt_log::kv::PENDING.key(&name),
                    value: None,
                }),
                Write::PutLogLeaf(leaf) => writes.extend(receipt_log::kv::put_leaf(leaf)),
                Write::PutLogNode { level, index, hash } => writes.push(KeyWrite {
                    tree: Tree::ReceiptLog,
                    key: receipt_log::kv::node_key(level, index),
                    value: Some(hash.to_vec()),
                }),
                Write::PutLogState { state, entry } => writes.push(KeyWrite {
                    tree: Tree::ReceiptLog,
                    key: receipt_log::kv::state_key(state),
                    value: Some(entry),
                }),
                Write::DeleteLogState { state } => writes.push(KeyWrite {
                    tree: Tree::ReceiptLog,
                    key: receipt_log::kv::state_key(state),
                    value: None,
                }),
                Write::PutHandlerEntry(row) => writes.push(KeyWrite {
                    tree: handler_data::kv::tree(row.space),
                    key: row.entry_key,
                    value: Some(row.entry),
                }),
                Write::DeleteHandlerEntry { space, entry_key } => writes.push(KeyWrite {
                    tree: handler_data::kv::tree(space),
                    key: entry_key,
                    value: None,
                }),
                Write::PutHandlerUsage(usage) => writes.push(KeyWrite {
                    tree: handler_data::kv::USAGE.tree,
                    key: handler_data::kv::USAGE.key(&usage.key),
                    value: Some(usage.entry),
                }),
                Write::DeleteHandlerUsage { key } => writes.push(KeyWrite {
                    tree: handler_data::kv::USAGE.tree,
                    key: handler_data::kv::USAGE.key(&key),
                    value: None,
                }),
                Write::PutBuilderUsage(totals) => writes.push(KeyWrite {
                    tree: handler_data::kv::BUILDER_USAGE.tree,
                    key: handler_data::kv::BUILDER_USAGE.key(&totals.key),
                    value: Some(totals.entry),
                }),
                Write::DeleteBuilderUsage { key } => writes.push(KeyWrite {
                    tree: handler_data::kv::BUILDER_USAGE.tree,
                    key: handler_data::kv::BUILDER_USAGE.key(&key),
                    value: None,
                }),
                Write::PutRolloutTally(tally) => writes.push(KeyWrite {
                    tree: rollout_tallies::kv::PLACE.tree,
                    key: rollout_tallies::kv::PLACE.key(&tally.key),
                    value: Some(tally.entry),
                }),
                Write::PutSecret(secret) => writes.push(KeyWrite {
                    tree: secrets::kv::TREE,
                    key: secret.key.into_bytes(),
                    value: Some(secret.entry),
                }),
                Write::DeleteSecret { key } => writes.push(KeyWrite {
                    tree: secrets::kv::TREE,
                    key: key.into_bytes(),
                    value: None,
                }),
            }
        }
        KeyBatch {
            conditions,
            writes,
            ahead,
        }
    }
}

/// A batch in keys only ([`Batch::into_keys`]): what a key-value engine applies.
#[derive(Debug, Clone, Default)]
pub struct KeyBatch {
    pub conditions: Vec<KeyCondition>,
    pub writes: Vec<KeyWrite>,
    /// Index entries the engine writes before the batch, whether or not the batch then
    /// applies: an index that may name more than it should ([`nonces::kv`]'s of open nonces,
    /// cleaned as it is read) and so keeps a claim a batch of one key (sled's compare-and-swap,
    /// no journal).
    pub ahead: Vec<KeyWrite>,
}

/// The key must hold exactly `expected` (`None`: must be absent).
#[derive(Debug, Clone)]
pub struct KeyCondition {
    pub tree: Tree,
    pub key: Vec<u8>,
    pub expected: Option<Vec<u8>>,
}

/// Puts `value` at the key, or deletes it (`None`).
#[derive(Debug, Clone)]
pub struct KeyWrite {
    pub tree: Tree,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl KeyBatch {
    /// Every tree the batch touches, sorted and deduplicated (engines lock or open these).
    pub fn trees(&self) -> Vec<Tree> {
        let conditions = self.conditions.iter().map(|c| c.tree);
        let mut trees: Vec<Tree> = conditions
            .chain(self.writes.iter().map(|w| w.tree))
            .collect();
        trees.sort();
        trees.dedup();
        trees
    }
}
