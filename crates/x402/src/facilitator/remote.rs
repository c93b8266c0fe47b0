//! A facilitator reached over the standard HTTP API.
//!
//! `POST {url}/verify` and `POST {url}/settle` take `{x402Version, paymentPayload,
//! paymentRequirements}` (requirements in the payload's version) and answer
//! `{isValid, invalidReason?, payer?}` and `{success, errorReason?, transaction, network, payer}`.
//! The URL is operator configuration, not caller input, so it is reached directly rather than
//! through the SSRF-guarded client.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{Facilitator, SettleJournal, Settlement, SettlementStatus};
use crate::header::{PaymentPayload, X402Version};
use crate::requirements::Offer;
use crate::verify::{self, unix_now, Verified};
use crate::{PaymentError, Reason};

pub struct RemoteFacilitator {
    base: String,
    client: reqwest::Client,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyAnswer {
    is_valid: bool,
    #[serde(default)]
    invalid_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettleAnswer {
    success: bool,
    #[serde(default)]
    error_reason: Option<String>,
    #[serde(default)]
    transaction: Option<String>,
}

impl RemoteFacilitator {
    pub fn new(url: &str) -> Self {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap_or_default();
        Self {
            base: url.trim_end_matches('/').to_string(),
            client,
        }
    }

    /// The request body of `/verify` and `/settle`.
    fn body(payment: &PaymentPayload, offer: &Offer) -> Result<Value, PaymentError> {
        let refused = || {
            PaymentError::refused(
                Reason::InvalidNetwork,
                format!("network {:?} is not accepted here", payment.network),
            )
        };
        let requirements = match payment.version {
            X402Version::V2 => {
                serde_json::to_value(&offer.find(&payment.network).ok_or_else(refused)?.1)
            }
            X402Version::V1 => serde_json::to_value(
                offer
                    .v1_accepts()
                    .into_iter()
                    .find(|r| r.network == payment.network)
                    .ok_or_else(refused)?,
            ),
        }
        .map_err(|e| PaymentError::Facilitator(e.to_string()))?;
        Ok(json!({
            "x402Version": payment.version.number(),
            "paymentPayload": payment.raw,
            "paymentRequirements": requirements,
        }))
    }

    async fn post<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, PaymentError> {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await
            .map_err(|_| PaymentError::Facilitator(format!("{path} could not be reached")))?;
        response.json::<T>().await.map_err(|_| {
            PaymentError::Facilitator(format!("{path} answered something that is not its JSON"))
        })
    }
}

impl Facilitator for RemoteFacilitator {
    fn verify<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
    ) -> BoxFuture<'a, Result<Verified, PaymentError>> {
        async move {
            let (network, requirement) = verify::terms(payment, offer)?;
            // The facilitator checks the signature; what we need of the payment, and our
            // settle margin, are read here.
            let proof = payment.payload.read(offer, unix_now())?;
            let answer: VerifyAnswer = self.post("/verify", &Self::body(payment, offer)?).await?;
            if !answer.is_valid {
                let reason = answer.invalid_reason.unwrap_or_default();
                return Err(PaymentError::refused(
                    Reason::parse(&reason).unwrap_or(Reason::Rejected),
                    format!("the facilitator refused the payment: {reason}"),
                ));
            }
            Ok(Verified {
                network: network.clone(),
                requirement: requirement.clone(),
                proof,
            })
        }
        .boxed()
    }

    fn settle<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
        _: &'a Verified,
        journal: &'a dyn SettleJournal,
    ) -> BoxFuture<'a, Result<Settlement, PaymentError>> {
        async move {
            let body = Self::body(payment, offer)?;
            // The remote facilitator may move the money from here on; the standard API cannot
            // be asked afterwards whether it did, so recovery keeps such a claim.
            journal.before_submit(None).await?;
            let answer: SettleAnswer = self.post("/settle", &body).await?;
            if !answer.success {
                let reason = answer.error_reason.unwrap_or_default();
                return Err(PaymentError::refused(
                    Reason::parse(&reason).unwrap_or(Reason::SettlementFailed),
                    format!("the facilitator could not settle the payment: {reason}"),
                ));
            }
            let transaction = answer.transaction.filter(|t| !t.is_empty());
            Ok(Settlement {
                // The standard `/settle` answers success once the transfer is mined.
                status: if transaction.is_some() {
                    SettlementStatus::Settled
                } else {
                    SettlementStatus::Recorded
                },
                transaction,
                facilitator: "remote",
            })
        }
        .boxed()
    }

    fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>> {
        async move {
            let response = self
                .client
                .get(format!("{}/supported", self.base))
                .send()
                .await
                .map_err(|_| PaymentError::Facilitator("/supported could not be reached".into()))?;
            response.json::<Value>().await.map_err(|_| {
                PaymentError::Facilitator("/supported answered something that is not JSON".into())
            })
        }
        .boxed()
    }
}
