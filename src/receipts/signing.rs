//! The service's Ed25519 receipt key: generated on first start into `DATA/receipt_signing_key`
//! (hex of the 32-byte secret, mode 0600), read on every later start.

use std::path::Path;

use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

use super::record::Receipt;
use crate::keyfile;

#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    #[error("cannot read or create the receipt signing key: {0}")]
    Io(#[from] std::io::Error),
    #[error("the receipt signing key file is not 32 bytes of hex")]
    Corrupt,
}

pub struct ReceiptSigner {
    key: SigningKey,
}

impl ReceiptSigner {
    pub fn load_or_generate(path: &Path) -> Result<Self, SigningError> {
        let (text, _) = keyfile::load_or_generate(path, || {
            hex::encode(SigningKey::generate(&mut rand::rngs::OsRng).to_bytes())
        })?;
        let bytes: [u8; 32] = hex::decode(text.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or(SigningError::Corrupt)?;
        Ok(Self {
            key: SigningKey::from_bytes(&bytes),
        })
    }

    /// Base64 of the public key.
    pub fn public_key(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.key.verifying_key().to_bytes())
    }

    /// Fills in `receipt.signature` over its canonical bytes.
    pub fn sign(&self, receipt: &mut Receipt) {
        receipt.signature.alg = "ed25519".into();
        receipt.signature.public_key = self.public_key();
        receipt.signature.value = self.sign_bytes(&receipt.signed_bytes());
    }

    /// Base64 of the signature over `bytes` (other signed records: payout packets).
    pub fn sign_bytes(&self, bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.key.sign(bytes).to_bytes())
    }
}

/// Checks a receipt's signature against a public key (base64), as an offline verifier does.
pub fn verify(receipt: &Receipt, public_key_b64: &str) -> bool {
    let engine = base64::engine::general_purpose::STANDARD;
    let key = engine
        .decode(public_key_b64)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok());
    let signature = engine
        .decode(&receipt.signature.value)
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b).ok())
        .map(|b| Signature::from_bytes(&b));
    match (key, signature) {
        (Some(key), Some(signature)) => key.verify(&receipt.signed_bytes(), &signature).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::{
        PaymentMethod, ReceiptSettlement, ReceiptSignature, RECEIPT_SCHEMA,
    };
    use super::*;

    #[test]
    fn signs_verifiably_and_keeps_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let signer = ReceiptSigner::load_or_generate(&path).unwrap();
        let mut receipt = Receipt {
            receipt_id: "rcpt_1".into(),
            schema: RECEIPT_SCHEMA.into(),
            purpose: "invocation".into(),
            endpoint_slug: Some("a".into()),
            price_usd: "0.001".into(),
            amount: "1000".into(),
            asset: None,
            network: None,
            payer: None,
            payment_method: PaymentMethod::Free,
            x402_version: None,
            charged: false,
            settlement: ReceiptSettlement::not_applicable(),
            request_sha256: "00".into(),
            result_sha256: "11".into(),
            issued_at: "2026-01-01T00:00:00Z".into(),
            url: "http://x/ai/receipts/rcpt_1".into(),
            signature: ReceiptSignature {
                alg: String::new(),
                public_key: String::new(),
                value: String::new(),
            },
        };
        signer.sign(&mut receipt);
        assert!(verify(&receipt, &signer.public_key()));
        assert_eq!(
            ReceiptSigner::load_or_generate(&path).unwrap().public_key(),
            signer.public_key()
        );
        receipt.amount = "1".into();
        assert!(!verify(&receipt, &signer.public_key()));
    }
}
