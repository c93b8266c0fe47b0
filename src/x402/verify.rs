//! The `exact` EVM scheme: an EIP-3009 `TransferWithAuthorization` signed under the asset
//! contract's EIP-712 domain `{name, version, chainId, verifyingContract: asset}`.
//!
//! Everything a facilitator checks before settling, except the on-chain balance: the signer
//! recovered (libsecp256k1, see [`recover_signer`]) equals `from`, `to` is our `payTo`, `value` is the price exactly, and the
//! validity window covers now. Nonce freshness is the caller's job (`nonces`), because only the
//! store can claim a nonce atomically.

use std::borrow::Cow;
use std::str::FromStr;

use alloy_primitives::{Address, Signature, B256, U256};
use alloy_sol_types::{sol, Eip712Domain, SolStruct};

use super::header::{Authorization, PaymentPayload};
use super::requirements::{Offer, PaymentRequirements};
use super::{PaymentError, Reason};
use crate::config::NetworkConfig;

sol! {
    /// EIP-3009's typed data, as USDC defines it.
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }
}

/// A payment whose authorization checked out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub payer: Address,
    pub nonce: B256,
    pub network: NetworkConfig,
    pub requirement: PaymentRequirements,
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

/// Checks `payment` against what `offer` asks, at unix time `now`.
pub fn verify_exact(
    payment: &PaymentPayload,
    offer: &Offer,
    now: u64,
) -> Result<Verified, PaymentError> {
    if payment.scheme != "exact" {
        return Err(refused(
            Reason::InvalidScheme,
            format!("scheme {:?} is not accepted; use \"exact\"", payment.scheme),
        ));
    }
    let (network, requirement) = offer.find(&payment.network).ok_or_else(|| {
        refused(
            Reason::InvalidNetwork,
            format!("network {:?} is not accepted here", payment.network),
        )
    })?;
    if let Some(accepted) = &payment.accepted {
        if !accepted.asset.eq_ignore_ascii_case(&requirement.asset) {
            return Err(refused(
                Reason::AssetMismatch,
                format!(
                    "asset {} is not accepted on {}",
                    accepted.asset, network.caip2
                ),
            ));
        }
    }
    let asset = Address::from_str(&requirement.asset)
        .map_err(|_| PaymentError::Facilitator("configured asset is not an address".into()))?;
    let pay_to = Address::from_str(&requirement.pay_to)
        .map_err(|_| PaymentError::Facilitator("configured payTo is not an address".into()))?;
    let msg = message(&payment.payload.authorization)?;
    let signature = parse_signature(&payment.payload.signature)?;
    if signature.normalize_s().is_some() {
        // The USDC contract (OpenZeppelin's ECDSA) refuses an `s` in the upper half of the
        // curve order; such a signature recovers here but could never be settled.
        return Err(refused(
            Reason::Signature,
            "the signature's s is in the upper half of the curve order (not canonical)",
        ));
    }
    let hash = msg.eip712_signing_hash(&domain(network, asset));
    let signer = recover_signer(&hash, &signature).map_err(|_| {
        refused(
            Reason::Signature,
            "the signature does not recover to an address",
        )
    })?;
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
    Ok(Verified {
        payer: msg.from,
        nonce: msg.nonce,
        network: network.clone(),
        requirement: requirement.clone(),
    })
}

/// The authorization's validity window at unix time `now`: valid already, and still valid for
/// `margin` seconds, the time settling it may take after verification.
pub(crate) fn check_window(
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

/// The 65-byte `r‖s‖v` signature of an authorization.
pub(crate) fn parse_signature(text: &str) -> Result<Signature, PaymentError> {
    let hex_text = text.trim().trim_start_matches("0x");
    let bytes = hex::decode(hex_text)
        .map_err(|_| refused(Reason::Signature, "the signature is not hex"))?;
    Signature::from_raw(&bytes).map_err(|_| {
        refused(
            Reason::Signature,
            "the signature is not 65 bytes with a valid v",
        )
    })
}

/// A verification-only libsecp256k1 context, built once: building one costs more than a
/// recovery.
static SECP256K1: std::sync::LazyLock<secp256k1::Secp256k1<secp256k1::VerifyOnly>> =
    std::sync::LazyLock::new(secp256k1::Secp256k1::verification_only);

/// The address whose key made `signature` over `hash` (Ethereum's `ecrecover`). The same
/// answer as alloy's `Signature::recover_address_from_prehash` (k256), which a test checks,
/// in a fraction of the time: this runs on every paid call.
pub fn recover_signer(hash: &B256, signature: &Signature) -> Result<Address, secp256k1::Error> {
    use secp256k1::ecdsa::{RecoverableSignature, RecoveryId};
    let mut compact = [0u8; 64];
    compact[..32].copy_from_slice(&signature.r().to_be_bytes::<32>());
    compact[32..].copy_from_slice(&signature.s().to_be_bytes::<32>());
    let id = RecoveryId::try_from(i32::from(signature.v()))?;
    let recoverable = RecoverableSignature::from_compact(&compact, id)?;
    let message = secp256k1::Message::from_digest(hash.0);
    let key = SECP256K1.recover_ecdsa(message, &recoverable)?;
    // An address is the last 20 bytes of keccak256 of the uncompressed key without its tag.
    let digest = alloy_primitives::keccak256(&key.serialize_uncompressed()[1..]);
    Ok(Address::from_slice(&digest[12..]))
}

pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The paying side: sign an authorization as an x402 client does. The integration tests and the
/// benchmark pay with it; the server never signs payments.
pub mod signing {
    use alloy_signer::SignerSync;
    use alloy_signer_local::PrivateKeySigner;
    use serde_json::{json, Value};

    use super::*;

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
    use crate::config::Config;
    use crate::error::ErrorCode;
    use crate::money::Usd;
    use crate::x402::header;
    use crate::x402::ResourceInfo;

    fn offer(pay_to: Address) -> Offer {
        let resource = ResourceInfo {
            url: "http://x/tools/a".into(),
            description: "A".into(),
            mime_type: "application/json".into(),
        };
        Offer::new(
            &Config::new("/unused").payment,
            &pay_to.to_string(),
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
        let low = parse_signature(signature).unwrap();
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

    /// libsecp256k1's recovery gives alloy's (k256) answer: the signer for real signatures, and
    /// a refusal for the same malformed ones (r or s zero or past the curve order, r not on
    /// the curve), over random keys, hashes and bit flips.
    #[test]
    fn recovery_agrees_with_alloy() {
        use alloy_signer::SignerSync;
        use rand::Rng;
        let mut rng = rand::thread_rng();
        let n =
            U256::from_str("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
                .unwrap();
        let mut refused = 0;
        for round in 0..300 {
            let signer = PrivateKeySigner::random();
            let hash = B256::from(rng.gen::<[u8; 32]>());
            let good = signer.sign_hash_sync(&hash).unwrap();
            assert_eq!(recover_signer(&hash, &good).unwrap(), signer.address());
            let bad = match round % 6 {
                0 => Signature::new(good.r(), good.s(), !good.v()),
                1 => Signature::new(
                    U256::from_be_bytes(rng.gen::<[u8; 32]>()),
                    good.s(),
                    good.v(),
                ),
                2 => Signature::new(U256::ZERO, good.s(), good.v()),
                3 => Signature::new(good.r(), n, good.v()),
                4 => Signature::new(n + U256::from(round), good.s(), good.v()),
                _ => Signature::new(
                    good.r(),
                    good.s() ^ U256::from(1u64 << (round % 64)),
                    good.v(),
                ),
            };
            let ours = recover_signer(&hash, &bad).ok();
            let alloys = bad.recover_address_from_prehash(&hash).ok();
            assert_eq!(ours, alloys, "round {round}: {bad:?}");
            refused += usize::from(ours.is_none());
        }
        assert!(
            refused >= 150,
            "the malformed cases were refused: {refused}"
        );
    }

    #[test]
    fn accepts_a_real_signature_in_both_versions() {
        let signer = PrivateKeySigner::random();
        let offer = offer(PrivateKeySigner::random().address());
        for v2 in [true, false] {
            let verified =
                verify_exact(&pay(&offer, &signer, v2, |_| {}), &offer, unix_now()).unwrap();
            assert_eq!(verified.payer, signer.address());
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
        payment.payload.authorization.value = "1".into();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadSignature
        );
        // Someone else's `from`.
        let mut payment = pay(&offer, &signer, false, |_| {});
        payment.payload.authorization.from = pay_to.to_string();
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
        payment.scheme = "upto".into();
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
        payment.payload.signature = "0x1234".into();
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
        payment.payload.signature = high_s(&payment.payload.signature);
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidExactEvmPayloadSignature
        );
        let mut payment = pay(&offer, &signer, true, |_| {});
        payment.payload.authorization.nonce = "0x12".into();
        assert_eq!(
            reason(verify_exact(&payment, &offer, now)),
            ErrorCode::InvalidPayload
        );
    }
}
