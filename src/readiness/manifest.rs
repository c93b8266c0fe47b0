//! This service's own `/ai/manifest` (service, payment, MCP, catalog and receipt metadata). Its
//! fields are checked by key presence so the check keeps working as the manifest grows.

use serde_json::{Map, Value};

use super::payment::{is_evm_address, is_http_url};
use super::report::{quote, Findings};

pub(super) fn matches(doc: &Value) -> bool {
    doc.get("payment").is_some_and(Value::is_object)
        && ["service", "mcp", "catalog"]
            .iter()
            .any(|k| doc.get(*k).is_some())
}

/// A URL given as a string or as an object's `url`/`endpoint`/`href`/`pattern` field.
fn url_like(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s.as_str()),
        Value::Object(map) => [
            "url",
            "endpoint",
            "href",
            "pattern",
            "urlPattern",
            "urlTemplate",
        ]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str)),
        _ => None,
    }
}

pub(super) fn analyze(doc: &Value, f: &mut Findings) {
    match doc.get("service") {
        Some(Value::Null) | None => f.fail(
            "service",
            "service is missing",
            "Describe the service under service",
        ),
        Some(_) => f.pass("service", "service is described"),
    }
    let empty = Map::new();
    let payment = doc
        .get("payment")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (id, key) in [
        ("payment_versions", "x402Versions"),
        ("payment_schemes", "schemes"),
        ("payment_networks", "networks"),
        ("payment_assets", "assets"),
    ] {
        match payment.get(key).and_then(Value::as_array) {
            Some(list) if !list.is_empty() => {
                f.pass(id, format!("payment.{key} lists {}", list.len()))
            }
            _ => f.fail(
                id,
                format!("payment.{key} is missing or empty"),
                format!("List the accepted payment {key} under payment.{key}"),
            ),
        }
    }
    match payment.get("payTo").and_then(Value::as_str) {
        Some(a) if is_evm_address(a) => f.pass("pay_to", "payment.payTo is an EVM address"),
        Some(a) => f.fail(
            "pay_to",
            format!("payment.payTo {} is not an EVM address", quote(a)),
            "Set payment.payTo to the EVM address that receives payments",
        ),
        None => f.fail(
            "pay_to",
            "payment.payTo is not configured, so paid calls cannot be settled",
            "Configure the payTo address that receives payments",
        ),
    }
    for (id, key) in [
        ("mcp_url", "mcp"),
        ("catalog_url", "catalog"),
        ("receipts_url", "receipts"),
    ] {
        match doc.get(key).and_then(url_like) {
            Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                f.pass(id, format!("{key} is at {}", quote(u)))
            }
            Some(u) => f.fail(
                id,
                format!("{key} {} is not an absolute URL", quote(u)),
                format!("Give {key} as an absolute URL"),
            ),
            None => f.fail(
                id,
                format!("{key} URL is missing"),
                format!("Add the {key} URL to the manifest"),
            ),
        }
    }
    if let Some(catalog) = doc
        .get("catalog")
        .and_then(url_like)
        .filter(|u| is_http_url(u))
    {
        f.action(format!(
            "Run this check on a paid endpoint listed at {catalog} to confirm it answers HTTP 402"
        ));
    }
}
