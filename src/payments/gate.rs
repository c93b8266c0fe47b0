//! The seam between payment and paid work.
//!
//! ```text
//! let authorized = gate(parts, charge, &headers).await?;   // 402 / 400, or a claim on the payment
//! let result = handler().await?;                          // on error `authorized` drops: nothing charged
//! let settled = authorized.settle(parts, &request, &result).await?;  // charge, receipt, ledger
//! ```
//!
//! Dropping an [`Authorized`] without settling (handler error, cancelled request, timeout)
//! releases the nonce claim, so the unspent authorization can be retried; settling makes the
//! claim permanent in the same atomic batch as the receipt and the ledger entry. A settlement
//! that fails after the handler ran burns the nonce instead (the work was done: the same
//! authorization must not buy it again for free), and the answer says the authorization is
//! spent. Once begun, an
//! x402 settlement runs to its end in a task of its own, because it may move money on-chain:
//! a request cancelled meanwhile must not leave a transfer without its receipt.
//!
//! The claim is a [`ClaimRecord`] (when, which node, and the sale it would settle); just
//! before the payment leaves our hands the settlement turns it `settling` with the receipt id
//! and the transaction hash, so that if this process dies, [`recovery`](super::recovery) can
//! release the claim or record the sale. A settlement broadcast but not mined in time commits
//! a `pending` receipt and a pending settlement under the receipt id
//! ([`crate::store::pending_settlements`]) that the reconciler follows until the transfer is
//! mined or dropped.

use std::sync::Arc;

use alloy_primitives::B256;
use axum::http::{HeaderName, HeaderValue};
use serde_json::Value;
use time::OffsetDateTime;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::bazaar::{self, Transport, BAZAAR};
use super::credits::{self, Hold};
use super::metering::Bill;
use super::nonces::{self, ClaimRecord, ClaimState, NonceClaim, SaleDraft, SettlingNote, Stored};
use super::offer_receipt;
use super::offers::Offers;
use super::payment_ids::{self, Answer, Lookup, Reservation};
use super::recovery::PendingSettlement;
use super::{GateError, Tender};
use crate::catalog::{Endpoint, Metering, Owner};
use crate::config::PaymentConfig;
use crate::money::Usd;
use crate::receipts::batch::ReceiptBatches;
use crate::receipts::log::{entry_of, Inclusion, ReceiptLog};
use crate::receipts::{
    sha256_hex, store_receipt, store_receipt_bare, DigestSalt, PaymentMethod, Receipt,
    ReceiptSettlement, ReceiptSigner,
};
use crate::revenue::{self, Collection, Sale};
use crate::store::{Batch, Store, StoreError};
use crate::urls::Urls;
use crate::x402::facilitator::{Facilitator, SettleJournal, Settlement, SettlementStatus};
use crate::x402::header::{self, PaymentPayload, SettlementResponse};
use crate::x402::requirements::{Offer, ResourceInfo};
use crate::x402::schemes::Proof;
use crate::x402::verify::Verified;
use crate::x402::{PaymentError, Reason};
use sandbox::Usage;

/// The parts of the service the gate works with, borrowed for one call.
pub struct Parts<'a> {
    pub store: &'a Arc<dyn Store>,
    /// A free call's receipt is stored with its batch's proof, one write for the batch.
    pub receipt_batches: &'a ReceiptBatches,
    /// A paid call's records are stored with its receipt's leaf, one write.
    pub receipt_log: &'a ReceiptLog,
    pub facilitator: &'a Arc<dyn Facilitator>,
    pub receipt_signer: &'a Arc<ReceiptSigner>,
    pub urls: &'a Urls,
    /// This node's id, written into each nonce claim (recovery tells orphans by it).
    pub node_id: &'a str,
}

/// What is being bought.
#[derive(Clone, Debug)]
pub struct Charge {
    /// Shared: an endpoint's offer is built once per generation ([`Offers`]).
    pub offer: Arc<Offer>,
    /// `invocation` or `builder_registration`.
    pub purpose: &'static str,
    pub endpoint_slug: Option<String>,
    /// The builder credited with the sale, if any.
    pub seller: Option<String>,
    /// How a metered endpoint charges; `None` for a fixed price (the offer's price, all of it).
    pub metering: Option<Metering>,
}

/// A payment accepted but not yet settled.
pub struct Authorized {
    charge: Charge,
    method: Method,
}

enum Method {
    Free,
    Credit(Hold),
    X402(Box<X402Payment>),
    /// The payment's `payment-identifier` id answered before: that answer, nothing to run.
    Replay(Box<Answer>),
}

struct X402Payment {
    payment: Arc<PaymentPayload>,
    verified: Verified,
    claim: ClaimGuard,
    /// The `payment-identifier` id this call reserved, turned `done` with the receipt.
    payment_id: Option<Reservation>,
}

/// What the handler answered: the receipt is issued for `result`, and a payment with a
/// `payment-identifier` id keeps all of it as the call's first answer.
pub struct Served<'a> {
    pub status: u16,
    pub result: &'a Value,
    pub headers: &'a [(HeaderName, HeaderValue)],
    /// What the handler reported the call cost (`ctx.charge`): what a metered call is billed.
    pub usage: Option<&'a Usage>,
}

/// Releases the nonce claim when dropped unless it was committed or released already.
struct ClaimGuard {
    claim: NonceClaim,
    store: Arc<dyn Store>,
    /// Committed with a receipt, or released: nothing left to do on drop.
    done: bool,
}

impl ClaimGuard {
    async fn release(&mut self) {
        self.claim.release(self.store.as_ref()).await;
        self.done = true;
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // Drop cannot wait: the release runs as a task of its own. Were the process to end
        // first, the claim would be left pending; start-up recovery releases such claims.
        let (claim, store) = (self.claim.clone(), self.store.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { claim.release(store.as_ref()).await });
            }
            Err(_) => {
                tracing::error!("a nonce claim was dropped outside the runtime; left pending")
            }
        }
    }
}

/// A settled call: its signed receipt and the headers that report the settlement.
pub struct Settled {
    pub receipt: Receipt,
    /// The salt of the receipt's digests, for the caller alone (hex).
    pub salt: String,
    /// A free call's receipt's proof, its place in its signed batch; `None` for a paid one:
    /// stored with its entry pending in the receipt log, to be appended.
    pub receipt_log: Option<Inclusion>,
    /// The x402 settlement response (x402 payments only), also in `headers`.
    pub settlement: Option<SettlementResponse>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// Checks what pays for `charge`: nothing for a free charge, a developer credit, or an x402
/// payment. Unpaid → 402 with requirements; malformed payment → 400; refused → 402 with the
/// x402 reason. `request` is the call's input: with a `payment-identifier` id (when the offer
/// declares the extension) the id is bound to it, and an id that answered before with this
/// payment and input is [replayed](Authorized::replayed).
pub async fn gate(
    parts: &Parts<'_>,
    charge: Charge,
    tender: &Tender,
    request: &Value,
) -> Result<Authorized, GateError> {
    if charge.offer.price.is_zero() {
        return Ok(Authorized {
            charge,
            method: Method::Free,
        });
    }
    let store = parts.store.as_ref();
    let payment = match tender {
        Tender::Nothing => return Err(GateError::Unpaid(charge.offer)),
        Tender::Malformed(message) => {
            return Err(GateError::payment(
                &charge.offer,
                PaymentError::Malformed(message.clone()),
            ))
        }
        Tender::X402(payment) => payment.clone(),
        Tender::Credit(token) => {
            // Reserved, not just checked: concurrent calls cannot all run on one call's credit.
            let hold = credits::reserve(parts.store.clone(), token, charge.offer.price)
                .await
                .map_err(|e| GateError::payment(&charge.offer, e))?;
            return Ok(Authorized {
                charge,
                method: Method::Credit(hold),
            });
        }
    };
    let refuse = |e: PaymentError| GateError::payment(&charge.offer, e);
    if let Some(named) = payment
        .resource_url
        .as_deref()
        .filter(|url| !same_resource(url, &charge.offer.resource.url))
    {
        // The signature covers the transfer, not the resource: a payment made out for another
        // endpoint of the same price would otherwise buy this one.
        return Err(refuse(PaymentError::refused(
            Reason::InvalidPayload,
            format!(
                "the payment is for {}, not for {}",
                named.chars().take(256).collect::<String>(),
                charge.offer.resource.url
            ),
        )));
    }
    let id_use = payment
        .payment_id
        .as_deref()
        .filter(|_| charge.offer.declares(payment_ids::PAYMENT_IDENTIFIER))
        .map(|id| {
            payment_ids::Use::new(
                payment.payload.claimed_payer(),
                id,
                sha256_hex(&payment.payload.to_value()),
                sha256_hex(&serde_json::json!({
                    "purpose": charge.purpose,
                    "endpoint": charge.endpoint_slug,
                    "input": request,
                })),
            )
        });
    // Before verification: a replay answers even once its authorization has expired (a
    // replay presents the very payment that was verified when the id was first used).
    let previous = match &id_use {
        None => None,
        Some(id_use) => match id_use.lookup(store).await {
            Ok(Lookup::Replay(answer)) => return Ok(Authorized::replay(charge, answer)),
            Ok(Lookup::Free { previous }) => Some(previous),
            Err(refusal) => {
                // The id is held by another payment or request of this payer (409), or still
                // running. Said only to whoever can sign as the payer: a forged payment gets
                // the refusal any bad signature gets, so ids cannot be probed.
                parts
                    .facilitator
                    .verify(&payment, &charge.offer)
                    .await
                    .map_err(refuse)?;
                return Err(refusal);
            }
        },
    };
    let verified = parts
        .facilitator
        .verify(&payment, &charge.offer)
        .await
        .map_err(refuse)?;
    let key = nonces::key(
        verified.network.chain_id,
        &verified.nonce_space(),
        verified.payer(),
        verified.nonce(),
    );
    let record = ClaimRecord {
        claim_id: uuid::Uuid::new_v4().simple().to_string(),
        claimed_at_ms: nonces::now_ms(),
        node: parts.node_id.to_string(),
        state: ClaimState::Claimed,
        sale: SaleDraft {
            purpose: charge.purpose.to_string(),
            endpoint_slug: charge.endpoint_slug.clone(),
            seller: charge.seller.clone(),
            amount_units: charge.offer.price.units(),
            payer: verified.payer().to_string(),
            network: verified.network.caip2.clone(),
            chain_id: verified.network.chain_id,
            asset: verified.requirement.asset.clone(),
            pay_to: verified.requirement.pay_to.clone(),
            nonce: verified.nonce(),
            permit2: matches!(verified.proof, Proof::Permit2(_)),
        },
        settling: None,
    };
    // The id is reserved in the claim's own write: of concurrent calls with one id and
    // payment, the one that claims the nonce holds the id.
    let (also, payment_id) = match (&id_use, previous) {
        (Some(id_use), Some(previous)) => {
            let (batch, reservation) = id_use.reserve(previous, &key, &record.claim_id)?;
            (batch, Some(reservation))
        }
        _ => (Batch::new(), None),
    };
    let claim = match nonces::claim(store, key, record, also).await {
        Ok(claim) => claim,
        Err(e) => {
            // With an id: the same payment ran (or runs) under it, so replay its answer or
            // say it is in progress rather than call the payment used; another call took the
            // id since the lookup: the same.
            if let Some(id_use) = &id_use {
                match id_use.lookup(store).await? {
                    Lookup::Replay(answer) => return Ok(Authorized::replay(charge, answer)),
                    Lookup::Free { .. }
                        if matches!(e, PaymentError::Store(StoreError::ConditionFailed(_))) =>
                    {
                        return Err(GateError::IdInProgress);
                    }
                    Lookup::Free { .. } => {}
                }
            }
            return Err(refuse(e));
        }
    };
    let mut claim = ClaimGuard {
        claim,
        store: parts.store.clone(),
        done: false,
    };
    // After the claim, so a replay is refused as a used nonce without asking anyone; before
    // the handler, so a payment that cannot settle buys no work. The claim is released (and
    // the release awaited) before the refusal leaves: the same authorization may come back
    // once the payer is funded.
    if let Err(e) = parts.facilitator.precheck(&verified).await {
        claim.release().await;
        return Err(refuse(e));
    }
    Ok(Authorized {
        method: Method::X402(Box::new(X402Payment {
            payment,
            verified,
            claim,
            payment_id,
        })),
        charge,
    })
}

impl Authorized {
    /// Nothing offered and nothing to settle: a test call by the endpoint's owner or the admin
    /// (`X-Toolhost-Test: 1`), which the pipeline runs without a receipt.
    pub fn unpaid(charge: Charge) -> Self {
        Authorized {
            charge,
            method: Method::Free,
        }
    }

    fn replay(charge: Charge, answer: Box<Answer>) -> Self {
        Authorized {
            charge,
            method: Method::Replay(answer),
        }
    }

    /// The first answer of a call whose `payment-identifier` id and payment came back: the
    /// caller answers with it and runs nothing (nothing is charged).
    pub fn replayed(&self) -> Option<&Answer> {
        match &self.method {
            Method::Replay(answer) => Some(answer),
            _ => None,
        }
    }

    /// What a handler sees of the payment as `req.payment`: who paid how much and how, never the
    /// proof itself. `null` for free calls.
    pub fn summary(&self) -> Value {
        let price = self.charge.offer.price;
        let (method, payer, network) = match &self.method {
            Method::Free | Method::Replay(_) => return Value::Null,
            Method::Credit(hold) => ("developer_credit", hold.grant().masked_id(), None),
            Method::X402(x402) => (
                "x402",
                x402.verified.payer().to_string(),
                Some(x402.verified.network.caip2.clone()),
            ),
        };
        let mut summary = serde_json::json!({
            "method": method,
            "payer": payer,
            "priceUsd": price.to_string(),
            "amount": price.units().to_string(),
            "network": network,
            "settled": false,
        });
        if let Some(metering) = &self.charge.metering {
            // `priceUsd` is then the most the call may charge with `ctx.charge`.
            summary["metered"] = serde_json::json!({
                "maxUsd": price.to_string(),
                "minimumUsd": metering.minimum_usd.to_string(),
                "unit": metering.unit,
            });
        }
        summary
    }

    /// Gives an unspent payment back after a failed call, before the caller gets the answer, so
    /// the same authorization can pay for a retry at once. (Dropping does the same, later, for
    /// calls that end without reaching here.)
    pub async fn release(self) {
        match self.method {
            Method::X402(mut x402) => x402.claim.release().await,
            Method::Credit(hold) => hold.release().await,
            Method::Free | Method::Replay(_) => {}
        }
    }

    /// Charges for a successful result and issues its receipt. `request` and `served.result`
    /// are digested; all of `served` is kept only as the first answer of a payment with a
    /// `payment-identifier` id.
    pub async fn settle(
        self,
        parts: &Parts<'_>,
        request: &Value,
        served: Served<'_>,
    ) -> Result<Settled, GateError> {
        let Authorized { charge, method } = self;
        // What the call is charged: the price, or a metered call's bill.
        let bill = charge
            .metering
            .as_ref()
            .map(|metering| Bill::of(metering, charge.offer.price, served.usage));
        let price = bill
            .as_ref()
            .map_or(charge.offer.price, |bill| bill.charged);
        let salt = DigestSalt::random();
        let mut receipt = blank_receipt(parts, &charge, request, served.result, &salt);
        if let (Some(bill), Some(metering)) = (&bill, &charge.metering) {
            receipt.price_usd = price.to_string();
            receipt.amount = price.units().to_string();
            receipt.metering = Some(bill.receipt(metering));
        }
        let salt = salt.hex();
        // From here the payer is owed this receipt: the request deadline no longer cuts the
        // answer (the settlement's own timeouts bound it).
        super::settling::begins(&receipt.receipt_id, &receipt.url);
        let sale = |receipt: &Receipt, method, collection| Sale {
            receipt_id: receipt.receipt_id.clone(),
            endpoint_slug: charge.endpoint_slug.clone(),
            seller: charge.seller.clone(),
            amount: price,
            method,
            at: OffsetDateTime::now_utc(),
            collection: Some(collection),
            credit_id: None,
            refunded: Usd::ZERO,
        };
        match method {
            Method::Replay(_) => Err(GateError::Internal(
                "a replayed payment-identifier answer cannot be settled again",
            )),
            Method::Free => {
                // Not signed by itself: its batch's signed note proves it, one signature for
                // the free calls stored at once.
                let inclusion = parts.receipt_batches.commit(&receipt).await?;
                Ok(Settled {
                    receipt,
                    salt,
                    receipt_log: Some(inclusion),
                    settlement: None,
                    headers: Vec::new(),
                })
            }
            Method::Credit(hold) => {
                receipt.payment_method = PaymentMethod::DeveloperCredit;
                receipt.payer = Some(hold.grant().masked_id());
                // A metered call that used nothing was charged nothing.
                receipt.charged = !price.is_zero();
                receipt.settlement.status = "debited".into();
                parts.receipt_signer.sign(&mut receipt);
                let writes = revenue::record(
                    store_receipt(Batch::new(), &receipt)?,
                    // The platform holds the credit's value: a debit is collected money.
                    &Sale {
                        credit_id: Some(hold.grant().credit_id.clone()),
                        ..sale(
                            &receipt,
                            PaymentMethod::DeveloperCredit,
                            Collection::Collected,
                        )
                    },
                )?;
                hold.settle(price, writes)
                    .await
                    .map_err(|e| GateError::payment(&charge.offer, e))?;
                Ok(Settled {
                    receipt,
                    salt,
                    receipt_log: None,
                    settlement: None,
                    headers: Vec::new(),
                })
            }
            Method::X402(x402) => {
                receipt.payment_method = PaymentMethod::X402;
                receipt.charged = !price.is_zero();
                // Where the money stands is known once settled; `run` sets it.
                let sale = sale(&receipt, PaymentMethod::X402, Collection::Recorded);
                let job = X402Settlement {
                    amount: price,
                    facilitator: parts.facilitator.clone(),
                    store: parts.store.clone(),
                    log: parts.receipt_log.clone(),
                    signer: parts.receipt_signer.clone(),
                    offer: charge.offer,
                    receipt,
                    salt,
                    sale,
                    answer: x402.payment_id.as_ref().map(|_| Handed {
                        status: served.status,
                        result: served.result.clone(),
                        headers: header_strings(served.headers),
                    }),
                    x402: *x402,
                };
                // A task of its own, so a cancelled request (client gone, request deadline) cannot
                // stop it between moving the money and recording it.
                tokio::spawn(job.run())
                    .await
                    .map_err(|_| GateError::Internal("the settlement task failed"))?
            }
        }
    }
}

/// Settling an x402 payment and recording it: everything it needs, owned.
struct X402Settlement {
    /// What is settled: the price, or a metered call's bill.
    amount: Usd,
    facilitator: Arc<dyn Facilitator>,
    store: Arc<dyn Store>,
    log: ReceiptLog,
    signer: Arc<ReceiptSigner>,
    offer: Arc<Offer>,
    /// The receipt so far; the settlement fills in the rest.
    receipt: Receipt,
    salt: String,
    sale: Sale,
    x402: X402Payment,
    /// What the handler answered, kept when the payment has a `payment-identifier` id.
    answer: Option<Handed>,
}

/// The handler's part of a first answer (the settlement adds the receipt and its headers).
struct Handed {
    status: u16,
    result: Value,
    headers: Vec<(String, String)>,
}

fn header_strings(headers: &[(HeaderName, HeaderValue)]) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect()
}

impl X402Settlement {
    /// Settles through the facilitator, then writes receipt, sale and spent nonce in one batch,
    /// the batch that appends the receipt to the receipt log.
    ///
    /// The handler already ran, so the claim is never released from here: when settlement
    /// fails, the nonce is burned (`failed/{receiptId}`) and the answer says the authorization
    /// is spent, so replaying it cannot run the handler again for free; once settlement
    /// succeeded, a failure to record it leaves the claim to recovery (the money may have moved).
    async fn run(self) -> Result<Settled, GateError> {
        let X402Settlement {
            amount,
            facilitator,
            store,
            log,
            signer,
            offer,
            mut receipt,
            salt,
            mut sale,
            x402,
            answer,
        } = self;
        let X402Payment {
            payment,
            verified,
            mut claim,
            payment_id,
        } = x402;
        let journal = ClaimJournal {
            store: store.as_ref(),
            claim: &claim.claim,
            receipt_id: receipt.receipt_id.clone(),
            request_sha256: receipt.request_sha256.clone(),
            result_sha256: receipt.result_sha256.clone(),
            x402_version: payment.version.number(),
            amount_units: amount.units(),
        };
        let settled = facilitator
            .settle(&payment, &offer, &verified, amount, &journal)
            .await;
        // Whatever happens next, the guard must not hand the authorization back.
        claim.done = true;
        let settlement: Settlement = match settled {
            Ok(settlement) => settlement,
            Err(error) => {
                match claim.claim.burn(store.as_ref(), &receipt.receipt_id).await {
                    // Not ours any more: recovery resolved it meanwhile.
                    Ok(()) | Err(StoreError::ConditionFailed(_)) => {}
                    Err(e) => tracing::error!(
                        error = %e,
                        "could not burn the nonce of a failed settlement; the claim is left to recovery"
                    ),
                }
                tracing::warn!(
                    receipt = %receipt.receipt_id,
                    error = %error,
                    "settlement failed after the handler ran; the authorization is burned"
                );
                return Err(spent(&offer, error));
            }
        };
        receipt.payer = Some(verified.payer().to_string());
        receipt.x402_version = Some(payment.version.number());
        receipt.asset = Some(verified.requirement.asset.clone());
        receipt.network = Some(verified.network.caip2.clone());
        receipt.settlement = ReceiptSettlement {
            status: settlement.status.as_str().into(),
            on_chain: settlement.status.on_chain(),
            transaction: settlement.transaction.clone(),
            facilitator: Some(settlement.facilitator.into()),
            collected: Some(settlement.status.on_chain()),
        };
        signer.sign(&mut receipt);
        sale.collection = Some(match settlement.status {
            SettlementStatus::Settled => Collection::Collected,
            SettlementStatus::Recorded => Collection::Recorded,
            SettlementStatus::Pending => Collection::Pending,
        });
        // The receipt's canonical JSON, once: its row and its leaf.
        let entry = entry_of(&receipt);
        let mut batch = revenue::record(
            store_receipt_bare(Batch::new(), &receipt, entry.clone())?,
            &sale,
        )?;
        if settlement.status == SettlementStatus::Pending {
            let pending = PendingSettlement {
                receipt_id: receipt.receipt_id.clone(),
                transaction: settlement.transaction.clone().unwrap_or_default(),
                asset: verified.requirement.asset.clone(),
                payer: verified.payer().to_string(),
                pay_to: verified.requirement.pay_to.clone(),
                amount_units: amount.units(),
                nonce: verified.nonce(),
                since_ms: nonces::now_ms(),
                permit2: matches!(verified.proof, Proof::Permit2(_)),
            };
            batch = pending.index(batch)?;
        }
        let extensions = (payment.version == header::X402Version::V2).then(|| {
            let receipt = offer_receipt::extension(
                &signer,
                &offer.resource.url,
                verified.payer(),
                &verified.network.caip2,
            );
            // Moved in: `json!` would copy the extension (`to_value` of it) once more.
            Value::Object(serde_json::Map::from_iter([(
                offer_receipt::OFFER_RECEIPT.to_string(),
                receipt,
            )]))
        });
        let response = SettlementResponse {
            success: true,
            transaction: settlement.transaction.clone().unwrap_or_default(),
            network: match payment.version {
                header::X402Version::V2 => verified.network.caip2.clone(),
                header::X402Version::V1 => verified.network.v1_name.clone(),
            },
            payer: verified.payer().to_string(),
            extensions,
        };
        let settlement_headers: Vec<_> = header::response_header(payment.version, &response)
            .into_iter()
            .collect();
        if let (Some(reservation), Some(handed)) = (&payment_id, answer) {
            let mut headers = handed.headers;
            headers.extend(header_strings(&settlement_headers));
            let first = Answer {
                status: handed.status,
                result: handed.result,
                receipt: receipt.clone(),
                salt: Some(salt.clone()),
                payment_response: Some(response.clone()),
                headers,
            };
            batch = reservation.done(batch, first)?;
        }
        let batch = claim.claim.commit(batch, &receipt.receipt_id);
        // Stored with the receipt's leaf in the log: one durable write.
        let receipt_log = match log.commit(batch, &receipt, entry).await {
            Ok(place) => place,
            Err(StoreError::ConditionFailed(_)) => {
                // Recovery on another node may have found the transfer on-chain and recorded
                // this very receipt (it carries the id from the `settling` note): serve that.
                match claim.claim.current(store.as_ref()).await? {
                    Some(Stored::Spent(id)) if id == receipt.receipt_id => {
                        receipt = crate::receipts::read(store.as_ref(), &id)
                            .await?
                            .ok_or(GateError::Internal("recovered receipt missing"))?;
                        None
                    }
                    _ => return Err(GateError::Internal("nonce claim lost before settlement")),
                }
            }
            Err(other) => return Err(other.into()),
        };
        Ok(Settled {
            receipt,
            salt,
            receipt_log,
            headers: settlement_headers,
            settlement: Some(response),
        })
    }
}

/// The answer to a settlement that failed after the handler ran: the refusal (402 with the
/// x402 reason, or 502 `facilitator_unavailable`), saying that the authorization is spent.
fn spent(offer: &Arc<Offer>, error: PaymentError) -> GateError {
    const SPENT: &str = "; the handler already ran, so this authorization is now spent here \
        (sending it again is refused as a used nonce): sign a new one to call again";
    GateError::payment(
        offer,
        match error {
            PaymentError::Refused { reason, message } => PaymentError::Refused {
                reason,
                message: format!("{message}{SPENT}"),
            },
            PaymentError::Facilitator(message) => {
                PaymentError::Facilitator(format!("{message}{SPENT}"))
            }
            other => other,
        },
    )
}

/// Turns the claim `settling` with what recovery needs, just before the payment leaves.
struct ClaimJournal<'a> {
    store: &'a dyn Store,
    claim: &'a NonceClaim,
    receipt_id: String,
    request_sha256: String,
    result_sha256: String,
    x402_version: u8,
    /// What the settlement moves (a metered call's bill, or the price).
    amount_units: u64,
}

impl SettleJournal for ClaimJournal<'_> {
    fn before_submit(&self, transaction: Option<B256>) -> BoxFuture<'_, Result<(), PaymentError>> {
        async move {
            let note = SettlingNote {
                transaction: transaction.map(|t| t.to_string()),
                receipt_id: self.receipt_id.clone(),
                request_sha256: self.request_sha256.clone(),
                result_sha256: self.result_sha256.clone(),
                x402_version: self.x402_version,
                marked_at_ms: nonces::now_ms(),
                amount_units: Some(self.amount_units),
            };
            self.claim.mark_settling(self.store, note).await
        }
        .boxed()
    }
}

/// The receipt of a free call; `settle` fills in how it was paid.
/// A new receipt of `charge` whose digests of `request` and `result` are salted with `salt`.
fn blank_receipt(
    parts: &Parts<'_>,
    charge: &Charge,
    request: &Value,
    result: &Value,
    salt: &DigestSalt,
) -> Receipt {
    let receipt_id = format!("rcpt_{}", uuid::Uuid::now_v7().simple());
    Receipt {
        url: parts.urls.receipt(&receipt_id),
        receipt_id,
        schema: crate::receipts::RECEIPT_SCHEMA.into(),
        purpose: charge.purpose.into(),
        endpoint_slug: charge.endpoint_slug.clone(),
        price_usd: charge.offer.price.to_string(),
        amount: charge.offer.price.units().to_string(),
        asset: None,
        network: None,
        payer: None,
        payment_method: PaymentMethod::Free,
        x402_version: None,
        charged: false,
        settlement: ReceiptSettlement::not_applicable(),
        request_sha256: salt.digest(request),
        result_sha256: salt.digest(result),
        issued_at: crate::timestamp::now_rfc3339(),
        metering: None,
        signature: None,
    }
}

/// The key of the extension of a paid endpoint's 402 that names its owner: informational,
/// `{info: {kind, id, name}}`, for agents to pin whom they pay (clients ignore keys they do
/// not speak).
const OWNER: &str = "toolhost/owner";

/// The key of the extension of a metered endpoint's 402 that says how it charges,
/// informational: `{info: {maxUsd, minimumUsd, unitPriceUsd, unit}}` (the `upto` requirement's
/// `amount` is the maximum).
const METERING: &str = "toolhost/metering";

/// What calling `endpoint` costs, as an x402 offer to `pay_to` declaring the extensions spoken
/// here (`bazaar` for `transport`, `payment-identifier`), and who the sale is for. The offer
/// is built once per endpoint generation and shared ([`Offers`]).
pub fn charge_for(
    offers: &Offers,
    seller: &Seller<'_>,
    endpoint: &Endpoint,
    transport: Transport,
) -> Charge {
    Charge {
        offer: offers.get(endpoint, transport, seller.facilitator.epoch(), || {
            offer_for(seller, endpoint, transport)
        }),
        purpose: "invocation",
        endpoint_slug: Some(endpoint.slug.clone()),
        seller: match &endpoint.owner {
            Owner::Builder(id) => Some(id.clone()),
            Owner::System | Owner::Admin => None,
        },
        metering: endpoint.metering.clone(),
    }
}

/// What every offer of this service is made from: the operator's payment settings, the
/// receiving address, the public URLs, and the facilitator (which names who settles `upto`).
pub struct Seller<'a> {
    pub config: &'a PaymentConfig,
    pub pay_to: &'a str,
    pub urls: &'a Urls,
    pub facilitator: &'a dyn Facilitator,
}

/// Whether a payment's `resource.url` names the resource `offered`: the same path, whatever
/// origin the client reached the 402 through (the base URL may change across a restart, and a
/// retried payment must still pay for the endpoint it was made out for).
fn same_resource(named: &str, offered: &str) -> bool {
    // A client pays for the URL our offer named, so the same text is the common case; only
    // a different spelling is parsed.
    if named == offered {
        return true;
    }
    let path = |text: &str| url::Url::parse(text).ok().map(|url| url.path().to_owned());
    path(named).is_some_and(|named| Some(named) == path(offered))
}

/// `endpoint`'s offer as [`charge_for`] describes it, built from the endpoint's record.
fn offer_for(seller: &Seller<'_>, endpoint: &Endpoint, transport: Transport) -> Offer {
    let Seller {
        config,
        pay_to,
        urls,
        facilitator,
    } = seller;
    // The description is what discovery (bazaar) indexes the resource by: the endpoint's own,
    // or its title when it has none.
    let description = match endpoint.description.trim() {
        "" => endpoint.title.clone(),
        text => text.to_string(),
    };
    let resource = ResourceInfo {
        url: urls.tool(&endpoint.slug),
        description,
        mime_type: "application/json".into(),
    };
    let terms = config.terms(pay_to);
    let mut offer = match &endpoint.metering {
        None => Offer::new(terms, resource, endpoint.price_usd),
        // `upto` where the facilitator settles it; with none, credits still pay.
        Some(_) => Offer::metered(terms, resource, endpoint.price_usd, |network| {
            facilitator.upto_facilitator(network)
        }),
    };
    // Only a paid endpoint's offer is ever shown (a 402, a quote, the discovery list) or paid,
    // and the `bazaar` declaration parses the endpoint's schemas from their text: a free call,
    // which also gets here for its receipt's terms, does not build what nobody reads.
    if endpoint.is_paid() {
        if let Some(declaration) = bazaar::declaration(endpoint, transport) {
            offer.extensions.insert(BAZAAR.into(), declaration);
        }
        offer.extensions.insert(
            payment_ids::PAYMENT_IDENTIFIER.into(),
            payment_ids::declaration(),
        );
        // Whom the payment goes to, beyond `payTo` (the service's address for every seller):
        // the endpoint's owner, so an agent can pin whom it pays.
        offer.extensions.insert(
            OWNER.into(),
            serde_json::json!({ "info": endpoint.owner_view() }),
        );
        if let Some(metering) = &endpoint.metering {
            offer.extensions.insert(
                METERING.into(),
                serde_json::json!({ "info": {
                    "maxUsd": endpoint.price_usd,
                    "minimumUsd": metering.minimum_usd,
                    "unitPriceUsd": metering.unit_price_usd,
                    "unit": metering.unit,
                }}),
            );
        }
    }
    offer
}
