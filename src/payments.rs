//! Selling calls for payment: asking for it, accepting an x402 payment or a developer credit,
//! claiming its nonce, settling it after success, and recovering what a crash interrupted.
//!
//! A paid call goes through [`gate`] before its handler runs and through
//! [`Authorized::settle`] after the handler succeeded, so the payer is charged only for a
//! successful result (`fixed_price_success_receipt`). Between the two the payment's EIP-3009
//! nonce is *claimed* in the store, so concurrent requests carrying the same authorization are
//! served at most once; when the handler fails, the claim is released (nothing was transferred,
//! and the still-valid authorization may be retried), settling makes it permanent, and a
//! settlement that fails after the handler ran burns it (the authorization cannot buy the same
//! work again for free).
//!
//! Both protocol versions the reference SDKs speak are served: v2 (`PAYMENT-REQUIRED`,
//! `PAYMENT-SIGNATURE`, `PAYMENT-RESPONSE` headers) and v1 (the 402 JSON body, `X-PAYMENT`,
//! `X-PAYMENT-RESPONSE`).
//!
//! The protocol itself (its headers and requirements, verifying a payload, the facilitators
//! that verify and settle) is the x402 wing, `crate::x402`; this module sells with it.
//!
//! # Layout
//! - `nonces`: atomic nonce claims, and the claim record recovery reads.
//! - `recovery`: orphaned claims and pending on-chain settlements, resolved at start-up and in
//!   the background.
//! - `credits`: developer credit grants, their admin routes and atomic debits.
//! - `bazaar`: the `bazaar` extension (an endpoint's discovery info in its 402).
//! - `offer_receipt`: the `offer-receipt` extension (the receipt as a signed JWS, a draft).
//! - `offers`: each endpoint's offer, built once per endpoint generation and shared by its calls.
//! - `payment_ids`: the `payment-identifier` extension (idempotent paid calls).
//! - `gate`: the seam the invocation pipeline calls; `tender`: what a call offers to pay with;
//!   `error`: what the gate answers instead ([`GateError`]), converted to the service's error
//!   in one place.
//! - `metering`: what a metered call is charged, from what its handler reported.
//! - `refunds`: the owner or the admin gives back what a receipt charged.
//! - `dev_key`: the generated receiving address of a local/dev server.

pub mod bazaar;
pub mod credits;
mod dev_key;
mod error;
mod gate;
pub mod metering;
pub mod nonces;
pub mod offer_receipt;
pub mod offers;
pub mod payment_ids;
pub mod recovery;
pub mod refunds;
pub mod settling;
mod tender;

use std::sync::Arc;

pub use dev_key::{resolve_pay_to, PayToError};
pub use error::GateError;
pub use gate::{charge_for, gate, Authorized, Charge, Parts, Seller, Served, Settled};
pub use tender::Tender;

use crate::x402::Facilitator;

/// The payment side of the shared state.
pub struct Payments {
    /// The resolved receiving address (configured, or the dev key's).
    pub pay_to: String,
    pub facilitator: Arc<dyn Facilitator>,
    /// The endpoints' offers, built once per endpoint generation.
    pub offers: offers::Offers,
}

impl Payments {
    /// What calling `endpoint` over `transport` costs here, as an x402 offer ([`charge_for`]).
    pub fn charge_for(
        &self,
        config: &crate::config::PaymentConfig,
        urls: &crate::urls::Urls,
        endpoint: &crate::catalog::Endpoint,
        transport: bazaar::Transport,
    ) -> Charge {
        charge_for(
            &self.offers,
            &Seller {
                config,
                pay_to: &self.pay_to,
                urls,
                facilitator: self.facilitator.as_ref(),
            },
            endpoint,
            transport,
        )
    }
}

/// Keeps only the networks `facilitator` says it settles `exact` payments on (a hosted
/// facilitator's `/supported`, read at start-up), so nothing is offered that could not be
/// collected; returns those left out. A facilitator that has not said (not reachable yet, or
/// local) keeps them all. None left: an error naming what it does settle.
pub fn keep_settled_networks(
    config: &mut crate::config::PaymentConfig,
    facilitator: &dyn Facilitator,
) -> Result<Vec<String>, crate::x402::facilitator::SetupError> {
    let (kept, left_out): (Vec<_>, Vec<_>) = std::mem::take(&mut config.networks)
        .into_iter()
        .partition(|network| facilitator.settles("exact", &network.caip2) != Some(false));
    let left_out: Vec<String> = left_out.into_iter().map(|n| n.caip2).collect();
    if kept.is_empty() {
        return Err(crate::x402::facilitator::SetupError::Facilitator(format!(
            "it settles `exact` payments (x402 v2) on none of the accepted networks ({})",
            left_out.join(", ")
        )));
    }
    config.networks = kept;
    Ok(left_out)
}
