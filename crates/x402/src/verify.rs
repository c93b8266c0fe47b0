//! Checking a payment against an offer, whatever its scheme: the terms every scheme shares
//! (an offered scheme, an accepted network, the asset the payer chose) here, then the scheme's
//! own check (`schemes/`).

use super::header::PaymentPayload;
use super::requirements::{Offer, PaymentRequirements};
use super::schemes::Proof;
use super::{PaymentError, Reason};
use crate::config::NetworkConfig;

/// A payment that checked out, and the offer's terms it paid under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub network: NetworkConfig,
    pub requirement: PaymentRequirements,
    pub proof: Proof,
    /// `proof`'s payer in its EIP-55 form, made once: the checksum is a Keccak hash, and the
    /// claim's key, the handler's `req.payment` and the receipt each name the payer.
    payer: String,
}

impl Verified {
    pub fn new(network: NetworkConfig, requirement: PaymentRequirements, proof: Proof) -> Self {
        let payer = proof.payer();
        Verified {
            network,
            requirement,
            proof,
            payer,
        }
    }

    /// The payer as receipts and sales name it.
    pub fn payer(&self) -> &str {
        &self.payer
    }

    /// What makes the payment single-use for its payer, as text.
    pub fn nonce(&self) -> String {
        self.proof.nonce()
    }

    /// The contract whose nonce [`Verified::nonce`] is (the asset, or Permit2).
    pub fn nonce_space(&self) -> String {
        self.proof.nonce_space(&self.requirement.asset)
    }
}

/// The offer's terms `payment` chose: its scheme is offered, its network accepted, and (v2)
/// the asset it names is the one asked for on that network.
pub fn terms<'o>(
    payment: &PaymentPayload,
    offer: &'o Offer,
) -> Result<&'o (NetworkConfig, PaymentRequirements), PaymentError> {
    let scheme = payment.scheme();
    if !offer.accepts.iter().any(|(_, r)| r.scheme == scheme) {
        let mut offered: Vec<String> = offer
            .accepts
            .iter()
            .map(|(_, r)| format!("{:?}", r.scheme))
            .collect();
        offered.dedup();
        return Err(PaymentError::refused(
            Reason::InvalidScheme,
            format!(
                "scheme {scheme:?} is not accepted; use {}",
                offered.join(" or ")
            ),
        ));
    }
    let terms = offer
        .accepts
        .iter()
        .find(|(n, r)| {
            r.scheme == scheme && (n.caip2 == payment.network || n.v1_name == payment.network)
        })
        .ok_or_else(|| {
            PaymentError::refused(
                Reason::InvalidNetwork,
                format!("network {:?} is not accepted here", payment.network),
            )
        })?;
    let (network, requirement) = terms;
    if let Some(accepted) = &payment.accepted {
        if !accepted.asset.eq_ignore_ascii_case(&requirement.asset) {
            return Err(PaymentError::refused(
                Reason::AssetMismatch,
                format!(
                    "asset {} is not accepted on {}",
                    accepted.asset, network.caip2
                ),
            ));
        }
    }
    Ok(terms)
}

/// Checks `payment` against what `offer` asks, at unix time `now`.
pub fn verify(payment: &PaymentPayload, offer: &Offer, now: u64) -> Result<Verified, PaymentError> {
    let (network, requirement) = terms(payment, offer)?;
    let proof = payment.payload.verify(network, requirement, offer, now)?;
    Ok(Verified::new(network.clone(), requirement.clone(), proof))
}

pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
