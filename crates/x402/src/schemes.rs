//! The seam per payment scheme. A scheme is one file under `schemes/`: its wire payload, how
//! it is read and verified, and how a client signs it (for tests and the benchmark). This file
//! names each scheme once in the two enums the rest of the service holds: what a payer sent
//! ([`SchemePayload`]) and what verifying it established ([`Proof`]). Adding a scheme is its
//! file, a variant in each enum and the match arms the compiler then asks for.

pub mod exact_evm;
pub mod permit2;
pub mod upto_evm;

use serde_json::Value;

use super::requirements::{Offer, PaymentRequirements};
use super::{PaymentError, Reason};
use crate::config::NetworkConfig;

/// A payment's scheme-specific part, read by the scheme its header names.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemePayload {
    ExactEvm(exact_evm::Payload),
    /// `exact` by Permit2, on a network whose asset is paid so (`assetTransferMethod`).
    ExactPermit2(permit2::Payload),
    UptoEvm(permit2::Payload),
    /// A scheme we do not speak: kept so the refusal can name it (`invalid_scheme`, 402)
    /// rather than call a well-formed payment malformed.
    Unsupported {
        scheme: String,
        payload: Value,
    },
}

impl SchemePayload {
    /// Reads `payload` as `scheme` defines it; a payload of the wrong shape for a scheme we
    /// speak is an error (the header is malformed).
    pub fn parse(scheme: &str, payload: Value) -> Result<SchemePayload, serde_json::Error> {
        Ok(match scheme {
            exact_evm::SCHEME if payload.get("permit2Authorization").is_some() => {
                SchemePayload::ExactPermit2(serde_json::from_value(payload)?)
            }
            exact_evm::SCHEME => SchemePayload::ExactEvm(serde_json::from_value(payload)?),
            upto_evm::SCHEME => SchemePayload::UptoEvm(serde_json::from_value(payload)?),
            _ => SchemePayload::Unsupported {
                scheme: scheme.to_string(),
                payload,
            },
        })
    }

    pub fn scheme(&self) -> &str {
        match self {
            SchemePayload::ExactEvm(_) | SchemePayload::ExactPermit2(_) => exact_evm::SCHEME,
            SchemePayload::UptoEvm(_) => upto_evm::SCHEME,
            SchemePayload::Unsupported { scheme, .. } => scheme,
        }
    }

    /// Who the payload says pays, before anything is verified (a `payment-identifier` id is
    /// looked up under it). Empty when the scheme is not ours.
    pub fn claimed_payer(&self) -> &str {
        match self {
            SchemePayload::ExactEvm(payload) => &payload.authorization.from,
            SchemePayload::ExactPermit2(payload) | SchemePayload::UptoEvm(payload) => {
                &payload.permit2_authorization.from
            }
            SchemePayload::Unsupported { .. } => "",
        }
    }

    /// The scheme's own check of the payload against the offer's terms on `network`, at unix
    /// time `now` (the terms every scheme shares are `verify::terms`).
    pub fn verify(
        &self,
        network: &NetworkConfig,
        requirement: &PaymentRequirements,
        offer: &Offer,
        now: u64,
    ) -> Result<Proof, PaymentError> {
        self.check_transfer_method(requirement)?;
        match self {
            SchemePayload::ExactEvm(payload) => Ok(Proof::ExactEvm(exact_evm::verify(
                payload,
                network,
                requirement,
                offer,
                now,
            )?)),
            SchemePayload::ExactPermit2(payload) => Ok(Proof::Permit2(permit2::verify(
                payload,
                permit2::Kind::Exact,
                network,
                requirement,
                offer,
                now,
            )?)),
            SchemePayload::UptoEvm(payload) => Ok(Proof::Permit2(upto_evm::verify(
                payload,
                network,
                requirement,
                offer,
                now,
            )?)),
            SchemePayload::Unsupported { scheme, .. } => Err(unsupported(scheme)),
        }
    }

    /// What a remote facilitator's verification needs read here, without checking the
    /// signature (the facilitator does).
    pub fn read(
        &self,
        requirement: &PaymentRequirements,
        offer: &Offer,
        now: u64,
    ) -> Result<Proof, PaymentError> {
        self.check_transfer_method(requirement)?;
        match self {
            SchemePayload::ExactEvm(payload) => {
                Ok(Proof::ExactEvm(exact_evm::read(payload, offer, now)?))
            }
            SchemePayload::ExactPermit2(payload) => Ok(Proof::Permit2(permit2::read(
                payload,
                permit2::Kind::Exact,
                requirement,
                offer,
                now,
            )?)),
            SchemePayload::UptoEvm(payload) => Ok(Proof::Permit2(upto_evm::read(
                payload,
                requirement,
                offer,
                now,
            )?)),
            SchemePayload::Unsupported { scheme, .. } => Err(unsupported(scheme)),
        }
    }

    /// An `exact` payment pays the way its requirement asks (`extra.assetTransferMethod`): an
    /// EIP-3009 authorization where the asset takes one, a Permit2 permit where it is paid by
    /// Permit2; the other could not settle.
    fn check_transfer_method(&self, requirement: &PaymentRequirements) -> Result<(), PaymentError> {
        let by_permit2 = requirement.extra.asset_transfer_method.as_deref() == Some(PERMIT2_METHOD);
        match self {
            SchemePayload::ExactEvm(_) if by_permit2 => Err(PaymentError::refused(
                Reason::InvalidPayload,
                "this network's asset is paid by Permit2 (extra.assetTransferMethod \"permit2\"): send a permit2Authorization",
            )),
            SchemePayload::ExactPermit2(_) if !by_permit2 => Err(PaymentError::refused(
                Reason::InvalidPayload,
                "this network's asset is paid by EIP-3009 authorization: send an authorization, not a permit2Authorization",
            )),
            _ => Ok(()),
        }
    }

    /// The payload as JSON, in the scheme's own field order (hashed to bind a payment id to
    /// its payment, so it must not change between releases).
    pub fn to_value(&self) -> Value {
        match self {
            SchemePayload::ExactEvm(payload) => serde_json::to_value(payload).unwrap_or_default(),
            SchemePayload::ExactPermit2(payload) | SchemePayload::UptoEvm(payload) => {
                serde_json::to_value(payload).unwrap_or_default()
            }
            SchemePayload::Unsupported { payload, .. } => payload.clone(),
        }
    }
}

/// `extra.assetTransferMethod` of an asset paid by Permit2.
pub const PERMIT2_METHOD: &str = "permit2";

/// The refusal of a scheme we do not speak (`verify::terms` refuses it first, as no offer
/// names it).
fn unsupported(scheme: &str) -> PaymentError {
    PaymentError::refused(
        Reason::InvalidScheme,
        format!("scheme {scheme:?} is not accepted"),
    )
}

/// What verifying a payment established, per scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    ExactEvm(exact_evm::Transfer),
    /// `exact` by Permit2, or `upto` (the permit's kind says which).
    Permit2(permit2::Permit),
}

impl Proof {
    /// The payer as receipts and sales name it (an EVM address in its EIP-55 form).
    pub fn payer(&self) -> String {
        match self {
            Proof::ExactEvm(transfer) => transfer.message.from.to_checksum(None),
            Proof::Permit2(permit) => permit.owner.to_checksum(None),
        }
    }

    /// What makes this payment single-use for its payer (EIP-3009: the authorization's
    /// nonce; Permit2: the permit's nonce), as text.
    pub fn nonce(&self) -> String {
        match self {
            Proof::ExactEvm(transfer) => transfer.message.nonce.to_string(),
            Proof::Permit2(permit) => permit.nonce.to_string(),
        }
    }

    /// The contract whose nonces [`Proof::nonce`] is one of: EIP-3009 nonces are the asset's
    /// (`asset`), Permit2's are one space per owner whatever the token.
    pub fn nonce_space(&self, asset: &str) -> String {
        match self {
            Proof::ExactEvm(_) => asset.to_string(),
            Proof::Permit2(_) => permit2::PERMIT2.to_checksum(None),
        }
    }
}
