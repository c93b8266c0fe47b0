//! x402 payment requirements: reading them from a 402 response and validating their fields.
//!
//! v2 servers send `PAYMENT-REQUIRED: base64(json)` with `accepts[]` items of
//! `{scheme, network: "eip155:<chain>", amount, asset, payTo}`; v1 servers send a JSON body with
//! `accepts[]` items of `{scheme, network: "<name>", maxAmountRequired, resource, asset, payTo}`.
//! Only EVM networks are checked, so addresses must be `0x` + 40 hex digits.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::Value;

use super::report::{quote, Findings};
use crate::net::FetchedResponse;

/// x402 v1 names of EVM networks.
const V1_EVM_NETWORKS: &[&str] = &[
    "base",
    "base-sepolia",
    "avalanche",
    "avalanche-fuji",
    "iotex",
    "sei",
    "sei-testnet",
    "polygon",
    "polygon-amoy",
    "peaq",
    "story",
    "educhain",
    "abstract",
    "abstract-testnet",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Version {
    V1,
    V2,
}

/// The x402 version a requirements document declares, if it is 1 or 2.
pub(super) fn declared_version(doc: &Value) -> Option<Version> {
    match doc.get("x402Version").and_then(Value::as_u64) {
        Some(1) => Some(Version::V1),
        Some(2) => Some(Version::V2),
        _ => None,
    }
}

/// Problems with one `accepts[]` item, each prefixed with `at` (e.g. `accepts[0]`).
pub(super) fn requirement_problems(item: &Value, version: Version, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if !item.is_object() {
        problems.push(format!("{at} is not an object"));
        return problems;
    }
    let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::trim);
    match text("scheme") {
        Some(s) if !s.is_empty() => {}
        _ => problems.push(format!("{at}.scheme is missing")),
    }
    match (version, text("network")) {
        (_, None) => problems.push(format!("{at}.network is missing")),
        (Version::V2, Some(n)) if !is_eip155(n) => problems.push(format!(
            "{at}.network {} is not a CAIP-2 eip155:<chainId> id",
            quote(n)
        )),
        (Version::V1, Some(n)) if !V1_EVM_NETWORKS.contains(&n) => problems.push(format!(
            "{at}.network {} is not a known x402 v1 EVM network",
            quote(n)
        )),
        _ => {}
    }
    let amount_key = match version {
        Version::V1 => "maxAmountRequired",
        Version::V2 => "amount",
    };
    match text(amount_key) {
        None => problems.push(format!(
            "{at}.{amount_key} is missing (an integer string of atomic units)"
        )),
        Some(a) if !is_positive_integer(a) => problems.push(format!(
            "{at}.{amount_key} {} is not a positive integer string",
            quote(a)
        )),
        _ => {}
    }
    for key in ["payTo", "asset"] {
        match text(key) {
            None => problems.push(format!("{at}.{key} is missing")),
            Some(a) if !is_evm_address(a) => {
                problems.push(format!("{at}.{key} {} is not an EVM address", quote(a)))
            }
            Some(a) if key == "payTo" && is_zero_address(a) => {
                problems.push(format!("{at}.payTo is the zero address"))
            }
            _ => {}
        }
    }
    if version == Version::V1 {
        match text("resource") {
            None => problems.push(format!("{at}.resource is missing")),
            Some(r) if !is_http_url(r) => problems.push(format!(
                "{at}.resource {} is not an absolute http(s) URL",
                quote(r)
            )),
            _ => {}
        }
    }
    if let Some(t) = item.get("maxTimeoutSeconds") {
        if t.as_u64().is_none_or(|t| t == 0) {
            problems.push(format!("{at}.maxTimeoutSeconds is not a positive integer"));
        }
    }
    problems
}

/// Problems with a whole requirements document: its version and every `accepts[]` item.
pub(super) fn document_problems(doc: &Value, version: Version) -> Vec<String> {
    let mut problems = Vec::new();
    if declared_version(doc) != Some(version) {
        let expected = match version {
            Version::V1 => 1,
            Version::V2 => 2,
        };
        problems.push(format!("x402Version is not {expected}"));
    }
    match doc.get("accepts").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                problems.extend(requirement_problems(
                    item,
                    version,
                    &format!("accepts[{i}]"),
                ));
            }
        }
        _ => problems.push("accepts is missing or empty".into()),
    }
    problems
}

/// Reads the requirements of a 402 response into checks. `method` is the probe that got it.
pub(super) fn analyze_402(method: &str, response: &FetchedResponse, f: &mut Findings) {
    f.pass(
        "http_402",
        format!("{method} answered HTTP 402 Payment Required"),
    );
    let header = response.headers.get("payment-required");
    let body: Option<Value> = serde_json::from_slice::<Value>(&response.body)
        .ok()
        .filter(|v| v.get("x402Version").is_some() || v.get("accepts").is_some());

    let mut found = Vec::new();
    if let Some(value) = header {
        found.push("PAYMENT-REQUIRED header (v2)");
        match value.to_str().ok().and_then(decode_header) {
            Some(doc) => f.verdict(
                "v2_payment_required_header",
                accepts_note(&doc, "PAYMENT-REQUIRED decodes to x402 v2 requirements"),
                &document_problems(&doc, Version::V2),
                "Fix the x402 v2 requirements in the PAYMENT-REQUIRED header (see the check notes)",
            ),
            None => f.fail(
                "v2_payment_required_header",
                "PAYMENT-REQUIRED is not base64-encoded JSON",
                "Send PAYMENT-REQUIRED as base64 of the JSON requirements object",
            ),
        }
    }
    if let Some(doc) = &body {
        if declared_version(doc) == Some(Version::V2) {
            found.push("JSON body (v2)");
            f.verdict(
                "v2_body_requirements",
                accepts_note(doc, "the body carries x402 v2 requirements"),
                &document_problems(doc, Version::V2),
                "Fix the x402 v2 requirements in the 402 body (see the check notes)",
            );
            if header.is_none() {
                f.fail(
                    "v2_payment_required_header",
                    "x402 v2 requirements are in the body but there is no PAYMENT-REQUIRED header",
                    "Send the v2 requirements base64-encoded in a PAYMENT-REQUIRED header; v2 clients read the header",
                );
            }
        } else {
            found.push("JSON body (v1)");
            f.verdict(
                "v1_body_requirements",
                accepts_note(doc, "the body carries x402 v1 requirements"),
                &document_problems(doc, Version::V1),
                "Fix the x402 v1 requirements in the 402 JSON body (see the check notes)",
            );
        }
    }
    if found.is_empty() {
        f.fail(
            "payment_requirements",
            "HTTP 402 without x402 requirements: no PAYMENT-REQUIRED header and no JSON body with x402Version and accepts",
            "Answer unpaid requests with HTTP 402 and a PAYMENT-REQUIRED header carrying base64 JSON {x402Version: 2, accepts: [{scheme, network, amount, asset, payTo}]}",
        );
    } else {
        f.pass(
            "payment_requirements",
            format!("found: {}", found.join(", ")),
        );
        if header.is_none() {
            f.action("Also send x402 v2 requirements in a base64 PAYMENT-REQUIRED header so v2 clients can pay");
        }
    }
}

fn accepts_note(doc: &Value, lead: &str) -> String {
    let n = doc
        .get("accepts")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    format!("{lead} with {n} payment option(s)")
}

/// Decodes a `PAYMENT-REQUIRED` value: base64 (standard or URL-safe, padded or not) of JSON.
fn decode_header(value: &str) -> Option<Value> {
    let value = value.trim();
    let bytes = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(value).ok())?;
    serde_json::from_slice(&bytes).ok()
}

fn is_eip155(network: &str) -> bool {
    network.strip_prefix("eip155:").is_some_and(|id| {
        !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
    })
}

fn is_positive_integer(amount: &str) -> bool {
    !amount.is_empty()
        && amount.len() <= 78
        && amount.bytes().all(|b| b.is_ascii_digit())
        && amount.bytes().any(|b| b != b'0')
}

pub(super) fn is_evm_address(address: &str) -> bool {
    address
        .strip_prefix("0x")
        .or_else(|| address.strip_prefix("0X"))
        .is_some_and(|hex| hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_zero_address(address: &str) -> bool {
    address.bytes().skip(2).all(|b| b == b'0')
}

pub(super) fn is_http_url(text: &str) -> bool {
    url::Url::parse(text)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PAY_TO: &str = "0x1111111111111111111111111111111111111111";
    const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

    #[test]
    fn valid_items_have_no_problems() {
        let v2 = json!({"scheme": "exact", "network": "eip155:84532", "amount": "1000", "asset": USDC, "payTo": PAY_TO, "maxTimeoutSeconds": 300});
        assert!(requirement_problems(&v2, Version::V2, "a").is_empty());
        let v1 = json!({"scheme": "exact", "network": "base-sepolia", "maxAmountRequired": "1000", "asset": USDC, "payTo": PAY_TO, "resource": "https://x.example/tools/a"});
        assert!(requirement_problems(&v1, Version::V1, "a").is_empty());
    }

    #[test]
    fn bad_fields_are_named() {
        let item = json!({"scheme": "", "network": "base", "amount": "0.01", "asset": "USDC", "payTo": "0x0000000000000000000000000000000000000000"});
        let problems = requirement_problems(&item, Version::V2, "accepts[0]");
        assert_eq!(
            problems,
            vec![
                "accepts[0].scheme is missing",
                "accepts[0].network \"base\" is not a CAIP-2 eip155:<chainId> id",
                "accepts[0].amount \"0.01\" is not a positive integer string",
                "accepts[0].payTo is the zero address",
                "accepts[0].asset \"USDC\" is not an EVM address",
            ]
        );
        let v1 = json!({"scheme": "exact", "network": "eip155:8453", "amount": "5", "payTo": "bob", "asset": USDC, "resource": "/relative"});
        let problems = requirement_problems(&v1, Version::V1, "x");
        assert_eq!(
            problems,
            vec![
                "x.network \"eip155:8453\" is not a known x402 v1 EVM network",
                "x.maxAmountRequired is missing (an integer string of atomic units)",
                "x.payTo \"bob\" is not an EVM address",
                "x.resource \"/relative\" is not an absolute http(s) URL",
            ]
        );
    }

    #[test]
    fn header_decoding_accepts_common_base64_variants() {
        let json = br#"{"x402Version":2,"accepts":[]}"#;
        for encoded in [
            STANDARD.encode(json),
            STANDARD_NO_PAD.encode(json),
            URL_SAFE_NO_PAD.encode(json),
        ] {
            assert_eq!(
                decode_header(&encoded),
                Some(json!({"x402Version": 2, "accepts": []}))
            );
        }
        assert_eq!(decode_header("not base64 !!"), None);
        assert_eq!(decode_header(&STANDARD.encode(b"not json")), None);
    }
}
