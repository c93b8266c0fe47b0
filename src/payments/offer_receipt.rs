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

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, RwLock};

use base64::Engine;
use serde::Serialize;
use serde_json::{json, Value};

use crate::receipts::ReceiptSigner;

/// The extension's key in `extensions`.
pub const OFFER_RECEIPT: &str = "offer-receipt";

/// The receipt key as a `did:key` (multicodec `ed25519-pub`, base58btc).
pub fn did_key(signer: &ReceiptSigner) -> String {
    let mut bytes = vec![0xed, 0x01];
    bytes.extend_from_slice(&signer.public_key_bytes());
    format!("did:key:z{}", bs58::encode(bytes).into_string())
}

/// The signed payload. Its fields in the order canonical JSON sorts them (by key), so serde's
/// own output is the canonical JSON the reference signs, without building a `Value` first.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Payload<'a> {
    issued_at: i64,
    network: &'a str,
    payer: &'a str,
    resource_url: &'a str,
    version: u8,
}

/// The JWS protected header `{"alg": "EdDSA", "kid": "did:key:z…#z…"}`.
#[derive(Serialize)]
struct Header<'a> {
    alg: &'a str,
    kid: &'a str,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The base64url protected header for `signer`'s key: the same in every receipt it signs, so
/// made once per key (a server has one; the last one made is kept).
fn protected_header(signer: &ReceiptSigner) -> Arc<str> {
    static LAST: RwLock<Option<([u8; 32], Arc<str>)>> = RwLock::new(None);
    let key = signer.public_key_bytes();
    if let Some((_, header)) = LAST
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .filter(|(made_for, _)| *made_for == key)
    {
        return header.clone();
    }
    let did = did_key(signer);
    let fragment = did.trim_start_matches("did:key:");
    let kid = format!("{did}#{fragment}");
    let json = serde_json::to_vec(&Header {
        alg: "EdDSA",
        kid: &kid,
    })
    .unwrap_or_default();
    let header: Arc<str> = b64(&json).into();
    *LAST.write().unwrap_or_else(|p| p.into_inner()) = Some((key, header.clone()));
    header
}

/// The extension's `schema`, the same in every receipt.
static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
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
    })
});

/// The `offer-receipt` entry of a settlement response: the signed receipt of a payment by
/// `payer` on `network` (CAIP-2) for `resource_url`.
pub fn extension(signer: &ReceiptSigner, resource_url: &str, payer: &str, network: &str) -> Value {
    let issued_at = time::OffsetDateTime::now_utc().unix_timestamp();
    extension_at(signer, resource_url, payer, network, issued_at)
}

fn extension_at(
    signer: &ReceiptSigner,
    resource_url: &str,
    payer: &str,
    network: &str,
    issued_at: i64,
) -> Value {
    static MEMO: LazyLock<Mutex<Memo>> = LazyLock::new(Mutex::default);
    let jws = compact_jws(&MEMO, signer, resource_url, payer, network, issued_at);
    let mut extension = json!({
        "info": {"receipt": {"format": "jws", "signature": &*jws}},
    });
    // Inserted, not interpolated: `json!` would copy the schema twice (a clone, then
    // `to_value` of it), a measurable share of a paid call.
    extension["schema"] = SCHEMA.clone();
    extension
}

/// Receipts signed within the current second, by what they sign (resource, payer, network):
/// Ed25519 is deterministic, so a payer buying the same resource again within the second is
/// owed the very same bytes, and gets them without a second signature. Emptied when the second
/// or the key changes; at most [`MEMO_ENTRIES`] receipts.
#[derive(Default)]
struct Memo {
    second: i64,
    key: [u8; 32],
    receipts: HashMap<(String, String, String), Arc<str>>,
}

const MEMO_ENTRIES: usize = 1024;

/// The compact JWS of the receipt of `payer`'s payment for `resource_url` on `network` at
/// `issued_at` (seconds).
fn compact_jws(
    memo: &Mutex<Memo>,
    signer: &ReceiptSigner,
    resource_url: &str,
    payer: &str,
    network: &str,
    issued_at: i64,
) -> Arc<str> {
    let key = signer.public_key_bytes();
    let what = (
        resource_url.to_owned(),
        payer.to_owned(),
        network.to_owned(),
    );
    {
        let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
        if memo.second != issued_at || memo.key != key {
            *memo = Memo {
                second: issued_at,
                key,
                receipts: HashMap::new(),
            };
        }
        if let Some(jws) = memo.receipts.get(&what) {
            return jws.clone();
        }
    }
    let payload = serde_json::to_vec(&Payload {
        issued_at,
        network,
        payer,
        resource_url,
        version: 1,
    })
    .unwrap_or_default();
    let signing_input = format!("{}.{}", protected_header(signer), b64(&payload));
    let signature = b64(&signer.sign_raw(signing_input.as_bytes()));
    let jws: Arc<str> = format!("{signing_input}.{signature}").into();
    let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
    if memo.second == issued_at && memo.key == key && memo.receipts.len() < MEMO_ENTRIES {
        memo.receipts.insert(what, jws.clone());
    }
    jws
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipts::canonical_json;

    /// The extension as first written (JSON values throughout), which the reference verified:
    /// what [`extension`] must still make byte for byte.
    fn extension_reference(
        signer: &ReceiptSigner,
        resource_url: &str,
        payer: &str,
        network: &str,
        issued_at: i64,
    ) -> Value {
        let did = did_key(signer);
        let fragment = did.trim_start_matches("did:key:");
        let header = json!({"alg": "EdDSA", "kid": format!("{did}#{fragment}")});
        let payload = json!({
            "version": 1,
            "network": network,
            "resourceUrl": resource_url,
            "payer": payer,
            "issuedAt": issued_at,
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

    #[test]
    fn the_receipt_is_byte_for_byte_what_the_reference_verified() {
        let signers = [
            ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap(),
            ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap(),
        ];
        // Alternating keys: the header made for one key is never used for the other.
        for (n, signer) in signers.iter().chain(&signers).enumerate() {
            let url = format!("http://127.0.0.1:1/tools/a\"b\u{e9}{n}");
            let (payer, network) = ("0xAbC0000000000000000000000000000000000001", "eip155:84532");
            let made = extension_at(signer, &url, payer, network, 1_767_225_600 + n as i64);
            let reference =
                extension_reference(signer, &url, payer, network, 1_767_225_600 + n as i64);
            assert_eq!(made.to_string(), reference.to_string());
        }
    }

    #[test]
    fn a_payer_buying_again_within_the_second_gets_the_same_receipt_signed_once() {
        let signer = ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap();
        let (url, network) = ("http://127.0.0.1:1/tools/memo", "eip155:84532");
        let (payer, other) = (
            "0xAbC0000000000000000000000000000000000001",
            "0xAbC0000000000000000000000000000000000002",
        );
        let memo = Mutex::default();
        let second = 1_900_000_000;
        let first = compact_jws(&memo, &signer, url, payer, network, second);
        let again = compact_jws(&memo, &signer, url, payer, network, second);
        assert!(
            Arc::ptr_eq(&first, &again),
            "the memo's receipt, not a new signature"
        );
        for different in [
            compact_jws(&memo, &signer, url, other, network, second),
            compact_jws(
                &memo,
                &signer,
                "http://127.0.0.1:1/tools/other",
                payer,
                network,
                second,
            ),
            compact_jws(&memo, &signer, url, payer, "eip155:8453", second),
            compact_jws(&memo, &signer, url, payer, network, second + 1),
        ] {
            assert_ne!(&*different, &*first);
        }
        let reference = extension_reference(&signer, url, payer, network, second);
        assert_eq!(reference["info"]["receipt"]["signature"], json!(&*first));
    }
}
