//! The service's Ed25519 receipt key: hex of the 32-byte secret, kept by the
//! [`Keyring`](crate::keyring::Keyring) (`DATA/receipt_signing_key`, mode 0600, on the embedded
//! store; the shared store for a cluster, so every node signs with the same key).

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

use super::receipt::{Receipt, ReceiptSignature};

#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    #[error("the receipt signing key is not 32 bytes of hex")]
    Corrupt,
}

pub struct ReceiptSigner {
    key: SigningKey,
    /// Receipts signed by themselves since start (`/metrics`).
    receipts_signed: AtomicU64,
}

impl ReceiptSigner {
    /// A new random key, as the hex text [`ReceiptSigner::from_hex`] reads.
    pub fn generate_hex() -> String {
        hex::encode(SigningKey::generate(&mut rand::rngs::OsRng).to_bytes())
    }

    pub fn from_hex(text: &str) -> Result<Self, SigningError> {
        let bytes: [u8; 32] = hex::decode(text.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or(SigningError::Corrupt)?;
        Ok(Self {
            key: SigningKey::from_bytes(&bytes),
            receipts_signed: AtomicU64::new(0),
        })
    }

    /// Base64 of the public key.
    pub fn public_key(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.key.verifying_key().to_bytes())
    }

    /// Sets `receipt.signature` over its canonical bytes.
    pub fn sign(&self, receipt: &mut Receipt) {
        receipt.signature = Some(ReceiptSignature {
            alg: "ed25519".into(),
            public_key: self.public_key(),
            value: self.sign_bytes(&receipt.signed_bytes()),
        });
        self.receipts_signed.fetch_add(1, Ordering::Relaxed);
    }

    /// Receipts [signed](Self::sign) since start.
    pub fn receipts_signed(&self) -> u64 {
        self.receipts_signed.load(Ordering::Relaxed)
    }

    /// The same key signing notes under `name` (the receipt log's checkpoints).
    pub fn note_signer(
        &self,
        name: &str,
    ) -> Result<toolhost_tlog::Signer, toolhost_tlog::NoteError> {
        toolhost_tlog::Signer::new(name, &self.key.to_bytes())
    }

    /// The raw public key.
    pub fn public_key_bytes(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The raw signature over `bytes` (records signed in other encodings: x402 offer-receipt JWS).
    pub fn sign_raw(&self, bytes: &[u8]) -> [u8; 64] {
        self.key.sign(bytes).to_bytes()
    }

    /// Base64 of the signature over `bytes` (other signed records: payout packets).
    pub fn sign_bytes(&self, bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.key.sign(bytes).to_bytes())
    }
}

/// Checks a receipt's own signature against a public key (base64), as an offline verifier does;
/// false for a receipt without one.
pub fn verify(receipt: &Receipt, public_key_b64: &str) -> bool {
    let Some(own) = &receipt.signature else {
        return false;
    };
    let engine = base64::engine::general_purpose::STANDARD;
    let key = engine
        .decode(public_key_b64)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok());
    let signature = engine
        .decode(&own.value)
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
    use super::*;

    #[test]
    fn signs_verifiably_and_keeps_its_key() {
        let key = ReceiptSigner::generate_hex();
        let signer = ReceiptSigner::from_hex(&key).unwrap();
        let mut receipt = Receipt::example();
        signer.sign(&mut receipt);
        assert!(verify(&receipt, &signer.public_key()));
        assert_eq!(
            ReceiptSigner::from_hex(&key).unwrap().public_key(),
            signer.public_key()
        );
        assert!(ReceiptSigner::from_hex("00").is_err());
        receipt.amount = "1".into();
        assert!(!verify(&receipt, &signer.public_key()));
        receipt.signature = None;
        assert!(!verify(&receipt, &signer.public_key()));
    }
}
