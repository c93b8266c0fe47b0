//! The `exact` scheme on EVM chains: an EIP-3009 `TransferWithAuthorization` signed under the
//! asset contract's EIP-712 domain `{name, version, chainId, verifyingContract: asset}`.
//!
//! Wire payload: `{signature, authorization:{from, to, value, validAfter, validBefore, nonce}}`.
//! Everything a facilitator checks before settling, except the on-chain balance: the signer
//! recovered equals `from`, `to` is our `payTo`, `value` is the price exactly, and the validity
//! window covers now. Nonce freshness is the seller's job (`payments::nonces`), because only the
//! store can claim a nonce atomically.

use std::borrow::Cow;
use std::str::FromStr;

use alloy_primitives::{Address, Signature, B256, U256};
use alloy_sol_types::{sol, Eip712Domain, SolStruct};
use serde::{Deserialize, Serialize};

use crate::config::NetworkConfig;
use crate::evm;
use crate::requirements::{Offer, PaymentRequirements};
use crate::{PaymentError, Reason};

/// The scheme's name in requirements and payments.
pub const SCHEME: &str = "exact";

sol! {
    /// EIP-3009's typed data, as USDC defines it.
    #[derive(Debug, PartialEq, Eq)]
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }
}

/// The authorization as the payer sends it: every number and address a string.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Authorization {
    pub from: String,
    pub to: String,
    pub value: String,
    pub valid_after: String,
    pub valid_before: String,
    pub nonce: String,
}

/// The scheme's payment payload on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payload {
    pub signature: String,
    pub authorization: Authorization,
}

/// A payload read into typed values: what verification checks and settlement submits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub message: TransferWithAuthorization,
    pub signature: Signature,
}

impl Transfer {
    /// The payload's values, refused with `invalid_payload` or the signature reason where one
    /// does not parse. Nothing is checked against an offer.
    pub fn parse(payload: &Payload) -> Result<Transfer, PaymentError> {
        Ok(Transfer {
            message: message(&payload.authorization)?,
            signature: evm::parse_signature(&payload.signature)?,
        })
    }
}

/// The EIP-712 domain of an asset contract on a network.
pub fn domain(network: &NetworkConfig, asset: Address) -> Eip712Domain {
    Eip712Domain::new(
        Some(Cow::Owned(network.eip712_name.clone())),
        Some(Cow::Owned(network.eip712_version.clone())),
        Some(U256::from(network.chain_id)),
        Some(asset),
        None,
    )
}

fn refused(reason: Reason, message: impl Into<String>) -> PaymentError {
    PaymentError::refused(reason, message)
}

fn address(field: &str, text: &str) -> Result<Address, PaymentError> {
    Address::from_str(text.trim()).map_err(|_| {
        refused(
            Reason::InvalidPayload,
            format!("authorization.{field} is not an EVM address"),
        )
    })
}

fn uint(field: &str, text: &str) -> Result<U256, PaymentError> {
    U256::from_str(text.trim()).map_err(|_| {
        refused(
            Reason::InvalidPayload,
            format!("authorization.{field} is not an unsigned integer"),
        )
    })
}

/// The typed message an authorization stands for.
pub fn message(authorization: &Authorization) -> Result<TransferWithAuthorization, PaymentError> {
    Ok(TransferWithAuthorization {
        from: address("from", &authorization.from)?,
        to: address("to", &authorization.to)?,
        value: uint("value", &authorization.value)?,
        validAfter: uint("validAfter", &authorization.valid_after)?,
        validBefore: uint("validBefore", &authorization.valid_before)?,
        nonce: B256::from_str(authorization.nonce.trim()).map_err(|_| {
            refused(
                Reason::InvalidPayload,
                "authorization.nonce is not 32 bytes of hex",
            )
        })?,
    })
}

/// Checks `payload` against `requirement` (the offer's terms on `network`) at unix time `now`.
pub fn verify(
    payload: &Payload,
    network: &NetworkConfig,
    requirement: &PaymentRequirements,
    offer: &Offer,
    now: u64,
) -> Result<Transfer, PaymentError> {
    let asset = Address::from_str(&requirement.asset)
        .map_err(|_| PaymentError::Facilitator("configured asset is not an address".into()))?;
    let pay_to = Address::from_str(&requirement.pay_to)
        .map_err(|_| PaymentError::Facilitator("configured payTo is not an address".into()))?;
    let Transfer {
        message: msg,
        signature,
    } = Transfer::parse(payload)?;
    let signer = evm::signer(
        &msg.eip712_signing_hash(&domain(network, asset)),
        &signature,
    )?;
    if signer != msg.from {
        return Err(refused(
            Reason::Signature,
            "the signature was not made by authorization.from",
        ));
    }
    if msg.to != pay_to {
        return Err(refused(
            Reason::RecipientMismatch,
            format!("authorization.to must be {}", requirement.pay_to),
        ));
    }
    if msg.value != U256::from(offer.price.units()) {
        return Err(refused(
            Reason::ValueMismatch,
            format!("authorization.value must be exactly {}", requirement.amount),
        ));
    }
    check_window(&msg, now, offer.settle_margin_secs)?;
    Ok(Transfer {
        message: msg,
        signature,
    })
}

/// What a remote facilitator's verification needs read here: the payload's values (payer and
/// nonce, for the claim) and our settle margin, which is stricter than the facilitator's (it
/// accepts an authorization valid for one more second). The signature is the facilitator's to
/// check.
pub fn read(payload: &Payload, offer: &Offer, now: u64) -> Result<Transfer, PaymentError> {
    let transfer = Transfer::parse(payload)?;
    check_window(&transfer.message, now, offer.settle_margin_secs)?;
    Ok(transfer)
}

/// The authorization's validity window at unix time `now`: valid already, and still valid for
/// `margin` seconds, the time settling it may take after verification.
pub fn check_window(
    msg: &TransferWithAuthorization,
    now: u64,
    margin: u64,
) -> Result<(), PaymentError> {
    if msg.validAfter > U256::from(now) {
        return Err(refused(
            Reason::ValidAfter,
            "the authorization is not valid yet (validAfter is in the future)",
        ));
    }
    if msg.validBefore <= U256::from(now) {
        return Err(refused(
            Reason::ValidBefore,
            "the authorization has expired (validBefore has passed)",
        ));
    }
    if msg.validBefore <= U256::from(now.saturating_add(margin)) {
        return Err(refused(
            Reason::ValidBefore,
            format!(
                "the authorization expires too soon: validBefore must be at least {margin} s from now, so it can be settled"
            ),
        ));
    }
    Ok(())
}

/// The paying side: sign an authorization as an x402 client does. The integration tests and the
/// benchmark pay with it; the server never signs payments.
pub mod signing {
    use alloy_signer::SignerSync;
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::{json, Value};

    use super::*;
    use crate::verify::unix_now;

    fn random_nonce() -> B256 {
        use rand::RngCore;
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        B256::from(bytes)
    }

    /// A signed `exact` payload (`{signature, authorization}`) for `requirement`, valid from ten
    /// minutes ago for `maxTimeoutSeconds`, with `adjust` applied to the authorization before
    /// signing.
    pub fn sign(
        signer: &PrivateKeySigner,
        network: &NetworkConfig,
        requirement: &PaymentRequirements,
        adjust: impl FnOnce(&mut Authorization),
    ) -> Result<Value, PaymentError> {
        let now = unix_now();
        let mut authorization = Authorization {
            from: signer.address().to_string(),
            to: requirement.pay_to.clone(),
            value: requirement.amount.clone(),
            valid_after: now.saturating_sub(600).to_string(),
            valid_before: (now + requirement.max_timeout_seconds).to_string(),
            nonce: random_nonce().to_string(),
        };
        adjust(&mut authorization);
        let msg = message(&authorization)?;
        let asset = address("asset", &requirement.asset)?;
        let signature = signer
            .sign_hash_sync(&msg.eip712_signing_hash(&domain(network, asset)))
            .map_err(|e| PaymentError::Facilitator(format!("signing failed: {e}")))?;
        Ok(json!({"signature": signature.to_string(), "authorization": authorization}))
    }
}

#[cfg(test)]
mod tests {
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::json;

    use super::signing::sign;
    use super::*;
    use crate::header::{self, PaymentPayload};
    use crate::requirements::Terms;
    use crate::schemes::SchemePayload;
    use crate::verify::{unix_now, verify as verify_exact, Verified};
    use crate::ResourceInfo;
    use toolhost_values::error::ErrorCode;
    use toolhost_values::money::Usd;

    /// The exact payload of a payment made by [`pay`], to tamper with.
    fn exact(payment: &mut PaymentPayload) -> &mut Payload {
        match &mut payment.payload {
            SchemePayload::ExactEvm(payload) => payload,
            other => panic!("not an exact payment: {other:?}"),
        }
    }

    fn offer(pay_to: Address) -> Offer {
        let resource = ResourceInfo {
            url: "http://x/tools/a".into(),
            description: "A".into(),
            mime_type: "application/json".into(),
        };
        Offer::new(
            Terms::for_tests(&[NetworkConfig::base_sepolia()], &pay_to.to_string()),
            resource,
            Usd::from_units(1000),
        )
    }

    fn pay(
        offer: &Offer,
        signer: &PrivateKeySigner,
        v2: bool,
        adjust: impl FnOnce(&mut Authorization),
    ) -> PaymentPayload {
        let (network, requirement) = &offer.accepts[0];
        let payload = sign(signer, network, requirement, adjust).unwrap();
        let wire = if v2 {
            json!({"x402Version": 2, "accepted": requirement, "payload": payload})
        } else {
            json!({"x402Version": 1, "scheme": "exact", "network": network.v1_name, "payload": payload})
        };
        header::decode(&header::encode(&wire)).unwrap()
    }

    /// The malleable twin of a low-s signature: (r, n - s, !v).
    fn high_s(signature: &str) -> String {
        let low = evm::parse_signature(signature).unwrap();
        let n =
            U256::from_str("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
                .unwrap();
        let high = Signature::new(low.r(), n - low.s(), !low.v());
        assert_eq!(high.normalize_s(), Some(low));
        high.to_string()
    }

    fn reason(result: Result<Verified, PaymentError>) -> ErrorCode {
        match result {
            Err(PaymentError::Refused { reason, .. }) => reason.code(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn accepts_a_real_signature_in_both_versions() {
        let signer = PrivateKeySigner::random();
        let offer = offer(PrivateKeySigner::random().address());
        for v2 in [true, false] {
            let verified =
                verify_exact(&pay(&offer, &signer, v2, |_| {}), &offer, unix_now()).unwrap();
            assert_eq!(verified.payer(), signer.address().to_checksum(None));
        }
    }

    #[test]
    fn refuses_with_x402_reasons() {
        let signer = PrivateKeySigner::random();
        let pay_to = PrivateKeySigner::random().address();
        let offer = offer(pay_to);
        let now = unix_now();
        let stranger = PrivateKeySigner::random().address().to_string();
        type Adjust = Box<dyn FnOnce(&mut Authorization)>;
        let cases: Vec<(ErrorCode, Adjust)> = vec![
            (
                ErrorCode::InvalidExactEvmPayloadRecipientMismatch,
                Box::new(move |a| a.to = stranger),
            ),
            (
                ErrorCode::InvalidExactEvmPayloadAuthorizationValueMismatch,
                Box::new(|a| a.value = "999".into()),
            ),
            (
                ErrorCode::InvalidExactEvmPayloadAuthorizationValidAfter,
                Box::new(move |a| a.valid_after = (now + 60).to_string()),
            ),
            (
                ErrorCode::InvalidExactEvmPayloadAuthorizationValidBefore,
                Box::new(move |a| a.valid_before = now.to_string()),
            ),
        ];
        for (expected, adjust) in cases {
            assert_eq!(
                reason(verify_exact(
                    &pay(&offer, &signer, true, adjust),
                    &offer,
                    now
                )),
                expected
            );
        }
        // Tampering after signing breaks the signature.
        let mut payment = pay(&offer, &signer, true, |_| {});
        exact(&mut payment).authorization.value = "1".into();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadSignature
        );
        // Someone else's `from`.
        let mut payment = pay(&offer, &signer, false, |_| {});
        exact(&mut payment).authorization.from = pay_to.to_string();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadSignature
        );
        let mut payment = pay(&offer, &signer, false, |_| {});
        payment.network = "base".into();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidNetwork
        );
        let mut payment = pay(&offer, &signer, false, |_| {});
        payment.payload = SchemePayload::Unsupported {
            scheme: "upto".into(),
            payload: SchemePayload::ExactEvm(exact(&mut payment).clone()).to_value(),
        };
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidScheme
        );
        let mut payment = pay(&offer, &signer, true, |_| {});
        if let Some(a) = payment.accepted.as_mut() {
            a.asset = pay_to.to_string();
        }
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadAssetMismatch
        );
        let mut payment = pay(&offer, &signer, true, |_| {});
        exact(&mut payment).signature = "0x1234".into();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadSignature
        );
        // Expiring within the settle margin (30 s by default).
        let payment = pay(&offer, &signer, true, move |a| {
            a.valid_before = (now + 29).to_string()
        });
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadAuthorizationValidBefore
        );
        let payment = pay(&offer, &signer, true, move |a| {
            a.valid_before = (now + 31).to_string()
        });
        assert!(verify_exact(&payment, &offer, now).is_ok());
        // The same signature with s flipped to the upper half (and v with it) still recovers
        // the signer, but the token contract would refuse it.
        let mut payment = pay(&offer, &signer, true, |_| {});
        let high = high_s(&exact(&mut payment).signature);
        exact(&mut payment).signature = high;
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadSignature
        );
        let mut payment = pay(&offer, &signer, true, |_| {});
        exact(&mut payment).authorization.nonce = "0x12".into();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidPayload
        );
    }
}
