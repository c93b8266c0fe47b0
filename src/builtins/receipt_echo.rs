//! `receipt_echo`: a public-safe summary of the request, never its values. The pipeline adds
//! the receipt: a signed, stored one for both variants (the free one with `paymentMethod:"free"`
//! and `charged:false`, spec 2.1 rule 3).
//!
//! The summary shows what the service received (sizes, key names, value types, a SHA-256) so a
//! client can check its payload arrived intact, without the response ever repeating caller data.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::catalog::Endpoint;
use sandbox::Usage;

pub fn digest_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The echo's summary of the request, and on a metered endpoint what it used: the KiB of
/// input it digested (rounded up), at the endpoint's unit price.
pub fn answer(endpoint: &Endpoint, request: &super::Request<'_>) -> (Value, Option<Usage>) {
    let canonical = serde_json::to_vec(request.input).unwrap_or_default();
    let usage = endpoint.metering.as_ref().map(|_| Usage {
        amount_units: None,
        units: canonical.len().div_ceil(1024) as f64,
        note: "KiB of input digested".into(),
    });
    (summarize(endpoint, request, &canonical), usage)
}

/// The echo's summary of the request, whose JSON is `canonical`.
pub fn summarize(endpoint: &Endpoint, request: &super::Request<'_>, canonical: &[u8]) -> Value {
    let types: Map<String, Value> = request
        .input
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), Value::from(type_name(v))))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "endpoint": endpoint.slug,
        "method": request.method,
        "requestId": request.request_id,
        "input": {
            "type": type_name(request.input),
            "bytes": canonical.len(),
            "sha256": digest_hex(canonical),
            "keys": types.keys().collect::<Vec<_>>(),
            "types": types,
        },
    })
}
