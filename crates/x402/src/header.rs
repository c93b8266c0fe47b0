//! The payment headers: `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1) in, `PAYMENT-RESPONSE` or
//! `X-PAYMENT-RESPONSE` out. Each is base64 of JSON.
//!
//! v2 payload: `{x402Version:2, resource?, accepted:{…requirements…}, payload}`;
//! v1 payload: `{x402Version:1, scheme, network, payload}`; `payload` is the scheme's own
//! ([`SchemePayload`]).

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::requirements::PaymentRequirements;
use super::schemes::SchemePayload;
use super::PaymentError;

pub const PAYMENT_SIGNATURE_HEADER: HeaderName = HeaderName::from_static("payment-signature");
pub const X_PAYMENT_HEADER: HeaderName = HeaderName::from_static("x-payment");
pub const PAYMENT_RESPONSE_HEADER: HeaderName = HeaderName::from_static("payment-response");
pub const X_PAYMENT_RESPONSE_HEADER: HeaderName = HeaderName::from_static("x-payment-response");

/// The `payment-identifier` extension's key in `extensions` ([`super::payment_ids`]), and the
/// length bounds of its id (`@x402/extensions` 2.27.0).
pub const PAYMENT_IDENTIFIER: &str = "payment-identifier";
pub const PAYMENT_ID_MIN_LEN: usize = 16;
pub const PAYMENT_ID_MAX_LEN: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X402Version {
    V1,
    V2,
}

impl X402Version {
    pub fn number(self) -> u8 {
        match self {
            X402Version::V1 => 1,
            X402Version::V2 => 2,
        }
    }
}

/// A decoded payment, whichever version carried it.
#[derive(Clone, Debug)]
pub struct PaymentPayload {
    pub version: X402Version,
    /// As the client named it: CAIP-2 (v2) or a v1 name.
    pub network: String,
    /// v2 only: the requirement the client chose to pay.
    pub accepted: Option<PaymentRequirements>,
    /// v2 only, when the client names it: the URL of the resource it pays for (the 402's
    /// `resource.url`), which must be the one the payment is presented to.
    pub resource_url: Option<String>,
    /// The scheme's part, read as the scheme it names defines it.
    pub payload: SchemePayload,
    /// v2 only: the client's `payment-identifier` extension id, which makes the call idempotent
    /// ([`super::payment_ids`]).
    pub payment_id: Option<String>,
    /// The decoded JSON as received, forwarded unchanged to a remote facilitator.
    pub raw: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct V2Wire {
    accepted: PaymentRequirements,
    #[serde(default)]
    resource: Option<V2Resource>,
    payload: Value,
}

#[derive(Deserialize)]
struct V2Resource {
    url: String,
}

#[derive(Deserialize)]
struct V1Wire {
    scheme: String,
    network: String,
    payload: Value,
}

impl PaymentPayload {
    /// The scheme the payment names.
    pub fn scheme(&self) -> &str {
        self.payload.scheme()
    }
}

/// The payment of a request, if it carries one. Either header may hold either version; the
/// version inside decides.
pub fn from_headers(headers: &HeaderMap) -> Result<Option<PaymentPayload>, PaymentError> {
    let Some(value) = headers
        .get(PAYMENT_SIGNATURE_HEADER)
        .or_else(|| headers.get(X_PAYMENT_HEADER))
    else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| PaymentError::Malformed("the header is not ASCII".into()))?;
    decode(text).map(Some)
}

/// Decodes base64 (standard or URL-safe, padding optional) JSON into a payment.
pub fn decode(text: &str) -> Result<PaymentPayload, PaymentError> {
    let text = text.trim();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .or_else(|_| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text.trim_end_matches('='))
        })
        .map_err(|_| PaymentError::Malformed("the header is not base64".into()))?;
    let raw: Value = serde_json::from_slice(&bytes)
        .map_err(|_| PaymentError::Malformed("the header is not base64 of JSON".into()))?;
    from_json(raw)
}

/// A payment payload from its JSON (what the header carries in base64, or MCP's
/// `_meta["x402/payment"]` as is).
pub fn from_json(raw: Value) -> Result<PaymentPayload, PaymentError> {
    let shape = |e: serde_json::Error| {
        PaymentError::Malformed(format!("the payment payload has the wrong shape: {e}"))
    };
    match raw.get("x402Version").and_then(Value::as_u64) {
        Some(2) => {
            let wire = V2Wire::deserialize(&raw).map_err(shape)?;
            Ok(PaymentPayload {
                version: X402Version::V2,
                payload: SchemePayload::parse(&wire.accepted.scheme, wire.payload)
                    .map_err(shape)?,
                network: wire.accepted.network.clone(),
                accepted: Some(wire.accepted),
                resource_url: wire.resource.map(|resource| resource.url),
                payment_id: payment_id(raw.get("extensions"))?,
                raw,
            })
        }
        Some(1) => {
            let wire = V1Wire::deserialize(&raw).map_err(shape)?;
            Ok(PaymentPayload {
                version: X402Version::V1,
                payload: SchemePayload::parse(&wire.scheme, wire.payload).map_err(shape)?,
                network: wire.network,
                accepted: None,
                resource_url: None,
                payment_id: None,
                raw,
            })
        }
        _ => Err(PaymentError::Malformed("x402Version must be 1 or 2".into())),
    }
}

/// The id a v2 payment payload's `extensions` carries, if any. An id of the wrong type or
/// format is a malformed payment (400), not silently ignored: the client asked for
/// idempotency and would not get it.
pub fn payment_id(extensions: Option<&Value>) -> Result<Option<String>, PaymentError> {
    let Some(id) = extensions
        .and_then(|e| e.get(PAYMENT_IDENTIFIER))
        .and_then(|e| e.get("info"))
        .and_then(|info| info.get("id"))
    else {
        return Ok(None);
    };
    match id.as_str() {
        Some(id) if valid_payment_id(id) => Ok(Some(id.to_string())),
        _ => Err(PaymentError::Malformed(format!(
            "extensions[\"{PAYMENT_IDENTIFIER}\"].info.id must be {PAYMENT_ID_MIN_LEN} to {PAYMENT_ID_MAX_LEN} characters of A-Z, a-z, 0-9, '_' and '-'"
        ))),
    }
}

fn valid_payment_id(id: &str) -> bool {
    (PAYMENT_ID_MIN_LEN..=PAYMENT_ID_MAX_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What the response header reports about a settled payment.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SettlementResponse {
    pub success: bool,
    /// The on-chain transaction hash; empty when settlement was recorded off-chain.
    pub transaction: String,
    pub network: String,
    pub payer: String,
    /// v2: x402 extensions' answers (`offer-receipt`: the signed receipt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
}

/// The response header for the payment's version.
pub fn response_header(
    version: X402Version,
    response: &SettlementResponse,
) -> Option<(HeaderName, HeaderValue)> {
    let name = match version {
        X402Version::V2 => PAYMENT_RESPONSE_HEADER,
        X402Version::V1 => X_PAYMENT_RESPONSE_HEADER,
    };
    let json = serde_json::to_vec(response).ok()?;
    let value =
        HeaderValue::from_str(&base64::engine::general_purpose::STANDARD.encode(json)).ok()?;
    Some((name, value))
}

/// Base64 of a payment payload, as clients send it (used by tests and the benchmark).
pub fn encode(payload: &Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(payload.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn authorization() -> Value {
        json!({"from": "0x1", "to": "0x2", "value": "1000", "validAfter": "0", "validBefore": "99", "nonce": "0x00"})
    }

    #[test]
    fn reads_the_id_as_the_reference_formats_it() {
        let ext = |id: Value| json!({PAYMENT_IDENTIFIER: {"info": {"required": false, "id": id}}});
        assert_eq!(
            payment_id(Some(&ext(json!("pay_7d5d747be160e280")))).unwrap(),
            Some("pay_7d5d747be160e280".into())
        );
        assert_eq!(payment_id(None).unwrap(), None);
        assert_eq!(
            payment_id(Some(
                &json!({PAYMENT_IDENTIFIER: {"info": {"required": false}}})
            ))
            .unwrap(),
            None
        );
        for bad in [
            json!("short"),
            json!("pay_7d5d747be160e28!"),
            json!(12345678901234567u64),
            json!("x".repeat(129)),
        ] {
            assert!(payment_id(Some(&ext(bad.clone()))).is_err(), "{bad}");
        }
    }

    #[test]
    fn decodes_both_versions() {
        let v1 = json!({"x402Version": 1, "scheme": "exact", "network": "base-sepolia",
            "payload": {"signature": "0xab", "authorization": authorization()}});
        let p = decode(&encode(&v1)).unwrap();
        assert_eq!(
            (p.version, p.network.as_str()),
            (X402Version::V1, "base-sepolia")
        );
        let v2 = json!({"x402Version": 2, "resource": {"url": "u", "description": "", "mimeType": ""},
            "accepted": {"scheme": "exact", "network": "eip155:84532", "amount": "1000", "asset": "0xa",
                "payTo": "0x2", "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}},
            "payload": {"signature": "0xab", "authorization": authorization()}});
        let p = decode(&encode(&v2)).unwrap();
        assert_eq!(
            (p.version, p.network.as_str()),
            (X402Version::V2, "eip155:84532")
        );
        match &p.payload {
            SchemePayload::ExactEvm(payload) => assert_eq!(payload.authorization.value, "1000"),
            other => panic!("an exact payment read as {other:?}"),
        }
    }

    #[test]
    fn refuses_malformed() {
        for bad in [
            "%%%",
            "bm90IGpzb24",
            &encode(&json!({"x402Version": 3})),
            &encode(&json!({"x402Version": 1})),
        ] {
            assert!(
                matches!(decode(bad), Err(PaymentError::Malformed(_))),
                "{bad}"
            );
        }
    }

    mod properties {
        //! The header parser on untrusted input (docs/fuzzing.md): whatever a client sends
        //! decodes or is `Malformed`, never panics, and a decoded payment re-encoded decodes to
        //! the same payment.

        use proptest::prelude::*;
        use serde_json::{json, Value};

        use super::super::*;
        use toolhost_testkit::arbitrary;

        const WORDS: &[&str] = &[
            "x402Version",
            "scheme",
            "network",
            "payload",
            "accepted",
            "resource",
            "signature",
            "authorization",
            "from",
            "to",
            "value",
            "validAfter",
            "validBefore",
            "nonce",
            "amount",
            "asset",
            "payTo",
            "maxTimeoutSeconds",
            "extra",
            "name",
            "version",
            "url",
            "description",
            "mimeType",
            "exact",
            "eip155:84532",
            "base-sepolia",
        ];

        /// The same payment: every field the gate reads, and the JSON forwarded to a remote
        /// facilitator.
        fn assert_same(a: &PaymentPayload, b: &PaymentPayload) {
            assert_eq!(a.version, b.version);
            assert_eq!(a.scheme(), b.scheme());
            assert_eq!(a.network, b.network);
            assert_eq!(a.accepted, b.accepted);
            assert_eq!(a.payload, b.payload);
            assert_eq!(a.raw, b.raw);
        }

        /// What any decoded payment must satisfy.
        fn check_decoded(payment: &PaymentPayload) {
            let number = payment.raw.get("x402Version").and_then(Value::as_u64);
            assert_eq!(number, Some(u64::from(payment.version.number())));
            match (&payment.accepted, payment.version) {
                (Some(accepted), X402Version::V2) => {
                    assert_eq!(
                        (accepted.scheme.as_str(), &accepted.network),
                        (payment.scheme(), &payment.network)
                    );
                }
                (None, X402Version::V1) => {}
                (accepted, version) => panic!("{version:?} with accepted {accepted:?}"),
            }
            // Re-serialized, in either base64 alphabet, it parses to the same value.
            let again = decode(&encode(&payment.raw)).expect("a decoded payment re-encodes");
            assert_same(payment, &again);
            let url_safe =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(payment.raw.to_string());
            assert_same(payment, &decode(&url_safe).expect("URL-safe form"));
            assert_eq!(
                SchemePayload::parse(payment.scheme(), payment.raw["payload"].clone()).ok(),
                Some(payment.payload.clone()),
                "the payload reads the same from the JSON it came in"
            );
        }

        fn check(result: Result<PaymentPayload, PaymentError>) -> Result<(), TestCaseError> {
            match result {
                Ok(payment) => check_decoded(&payment),
                Err(e) => prop_assert!(matches!(e, PaymentError::Malformed(_)), "{e}"),
            }
            Ok(())
        }

        /// A well-formed payment of either version, with any text in its fields.
        fn payment() -> impl Strategy<Value = Value> {
            let text = || arbitrary::text(WORDS);
            let authorization = (text(), text(), text(), text(), text(), text()).prop_map(
                |(from, to, value, after, before, nonce)| {
                    json!({"from": from, "to": to, "value": value, "validAfter": after,
                        "validBefore": before, "nonce": nonce})
                },
            );
            let payload = (text(), authorization).prop_map(|(signature, authorization)| {
                json!({"signature": signature, "authorization": authorization})
            });
            let v1 = (text(), text(), payload.clone()).prop_map(|(scheme, network, payload)| {
                json!({"x402Version": 1, "scheme": scheme, "network": network, "payload": payload})
            });
            let accepted = (
                (text(), text(), text(), text(), text()),
                any::<u64>(),
                (text(), text()),
            )
                .prop_map(
                    |((scheme, network, amount, asset, pay_to), timeout, (name, version))| {
                        json!({"scheme": scheme, "network": network, "amount": amount,
                        "asset": asset, "payTo": pay_to, "maxTimeoutSeconds": timeout,
                        "extra": {"name": name, "version": version}})
                    },
                );
            let v2 = (accepted, payload, proptest::option::of(text())).prop_map(
                |(accepted, payload, url)| {
                    let mut v2 =
                        json!({"x402Version": 2, "accepted": accepted, "payload": payload});
                    if let Some(url) = url {
                        v2["resource"] = json!({"url": url, "description": "", "mimeType": ""});
                    }
                    v2
                },
            );
            prop_oneof![v1, v2]
        }

        proptest! {
            #[test]
            fn any_text_decodes_or_is_malformed(text in any::<String>()) {
                check(decode(&text))?;
            }

            #[test]
            fn base64_of_any_json_decodes_or_is_malformed(raw in arbitrary::json(WORDS)) {
                check(decode(&encode(&raw)))?;
                check(from_json(raw))?;
            }

            #[test]
            fn well_formed_payments_decode_to_their_fields(raw in payment()) {
                let payment = decode(&encode(&raw)).expect("well-formed");
                check_decoded(&payment);
                prop_assert_eq!(&payment.payload.to_value(), &raw["payload"]);
                let scheme = raw.get("scheme").unwrap_or(&raw["accepted"]["scheme"]);
                prop_assert_eq!(&json!(payment.scheme()), scheme);
            }

            #[test]
            fn any_header_bytes_decode_or_are_malformed(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
                let Ok(value) = HeaderValue::from_bytes(&bytes) else { return Ok(()) };
                for name in [PAYMENT_SIGNATURE_HEADER, X_PAYMENT_HEADER] {
                    let mut headers = HeaderMap::new();
                    headers.insert(name, value.clone());
                    match from_headers(&headers) {
                        Ok(Some(payment)) => check_decoded(&payment),
                        Err(_) => {}
                        Ok(None) => prop_assert!(false, "a payment header read as none"),
                    }
                }
            }
        }
    }
}
