//! The x402 `offer-receipt` extension (a draft): the receipt of a paid call also in the
//! extension's signed format, in the settlement response, so a standard x402 client can verify
//! what it paid for without knowing toolhost's own receipt.
//!
//! Followed: `@x402/extensions` 2.27.0 (`offer-receipt`, extension version 1), whose format
//! is still a draft. The receipt is a compact JWS (`{format: "jws", signature}`) by the
//! service's Ed25519 receipt key: header `{"alg": "EdDSA", "kid": "did:key:z…#z…"}` (the key as
//! a `did:key`, which the reference resolves by itself), payload the canonical JSON (keys
//! sorted) of `{version: 1, network, resourceUrl, payer, issuedAt}` (seconds), as the reference's
//! `createReceiptJWS` makes it; the transaction hash is left out, as by the reference's default
//! (`includeTxHash: false`). It rides in `PAYMENT-RESPONSE` as
//! `extensions["offer-receipt"] = {info: {receipt}, schema}`. Signed offers in the 402 are not
//! issued.

use base64::Engine;
use serde_json::{json, Value};

use crate::receipts::{canonical_json, ReceiptSigner};

/// The extension's key in `extensions`.
pub const OFFER_RECEIPT: &str = "offer-receipt";

/// The receipt key as a `did:key` (multicodec `ed25519-pub`, base58btc).
pub fn did_key(signer: &ReceiptSigner) -> String {
    let mut bytes = vec![0xed, 0x01];
    bytes.extend_from_slice(&signer.public_key_bytes());
    format!("did:key:z{}", bs58::encode(bytes).into_string())
}

/// The `offer-receipt` entry of a settlement response: the signed receipt of a payment by
/// `payer` on `network` (CAIP-2) for `resource_url`.
pub fn extension(signer: &ReceiptSigner, resource_url: &str, payer: &str, network: &str) -> Value {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let did = did_key(signer);
    let fragment = did.trim_start_matches("did:key:");
    let header = json!({"alg": "EdDSA", "kid": format!("{did}#{fragment}")});
    let payload = json!({
        "version": 1,
        "network": network,
        "resourceUrl": resource_url,
        "payer": payer,
        "issuedAt": time::OffsetDateTime::now_utc().unix_timestamp(),
    });
    let signing_input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(canonical_json(&payload).as_bytes())
    );
    let signature = b64(&signer.sign_raw(signing_input.as_bytes()));
    json!({
        "info": {"receipt": {"format": "jws", "signature": format!("{signing_input}.{signature}")}},
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "receipt": {
                    "type": "object",
                    "properties": {
                        "format": {"type": "string"},
                        "payload": {
                            "type": "object",
                            "properties": {
                                "version": {"type": "integer"},
                                "network": {"type": "string"},
                                "resourceUrl": {"type": "string"},
                                "payer": {"type": "string"},
                                "issuedAt": {"type": "integer"},
                                "transaction": {"type": "string"}
                            },
                            "required": ["version", "network", "resourceUrl", "payer", "issuedAt"]
                        },
                        "signature": {"type": "string"}
                    },
                    "required": ["format", "signature"]
                }
            },
            "required": ["receipt"]
        }
    })
}
