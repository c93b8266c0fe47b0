//! Refunding a paid call: the endpoint's owner (or the admin) gives back all or part of what a
//! receipt charged, with a reason.
//!
//! A receipt is refunded once (`revenue::refunds`): the refund record, the ledger entries it
//! changes, the money it returns and its pending entry in the receipt log are one atomic batch, conditioned on the sale as read and on
//! no refund being there, so concurrent refunds of one receipt make one refund, and a repeated
//! request (same amount, same reason) answers the refund already made. The receipt itself is
//! never rewritten.
//!
//! Where the money goes back:
//! - a developer credit: to its balance, in the same batch;
//! - an x402 payment recorded only (a deployment that cannot settle): nothing was collected, so
//!   nothing moves; the refund takes the sale out of revenue and payouts;
//! - an x402 payment this server transferred on-chain: a transfer from the settlement wallet
//!   back to the payer (`on_chain`: claimed, transferred, then recorded, crash-safe); one
//!   settled by a hosted facilitator (whose API has no refund call), or still pending, is
//!   `refund_unavailable` and nothing changes.
//!
//! A sale already paid out to the builder leaves the builder owing its net share of the refund,
//! deducted from its next payout; the owner may refund such a sale only while its unpaid
//! balance covers that share (`refund_exceeds_balance`), the admin whatever the balance.

pub mod on_chain;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::credits;
use crate::error::{ApiError, ErrorCode};
use crate::money::Usd;
use crate::receipts::log;
use crate::receipts::{PaymentMethod, ReceiptSigner};
use crate::revenue::payouts::{self, paid_out_by};
use crate::revenue::refunds::{self, bump_balance, owe, owed, Refund};
use crate::revenue::{standing, Collection, Sale, Signature};
use crate::store::{Batch, Store, StoreError};
use crate::x402::{Facilitator, PaymentError};

/// The longest reason kept.
const MAX_REASON_CHARS: usize = 500;
/// Times a refund is tried again when the ledger changed between its read and its write.
const ATTEMPTS: usize = 16;

/// `POST /ai/receipts/{receiptId}/refund`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundRequest {
    /// How much to give back, at most what was charged; the whole charge when absent.
    #[schema(value_type = Option<f64>, minimum = 0)]
    pub amount_usd: Option<Usd>,
    /// Why (1 to 500 characters); kept in the signed refund record.
    pub reason: String,
}

/// Who refunds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refunder {
    /// A builder: only its own endpoints' receipts, within its balance once paid out.
    Builder(String),
    Admin,
}

#[derive(Debug, thiserror::Error)]
pub enum RefundError {
    #[error("no receipt {0:?}")]
    NotFound(String),
    #[error("this receipt charged nothing, so there is nothing to refund")]
    NotCharged,
    #[error("only the endpoint's owner or the admin may refund this receipt")]
    NotOwner,
    #[error("reason must be 1 to {MAX_REASON_CHARS} characters")]
    BadReason,
    #[error("amountUsd must be more than 0 and at most the {charged} USD charged")]
    BadAmount { charged: Usd },
    #[error("this receipt was refunded already ({} atomic units, {:?})", .0.amount, .0.reason)]
    AlreadyRefunded(Box<Refund>),
    #[error("{0}")]
    Unavailable(&'static str),
    /// The transfer back was refused (the settlement wallet holds too little) or reverted:
    /// nothing moved.
    #[error("the refund could not be transferred, so nothing was refunded: {0}")]
    Transfer(String),
    /// The chain could not be reached before the transfer was sent: nothing moved.
    #[error("the refund could not be transferred (the chain did not answer), so nothing was refunded: {0}")]
    Chain(String),
    /// A transfer back is on its way (broadcast, not yet seen mined), or being claimed.
    #[error("{}", match .transaction {
        Some(t) => format!("the refund transfer {t} was broadcast and is not mined yet; it is recorded once it is (GET this receipt's refund)"),
        None => "a refund of this receipt is being transferred; try again in a moment".to_string(),
    })]
    InProgress { transaction: Option<String> },
    #[error("the builder was paid out for this receipt already and owes {owed} USD of this refund, more than its unpaid balance of {balance} USD; the admin may refund it")]
    ExceedsBalance { owed: Usd, balance: Usd },
    #[error("the ledger kept changing; try again")]
    Busy,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<RefundError> for ApiError {
    fn from(e: RefundError) -> Self {
        use axum::http::StatusCode;
        let message = e.to_string();
        let conflict = |code| ApiError::new(StatusCode::CONFLICT, code, message.clone());
        match e {
            RefundError::NotFound(_) => ApiError::not_found(ErrorCode::ReceiptNotFound, message),
            RefundError::NotCharged => conflict(ErrorCode::NotRefundable),
            RefundError::NotOwner => {
                ApiError::new(StatusCode::FORBIDDEN, ErrorCode::NotOwner, message)
            }
            RefundError::BadReason => ApiError::unprocessable(ErrorCode::InvalidField, message)
                .with_details(json!({"field": "reason"})),
            RefundError::BadAmount { .. } => {
                ApiError::unprocessable(ErrorCode::InvalidAmount, message)
                    .with_details(json!({"field": "amountUsd"}))
            }
            RefundError::AlreadyRefunded(refund) => conflict(ErrorCode::AlreadyRefunded)
                .with_details(json!({"refundId": refund.refund_id})),
            RefundError::Unavailable(_) | RefundError::Transfer(_) => {
                conflict(ErrorCode::RefundUnavailable)
            }
            RefundError::Chain(_) => ApiError::new(
                StatusCode::BAD_GATEWAY,
                ErrorCode::FacilitatorUnavailable,
                message,
            ),
            RefundError::InProgress { transaction } => conflict(ErrorCode::RefundInProgress)
                .with_details(json!({"transaction": transaction})),
            RefundError::ExceedsBalance { owed, balance } => {
                conflict(ErrorCode::RefundExceedsBalance).with_details(json!({
                    "owedUnits": owed.units().to_string(),
                    "balanceUnits": balance.units().to_string(),
                }))
            }
            RefundError::Busy => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::StoreUnavailable,
                message,
            )
            .with_retry_after(1),
            RefundError::Store(e) => e.into(),
        }
    }
}

impl From<PaymentError> for RefundError {
    fn from(e: PaymentError) -> Self {
        match e {
            PaymentError::Store(e) => RefundError::Store(e),
            // Giving credit back only fails in the store.
            other => RefundError::Store(StoreError::Engine(other.to_string())),
        }
    }
}

/// What a refund works with: owned, because a transfer on-chain runs to its end in a task of
/// its own (a cancelled request must not leave money moved and nothing recorded).
#[derive(Clone)]
pub struct Parts {
    pub store: Arc<dyn Store>,
    pub signer: Arc<ReceiptSigner>,
    pub facilitator: Arc<dyn Facilitator>,
    pub fee_bps: u64,
}

/// Refunds `receipt_id` as `request` asks: the refund, and whether it was made now (`false`:
/// the same refund was made before).
pub async fn refund(
    parts: &Parts,
    receipt_id: &str,
    request: &RefundRequest,
    refunder: &Refunder,
) -> Result<(Refund, bool), RefundError> {
    let reason = request.reason.trim();
    if reason.is_empty() || reason.chars().count() > MAX_REASON_CHARS {
        return Err(RefundError::BadReason);
    }
    for _ in 0..ATTEMPTS {
        match attempt(parts, receipt_id, request.amount_usd, reason, refunder).await {
            Err(RefundError::Store(StoreError::ConditionFailed(_))) => continue,
            other => return other,
        }
    }
    Err(RefundError::Busy)
}

/// Where a refund's money goes.
enum Way {
    /// Back to the developer credit that paid.
    Credit(String),
    /// Nowhere: the payment was recorded only.
    Recorded,
    /// A transfer from the settlement wallet to the payer.
    OnChain,
}

/// One read of the ledger and one conditional batch (two with a transfer on-chain: the claim,
/// then the refund).
async fn attempt(
    parts: &Parts,
    receipt_id: &str,
    amount: Option<Usd>,
    reason: &str,
    refunder: &Refunder,
) -> Result<(Refund, bool), RefundError> {
    let store = parts.store.as_ref();
    let Some(sale_bytes) = store.sale(receipt_id).await? else {
        return Err(match store.receipt(receipt_id).await? {
            Some(_) => RefundError::NotCharged,
            None => RefundError::NotFound(receipt_id.to_string()),
        });
    };
    let sale: Sale =
        serde_json::from_slice(&sale_bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    if let Refunder::Builder(builder) = refunder {
        if sale.seller.as_deref() != Some(builder.as_str()) {
            return Err(RefundError::NotOwner);
        }
    }
    let amount = amount.unwrap_or(sale.amount);
    if amount.is_zero() || amount > sale.amount {
        return Err(RefundError::BadAmount {
            charged: sale.amount,
        });
    }
    if let Some((made, _)) = refunds::refund_of(store, receipt_id).await? {
        if made.amount == amount.units().to_string() && made.reason == reason {
            return Ok((made, false));
        }
        return Err(RefundError::AlreadyRefunded(Box::new(made)));
    }
    if let Some(claim) = on_chain::claim_of(store, receipt_id).await? {
        return Err(RefundError::InProgress {
            transaction: claim.transaction,
        });
    }
    let way = match (sale.method, standing(store, &sale).await?) {
        (PaymentMethod::Free, _) => return Err(RefundError::NotCharged),
        (_, Collection::Pending) => {
            return Err(RefundError::Unavailable(
                "the payment is still pending on-chain; refund it once it is settled",
            ))
        }
        (PaymentMethod::DeveloperCredit, _) => Way::Credit(credit_of(store, &sale).await?),
        (PaymentMethod::X402, Collection::Recorded) => Way::Recorded,
        (PaymentMethod::X402, Collection::Collected) => {
            on_chain::available(parts, receipt_id).await?;
            Way::OnChain
        }
    };
    let paid_out = paid_out_by(store, receipt_id).await?;
    let refund = Refund {
        refund_id: format!("rfd_{}", uuid::Uuid::now_v7().simple()),
        receipt_id: receipt_id.to_string(),
        endpoint_slug: sale.endpoint_slug.clone(),
        seller: sale.seller.clone(),
        charged: sale.amount.units().to_string(),
        amount: amount.units().to_string(),
        reason: reason.to_string(),
        refunded_by: match refunder {
            Refunder::Builder(_) => "owner".into(),
            Refunder::Admin => "admin".into(),
        },
        payment_method: sale.method,
        returned_to: match way {
            Way::Credit(_) => "credit",
            Way::Recorded => "recorded",
            Way::OnChain => "on_chain",
        }
        .into(),
        transaction: None,
        after_payout: paid_out.is_some(),
        refunded_at: crate::timestamp::now_rfc3339(),
        signature: Signature::unsigned(),
    };
    let within_balance = matches!(refunder, Refunder::Builder(_));
    let read = Read {
        sale: &sale,
        sale_bytes,
        paid_out,
    };
    match way {
        Way::OnChain => {
            // The checks a ledger write makes (the owner's balance), before any money moves.
            ledger_batch(parts, &refund, &read, within_balance).await?;
            on_chain::refund(parts, refund, read).await
        }
        Way::Credit(credit_id) => {
            let refund = signed(refund, &parts.signer);
            let batch = ledger_batch(parts, &refund, &read, within_balance).await?;
            credits::give_back(store, &credit_id, amount, |with| with.extend(batch.clone()))
                .await?;
            tell_seller(store, &sale, &refund).await;
            Ok((refund, true))
        }
        Way::Recorded => {
            let refund = signed(refund, &parts.signer);
            let batch = ledger_batch(parts, &refund, &read, within_balance).await?;
            store.apply(batch).await?;
            tell_seller(store, &sale, &refund).await;
            Ok((refund, true))
        }
    }
}

/// The ledger as a refund read it: the sale (and its bytes) and whether it was paid out.
struct Read<'a> {
    sale: &'a Sale,
    sale_bytes: Vec<u8>,
    paid_out: Option<Vec<u8>>,
}

fn signed(mut refund: Refund, signer: &ReceiptSigner) -> Refund {
    refund.signature = Signature::over(&refund, signer);
    refund
}

/// The refund's writes, conditioned on the ledger as `read` found it and on no refund being
/// there: the record, its receipt-log entry, the builder's debt if the sale was paid out
/// (refused beyond the builder's unpaid balance when `within_balance`).
async fn ledger_batch(
    parts: &Parts,
    refund: &Refund,
    read: &Read<'_>,
    within_balance: bool,
) -> Result<Batch, RefundError> {
    let receipt_id = &refund.receipt_id;
    let batch = Batch::new()
        .require_sale(receipt_id, Some(read.sale_bytes.clone()))
        .require_refund(receipt_id, None)
        .require_paid_out(receipt_id, read.paid_out.clone())
        .put_refund(refund.row()?);
    // An entry of its own in the receipt log, appended by the sequencer like a receipt.
    let mut batch = log::pending_refund(batch, receipt_id, log::entry_of(refund));
    let amount = Usd::from_units(refund.amount_units()?);
    if let (Some(_), Some(seller)) = (&read.paid_out, &read.sale.seller) {
        // Paid out already: the builder owes its share, from its balance.
        let balance = payouts::balance(parts.store.as_ref(), seller, parts.fee_bps).await?;
        let owed = owed(read.sale.amount, amount, parts.fee_bps);
        if within_balance && owed > balance.net() {
            return Err(RefundError::ExceedsBalance {
                owed,
                balance: balance.net(),
            });
        }
        batch = owe(
            bump_balance(batch, seller, balance.version),
            seller,
            receipt_id,
            owed,
        )?;
    }
    Ok(batch)
}

/// Tells the seller of a refund in its feed once the refund is stored. A crash between the two
/// loses the notice, never the refund (the refund is in the ledger and the receipt log).
async fn tell_seller(store: &dyn Store, sale: &Sale, refund: &Refund) {
    let Some(seller) = &sale.seller else {
        return;
    };
    let told = crate::events::record(
        store,
        seller,
        crate::events::EventKind::ReceiptRefunded,
        sale.endpoint_slug.as_deref(),
        serde_json::to_value(refund).unwrap_or_default(),
    )
    .await;
    if let Err(e) = told {
        tracing::error!(error = %e, receipt = %refund.receipt_id, "recording a refund's event failed");
    }
}

/// The developer credit that paid `sale`: named by the sale, or (sales written before it was)
/// the one grant whose masked id the receipt shows.
async fn credit_of(store: &dyn Store, sale: &Sale) -> Result<String, RefundError> {
    if let Some(id) = &sale.credit_id {
        return Ok(id.clone());
    }
    let unknown = RefundError::Unavailable("the developer credit that paid this call is not known");
    let receipt = crate::receipts::read(store, &sale.receipt_id).await?;
    let Some(payer) = receipt.and_then(|r| r.payer) else {
        return Err(unknown);
    };
    let matching: Vec<String> = credits::list(store)
        .await?
        .into_iter()
        .filter(|(grant, _)| grant.masked_id() == payer)
        .map(|(grant, _)| grant.credit_id)
        .collect();
    match <[String; 1]>::try_from(matching) {
        Ok([id]) => Ok(id),
        Err(_) => Err(unknown),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use time::OffsetDateTime;

    use super::*;
    use crate::store::builders::KeyAndBuilder;
    use crate::store::{
        BuilderDebts, BuilderEvents, BuilderPayoutSettings, BuilderRecords, Change, CreditListing,
        CreditRecords, EndpointLogs, EndpointRecords, EndpointRevisions, EndpointSecrets, Entry,
        EventPage, EventQuery, EventRow, HandlerData, HandlerSpace, HostedQuotes, LogRow, LogState,
        NonceClaims, PaidOutMarks, PaymentIds, PayoutPackets, PendingSettlements, QuoteRow,
        ReceiptLogRecords, ReceiptRecords, RefundClaims, RefundRecords, RolloutTallies, SaleSum,
        SalesLedger, SledStore, StoreResult, Tree,
    };

    /// A store whose batches land 30 ms late, so concurrent refunds all read the ledger before
    /// any of them writes: the race a refund's conditions must win.
    struct SlowBatches(SledStore);

    #[async_trait::async_trait]
    impl EndpointLogs for SlowBatches {
        async fn append_logs(&self, endpoint: &str, rows: &[LogRow], keep: u64) -> StoreResult<()> {
            self.0.append_logs(endpoint, rows, keep).await
        }
        async fn logs_before(
            &self,
            endpoint: &str,
            before: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<LogRow>> {
            self.0.logs_before(endpoint, before, limit).await
        }
        async fn delete_logs(&self, endpoint: &str) -> StoreResult<u64> {
            self.0.delete_logs(endpoint).await
        }
    }

    #[async_trait::async_trait]
    impl BuilderEvents for SlowBatches {
        async fn record_events(&self, events: &[(&str, EventRow)]) -> StoreResult<()> {
            self.0.record_events(events).await
        }
        async fn events_page(
            &self,
            builder: &str,
            query: &EventQuery<'_>,
        ) -> StoreResult<EventPage> {
            self.0.events_page(builder, query).await
        }
        async fn sweep_events(&self, before: &str) -> StoreResult<usize> {
            self.0.sweep_events(before).await
        }
    }

    #[async_trait::async_trait]
    impl HostedQuotes for SlowBatches {
        async fn save_quote(&self, quote: &QuoteRow) -> StoreResult<()> {
            self.0.save_quote(quote).await
        }
        async fn quote(&self, id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.quote(id).await
        }
        async fn sweep_quotes(&self, before_ms: u64, limit: usize) -> StoreResult<u64> {
            self.0.sweep_quotes(before_ms, limit).await
        }
    }

    #[async_trait::async_trait]
    impl SalesLedger for SlowBatches {
        async fn sale(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.sale(receipt_id).await
        }
        async fn sales_after(
            &self,
            seller: Option<&str>,
            after: &str,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.sales_after(seller, after, limit).await
        }
        async fn sale_sums(
            &self,
            seller: Option<&str>,
            since_ms: i64,
            unpaid_only: bool,
            fee_bps: u64,
        ) -> StoreResult<Option<Vec<SaleSum>>> {
            self.0
                .sale_sums(seller, since_ms, unpaid_only, fee_bps)
                .await
        }
        async fn upgrade_sales(&self) -> StoreResult<u64> {
            self.0.upgrade_sales().await
        }
    }

    #[async_trait::async_trait]
    impl ReceiptRecords for SlowBatches {
        async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.receipt(receipt_id).await
        }
        async fn receipt_proof(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.receipt_proof(receipt_id).await
        }
        async fn receipts_after(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.receipts_after(after, limit).await
        }
        async fn sweep_free_receipts(&self, before_ms: i64, limit: usize) -> StoreResult<u64> {
            self.0.sweep_free_receipts(before_ms, limit).await
        }
    }

    #[async_trait::async_trait]
    impl PayoutPackets for SlowBatches {
        async fn packet(&self, packet_id: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
            self.0.packet(packet_id).await
        }
        async fn packets_of(
            &self,
            builder: &str,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.packets_of(builder, after, limit).await
        }
    }

    #[async_trait::async_trait]
    impl NonceClaims for SlowBatches {
        async fn nonce(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.nonce(key).await
        }
        async fn open_nonces(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.open_nonces(after, limit).await
        }
        async fn upgrade_nonces(&self) -> StoreResult<u64> {
            self.0.upgrade_nonces().await
        }
    }

    #[async_trait::async_trait]
    impl PaymentIds for SlowBatches {
        async fn payment_id(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.payment_id(key).await
        }
    }

    #[async_trait::async_trait]
    impl PaidOutMarks for SlowBatches {
        async fn paid_out(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
            self.0.paid_out(receipt_ids).await
        }
    }

    #[async_trait::async_trait]
    impl PendingSettlements for SlowBatches {
        async fn pending_settlements(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.pending_settlements(after, limit).await
        }
        async fn pending_settlements_of(
            &self,
            receipt_ids: &[&str],
        ) -> StoreResult<Vec<Option<Vec<u8>>>> {
            self.0.pending_settlements_of(receipt_ids).await
        }
    }

    #[async_trait::async_trait]
    impl RefundClaims for SlowBatches {
        async fn refund_claim(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.refund_claim(receipt_id).await
        }
        async fn refund_claims(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.refund_claims(after, limit).await
        }
    }

    #[async_trait::async_trait]
    impl BuilderRecords for SlowBatches {
        async fn builder(&self, builder_id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.builder(builder_id).await
        }
        async fn builder_key(&self, key_sha256: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.builder_key(key_sha256).await
        }
        async fn builder_by_key(&self, key_sha256: &str) -> StoreResult<Option<KeyAndBuilder>> {
            self.0.builder_by_key(key_sha256).await
        }
    }

    #[async_trait::async_trait]
    impl EndpointRecords for SlowBatches {
        async fn endpoint(&self, slug: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.endpoint(slug).await
        }
        async fn endpoints(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.endpoints(after, limit).await
        }
        async fn slug_reservation(&self, slug: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.slug_reservation(slug).await
        }
        async fn slug_reservations(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.slug_reservations(after, limit).await
        }
        async fn owed_wipes(&self, limit: usize) -> StoreResult<Vec<String>> {
            self.0.owed_wipes(limit).await
        }
    }

    #[async_trait::async_trait]
    impl HandlerData for SlowBatches {
        async fn handler_entries(
            &self,
            space: HandlerSpace,
            endpoint_id: &str,
            keys: &[&str],
        ) -> StoreResult<Vec<Option<Vec<u8>>>> {
            self.0.handler_entries(space, endpoint_id, keys).await
        }
        async fn handler_entries_under(
            &self,
            space: HandlerSpace,
            endpoint_id: &str,
            prefix: &str,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            (self
                .0
                .handler_entries_under(space, endpoint_id, prefix, after, limit))
            .await
        }
        async fn handler_usage(
            &self,
            space: HandlerSpace,
            endpoint_id: &str,
        ) -> StoreResult<Option<Vec<u8>>> {
            self.0.handler_usage(space, endpoint_id).await
        }
        async fn builder_usage(
            &self,
            space: HandlerSpace,
            builder: &str,
        ) -> StoreResult<Option<Vec<u8>>> {
            self.0.builder_usage(space, builder).await
        }
    }

    #[async_trait::async_trait]
    impl EndpointSecrets for SlowBatches {
        async fn secrets(&self, owner: &str, limit: usize) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.secrets(owner, limit).await
        }
        async fn all_secrets(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.all_secrets(after, limit).await
        }
        async fn delete_secrets(&self, owner: &str) -> StoreResult<()> {
            self.0.delete_secrets(owner).await
        }
    }

    #[async_trait::async_trait]
    impl RolloutTallies for SlowBatches {
        async fn rollout_tallies(
            &self,
            endpoint_id: &str,
            rollout: &str,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.rollout_tallies(endpoint_id, rollout, limit).await
        }
        async fn delete_rollout_tallies(&self, endpoint_id: &str) -> StoreResult<()> {
            self.0.delete_rollout_tallies(endpoint_id).await
        }
    }

    #[async_trait::async_trait]
    impl BuilderPayoutSettings for SlowBatches {
        async fn payout_settings(&self, builder: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.payout_settings(builder).await
        }
    }

    #[async_trait::async_trait]
    impl EndpointRevisions for SlowBatches {
        async fn revision(&self, endpoint_id: &str, number: u64) -> StoreResult<Option<Vec<u8>>> {
            self.0.revision(endpoint_id, number).await
        }
        async fn newest_revisions(
            &self,
            endpoint_id: &str,
            limit: usize,
        ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
            self.0.newest_revisions(endpoint_id, limit).await
        }
        async fn delete_revisions(&self, endpoint_id: &str) -> StoreResult<()> {
            self.0.delete_revisions(endpoint_id).await
        }
    }

    #[async_trait::async_trait]
    impl BuilderDebts for SlowBatches {
        async fn debts(
            &self,
            builder: &str,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.debts(builder, after, limit).await
        }
        async fn payout_version(&self, builder: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.payout_version(builder).await
        }
    }

    #[async_trait::async_trait]
    impl CreditRecords for SlowBatches {
        async fn credit_by_token(&self, digest: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
            self.0.credit_by_token(digest).await
        }
        async fn credit_balance(&self, credit_id: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.credit_balance(credit_id).await
        }
        async fn credits(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<CreditListing>> {
            self.0.credits(after, limit).await
        }
        async fn credit_holds(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.credit_holds(after, limit).await
        }
    }

    #[async_trait::async_trait]
    impl RefundRecords for SlowBatches {
        async fn refunds(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
            self.0.refunds(receipt_ids).await
        }
    }

    #[async_trait::async_trait]
    impl ReceiptLogRecords for SlowBatches {
        async fn log_pending(
            &self,
            after: Option<&str>,
            limit: usize,
        ) -> StoreResult<Vec<(String, Vec<u8>)>> {
            self.0.log_pending(after, limit).await
        }
        async fn log_pending_entry(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
            self.0.log_pending_entry(name).await
        }
        async fn log_leaves(&self, names: &[&str]) -> StoreResult<Vec<Option<u64>>> {
            self.0.log_leaves(names).await
        }
        async fn log_entries(&self, first: u64, count: u64) -> StoreResult<Vec<(u64, Vec<u8>)>> {
            self.0.log_entries(first, count).await
        }
        async fn log_nodes(
            &self,
            level: u8,
            first: u64,
            count: u64,
        ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
            self.0.log_nodes(level, first, count).await
        }
        async fn log_state(&self, state: LogState) -> StoreResult<Option<Vec<u8>>> {
            self.0.log_state(state).await
        }
    }

    #[async_trait::async_trait]
    impl Store for SlowBatches {
        async fn get(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
            self.0.get(tree, key).await
        }
        async fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
            self.0.put(tree, key, value).await
        }
        async fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool> {
            self.0.delete(tree, key).await
        }
        async fn scan_prefix(
            &self,
            tree: Tree,
            prefix: &[u8],
            after: Option<&[u8]>,
            limit: usize,
        ) -> StoreResult<Vec<Entry>> {
            self.0.scan_prefix(tree, prefix, after, limit).await
        }
        async fn scan_prefix_rev(
            &self,
            tree: Tree,
            prefix: &[u8],
            before: Option<&[u8]>,
            limit: usize,
        ) -> StoreResult<Vec<Entry>> {
            self.0.scan_prefix_rev(tree, prefix, before, limit).await
        }
        async fn apply(&self, batch: Batch) -> StoreResult<()> {
            tokio::time::sleep(Duration::from_millis(30)).await;
            self.0.apply(batch).await
        }
        fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
            self.0.changes()
        }
        async fn close(&self) -> StoreResult<()> {
            self.0.close().await
        }
    }

    #[tokio::test]
    async fn concurrent_refunds_of_one_receipt_return_the_money_once() {
        let store: Arc<dyn Store> = Arc::new(SlowBatches(SledStore::temporary().unwrap()));
        let signer = ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap();
        let parts = Parts {
            store: store.clone(),
            signer: Arc::new(signer),
            facilitator: Arc::new(crate::x402::facilitator::local::LocalFacilitator::new(
                Vec::new(),
                None,
            )),
            fee_bps: 1000,
        };
        let store = store.as_ref();
        let (grant, _) = credits::issue(store, Usd::from_units(10_000), None, None)
            .await
            .unwrap();
        let sale = Sale {
            receipt_id: "rcpt_1".into(),
            endpoint_slug: Some("tool".into()),
            seller: Some("b".into()),
            amount: Usd::from_units(1500),
            method: PaymentMethod::DeveloperCredit,
            at: OffsetDateTime::now_utc(),
            collection: Some(Collection::Collected),
            credit_id: Some(grant.credit_id.clone()),
            refunded: Usd::ZERO,
        };
        store
            .apply(crate::revenue::record(Batch::new(), &sale).unwrap())
            .await
            .unwrap();
        let owner = Refunder::Builder("b".into());
        let requests: Vec<RefundRequest> = (0..8)
            .map(|i| RefundRequest {
                amount_usd: Some(Usd::from_units(500 + i)),
                reason: format!("attempt {i}"),
            })
            .collect();
        let answers = futures::future::join_all(
            (requests.iter()).map(|r| refund(&parts, "rcpt_1", r, &owner)),
        )
        .await;
        let made: Vec<&Refund> = answers
            .iter()
            .filter_map(|a| a.as_ref().ok())
            .map(|(r, _)| r)
            .collect();
        assert_eq!(made.len(), 1, "{answers:?}");
        assert!(answers
            .iter()
            .filter(|a| a.is_err())
            .all(|a| matches!(a, Err(RefundError::AlreadyRefunded(_)))));
        let back = made[0].amount_units().unwrap();
        assert_eq!(
            credits::balance(store, &grant.credit_id).await.unwrap(),
            Usd::from_units(10_000 + back)
        );
    }
}
