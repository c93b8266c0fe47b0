//! Signatures as EVM chains make them, shared by every EVM scheme: a 65-byte `r‖s‖v`
//! signature, the canonical-`s` rule token contracts enforce, and signer recovery
//! (`ecrecover`).

use alloy_primitives::{Address, Signature, B256};

use super::{PaymentError, Reason};

/// The 65-byte `r‖s‖v` signature of a payment, in hex.
pub fn parse_signature(text: &str) -> Result<Signature, PaymentError> {
    let hex_text = text.trim().trim_start_matches("0x");
    let bytes = hex::decode(hex_text)
        .map_err(|_| PaymentError::refused(Reason::Signature, "the signature is not hex"))?;
    Signature::from_raw(&bytes).map_err(|_| {
        PaymentError::refused(
            Reason::Signature,
            "the signature is not 65 bytes with a valid v",
        )
    })
}

/// The address that signed `hash`, refusing what a token contract would refuse.
pub fn signer(hash: &B256, signature: &Signature) -> Result<Address, PaymentError> {
    if signature.normalize_s().is_some() {
        // Contracts built on OpenZeppelin's ECDSA (USDC, Permit2) refuse an `s` in the upper
        // half of the curve order; such a signature recovers here but could never be settled.
        return Err(PaymentError::refused(
            Reason::Signature,
            "the signature's s is in the upper half of the curve order (not canonical)",
        ));
    }
    recover_signer(hash, signature).map_err(|_| {
        PaymentError::refused(
            Reason::Signature,
            "the signature does not recover to an address",
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

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use alloy_primitives::U256;
    use alloy_signer_local::PrivateKeySigner;

    use super::*;

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
}
