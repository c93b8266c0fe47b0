//! The facilitator seam: who verifies a payment and who settles it.
//!
//! [`local::LocalFacilitator`] verifies here and records settlement in our ledger only (receipts
//! say `onChain:false`); [`remote::RemoteFacilitator`] speaks the standard facilitator API
//! (`POST /verify`, `POST /settle`, `GET /supported`). Nonce claims and receipts stay ours
//! whichever is used, so replay protection never depends on the facilitator.

pub mod local;
pub mod remote;

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use super::header::PaymentPayload;
use super::requirements::Offer;
use super::verify::Verified;
use super::PaymentError;
use crate::config::FacilitatorConfig;

/// How a payment was settled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settlement {
    /// Whether the transfer was submitted on-chain.
    pub on_chain: bool,
    /// The transaction hash when on-chain.
    pub transaction: Option<String>,
    /// Who settled it: `local` or `remote`.
    pub facilitator: &'static str,
}

pub trait Facilitator: Send + Sync {
    /// Checks the payment against the offer; `Refused` carries the x402 reason.
    fn verify<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
    ) -> BoxFuture<'a, Result<Verified, PaymentError>>;

    /// Settles a verified payment. Called only after the paid work succeeded.
    fn settle<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
        verified: &'a Verified,
    ) -> BoxFuture<'a, Result<Settlement, PaymentError>>;

    /// The `{kinds:[{x402Version, scheme, network}]}` this facilitator handles.
    fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>>;
}

/// The facilitator the configuration names.
pub fn from_config(
    config: &FacilitatorConfig,
    networks: &[crate::config::NetworkConfig],
) -> Arc<dyn Facilitator> {
    match config {
        FacilitatorConfig::Local => Arc::new(local::LocalFacilitator::new(networks.to_vec())),
        FacilitatorConfig::Remote { url } => Arc::new(remote::RemoteFacilitator::new(url)),
    }
}
