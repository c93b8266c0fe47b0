//! Verification in-process; settlement recorded in the ledger, not on-chain.
//!
//! Recording is honest about what it is: every receipt of a locally settled payment says
//! `onChain:false` and carries no transaction, and the signed authorization stays valid for
//! `transferWithAuthorization` by whoever holds it until `validBefore`.

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};

use super::{Facilitator, Settlement};
use crate::config::NetworkConfig;
use crate::payments::header::PaymentPayload;
use crate::payments::requirements::Offer;
use crate::payments::verify::{unix_now, verify_exact, Verified};
use crate::payments::PaymentError;

pub struct LocalFacilitator {
    networks: Vec<NetworkConfig>,
}

impl LocalFacilitator {
    pub fn new(networks: Vec<NetworkConfig>) -> Self {
        Self { networks }
    }
}

impl Facilitator for LocalFacilitator {
    fn verify<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
    ) -> BoxFuture<'a, Result<Verified, PaymentError>> {
        async move { verify_exact(payment, offer, unix_now()) }.boxed()
    }

    fn settle<'a>(
        &'a self,
        _: &'a PaymentPayload,
        _: &'a Offer,
        _: &'a Verified,
    ) -> BoxFuture<'a, Result<Settlement, PaymentError>> {
        async move {
            Ok(Settlement {
                on_chain: false,
                transaction: None,
                facilitator: "local",
            })
        }
        .boxed()
    }

    fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>> {
        let kinds: Vec<Value> = self
            .networks
            .iter()
            .flat_map(|n| {
                [
                    json!({"x402Version": 2, "scheme": "exact", "network": n.caip2}),
                    json!({"x402Version": 1, "scheme": "exact", "network": n.v1_name}),
                ]
            })
            .collect();
        async move { Ok(json!({ "kinds": kinds })) }.boxed()
    }
}
