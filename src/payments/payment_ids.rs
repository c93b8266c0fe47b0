//! The x402 `payment-identifier` extension: a client-chosen id that makes a paid call idempotent.
//!
//! Followed: `@x402/extensions` 2.27.0 (`payment-identifier`). The 402 declares
//! `extensions["payment-identifier"] = {info: {required: false}, schema}` ([`declaration`]); a
//! client that wants idempotency copies it into its v2 payment payload with `info.id` set (16 to
//! 128 characters of `[A-Za-z0-9_-]`). The reference fixes only the format; what a repeated id
//! means here:
//!
//! - the same id (of the same payer) with the same payment (the same signed authorization) and
//!   the same call (endpoint and input): the first answer again, from the store. The handler
//!   does not run and nothing is charged;
//! - the same id with another payment, endpoint or input: 409 `payment_identifier_conflict`;
//! - the same id and payment while the first call still runs: 409
//!   `payment_identifier_in_progress`.
//!
//! Records are the store's `payment_ids` ([`crate::store::PaymentIds`]; a table of their own on
//! PostgreSQL) under `{payer}/{id}` (the payer as the authorization names it, lowercase, so one
//! payer cannot take or probe another's ids). A call reserves its id
//! (`running`, naming the nonce claim it holds) in the same atomic write as its nonce claim,
//! before its handler;
//! the answer turns it `done` in the same atomic batch as the receipt, the sale and the spent
//! nonce, so an id that answered 200 keeps that answer across restarts and on every node of a
//! shared store. A `running` record whose nonce claim is gone (the handler failed and the claim
//! was released, or the process died) binds nothing: the next call with that id takes it over.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::nonces::{self, Stored};
use super::GateError;
use crate::receipts::Receipt;
use crate::store::{Batch, PaymentIdRow, Store, StoreError};
pub use crate::x402::header::PAYMENT_IDENTIFIER;
use crate::x402::header::{SettlementResponse, PAYMENT_ID_MAX_LEN, PAYMENT_ID_MIN_LEN};

/// What the 402 declares: ids are accepted, not required.
pub fn declaration() -> Value {
    json!({
        "info": {"required": false},
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "required": {"type": "boolean"},
                "id": {"type": "string", "minLength": PAYMENT_ID_MIN_LEN, "maxLength": PAYMENT_ID_MAX_LEN, "pattern": "^[a-zA-Z0-9_-]+$"}
            },
            "required": ["required"]
        }
    })
}

/// A paid call's first answer, as the transports shape it (the pipeline's `Outcome`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub status: u16,
    pub result: Value,
    pub receipt: Receipt,
    /// The salt of the receipt's digests (absent in answers kept before receipts were salted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt: Option<String>,
    pub payment_response: Option<SettlementResponse>,
    /// The handler's headers and those reporting settlement, as (name, value).
    pub headers: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    /// SHA-256 of the payment's signed authorization.
    payment_sha256: String,
    /// SHA-256 of what was bought: purpose, endpoint and input.
    request_sha256: String,
    /// The nonce claim the call holds while `running`.
    nonce_key: String,
    claim_id: String,
    created_at_ms: u64,
    /// Set once the call answered (`done`); absent while `running`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<Box<Answer>>,
}

/// One call's use of an id: where its record lives and what it must match.
#[derive(Clone, Debug)]
pub struct Use {
    key: String,
    payment_sha256: String,
    request_sha256: String,
}

/// What a lookup found.
pub enum Lookup {
    /// The id binds nothing: reserve it, replacing `previous` (a stale record) if any.
    Free { previous: Option<Vec<u8>> },
    /// The id answered before with this payment and call.
    Replay(Box<Answer>),
}

/// An id reserved by a running call.
#[derive(Clone, Debug)]
pub struct Reservation {
    key: String,
    record: Record,
}

impl Use {
    pub fn new(payer: &str, id: &str, payment_sha256: String, request_sha256: String) -> Self {
        Self {
            key: format!("{}/{id}", payer.to_ascii_lowercase()),
            payment_sha256,
            request_sha256,
        }
    }

    /// Whether the id may be used for this call, replayed, or is refused (409).
    pub async fn lookup(&self, store: &dyn Store) -> Result<Lookup, GateError> {
        loop {
            let Some(bytes) = store.payment_id(&self.key).await? else {
                return Ok(Lookup::Free { previous: None });
            };
            let record: Record = serde_json::from_slice(&bytes)
                .map_err(|e| StoreError::Corrupt(format!("payment id record: {e}")))?;
            let same = record.payment_sha256 == self.payment_sha256
                && record.request_sha256 == self.request_sha256;
            match record.answer {
                Some(answer) if same => return Ok(Lookup::Replay(answer)),
                Some(_) => return Err(GateError::IdConflict),
                None if held(store, &record).await? => {
                    return Err(if same {
                        GateError::IdInProgress
                    } else {
                        GateError::IdConflict
                    })
                }
                // Its claim is gone: the call died (a stale record), or it answered between
                // the two reads (the answer and the spent nonce are one write). Only a record
                // that is still the same when read again is stale.
                None => {
                    if store.payment_id(&self.key).await?.as_deref() == Some(&bytes[..]) {
                        return Ok(Lookup::Free {
                            previous: Some(bytes),
                        });
                    }
                }
            }
        }
    }

    /// The writes that reserve the id for a call about to claim `nonce_key` as `claim_id`, to
    /// go into the claim's own batch (both or neither), if the id still holds what the lookup
    /// saw (`previous`).
    pub fn reserve(
        &self,
        previous: Option<Vec<u8>>,
        nonce_key: &str,
        claim_id: &str,
    ) -> Result<(Batch, Reservation), StoreError> {
        let record = Record {
            payment_sha256: self.payment_sha256.clone(),
            request_sha256: self.request_sha256.clone(),
            nonce_key: nonce_key.to_owned(),
            claim_id: claim_id.to_string(),
            created_at_ms: nonces::now_ms(),
            answer: None,
        };
        let reservation = Reservation {
            key: self.key.clone(),
            record,
        };
        let row = reservation.row()?;
        let batch = Batch::new().require_payment_id(&self.key, previous);
        Ok((batch.put_payment_id(row), reservation))
    }
}

impl Reservation {
    /// Adds "this id answered `answer`" to the batch that records the receipt. Unconditional:
    /// while the call holds its nonce claim (which that batch requires) no other call can take
    /// the id over.
    pub fn done(&self, batch: Batch, answer: Answer) -> Result<Batch, StoreError> {
        let answered = Reservation {
            key: self.key.clone(),
            record: Record {
                answer: Some(Box::new(answer)),
                ..self.record.clone()
            },
        };
        Ok(batch.put_payment_id(answered.row()?))
    }

    /// The record as the store keeps it.
    fn row(&self) -> Result<PaymentIdRow, StoreError> {
        let entry =
            serde_json::to_vec(&self.record).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(PaymentIdRow {
            key: self.key.clone(),
            answered: self.record.answer.is_some(),
            created_at_ms: i64::try_from(self.record.created_at_ms).unwrap_or(i64::MAX),
            entry,
        })
    }
}

/// Whether the running call that reserved `record` still holds its nonce claim.
async fn held(store: &dyn Store, record: &Record) -> Result<bool, StoreError> {
    let Some(bytes) = store.nonce(&record.nonce_key).await? else {
        return Ok(false);
    };
    Ok(matches!(Stored::parse(&bytes)?, Stored::Claim(claim) if claim.claim_id == record.claim_id))
}
