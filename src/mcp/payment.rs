//! x402 over MCP, as the x402 MCP transport defines it, mapped onto the HTTP payment headers.
//!
//! In: `params._meta["x402/payment"]` (a PaymentPayload object) becomes `PAYMENT-SIGNATURE:
//! base64(json)`, and `_meta["toolhost/developer-credit"]` becomes `X-Developer-Credit`, so
//! a tool call is paid through exactly the headers `POST /tools/{slug}` reads.
//!
//! Out: the pipeline's HTTP answer becomes a tool result. 402 is an error result whose
//! `structuredContent` is the x402 v2 PaymentRequired (the decoded `PAYMENT-REQUIRED` header,
//! else the 402 body) with the same JSON as text; success carries the result, and in `_meta` the
//! decoded `PAYMENT-RESPONSE` and the receipt; any other failure is an error result with the
//! error body as text. Settlement happens inside the pipeline, only after the handler succeeded.
//!
//! Only the payment error is structured: the TypeScript SDK client validates any
//! `structuredContent` against the tool's `outputSchema`, error results included, so an error
//! body there would make a declared output schema fail. For the same reason paid tools declare
//! no `outputSchema` (see `tools`).

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use base64::Engine;
use serde_json::{json, Map, Value};

use super::protocol::RpcError;
use crate::app::App;
use crate::catalog::CompiledEndpoint;
use crate::tools::routes::charge_for;

pub(super) const PAYMENT_META: &str = "x402/payment";
pub(super) const PAYMENT_RESPONSE_META: &str = "x402/payment-response";
pub(super) const CREDIT_META: &str = "toolhost/developer-credit";
pub(super) const RECEIPT_META: &str = "toolhost/receipt";

const PAYMENT_SIGNATURE: HeaderName = HeaderName::from_static("payment-signature");
const PAYMENT_REQUIRED: HeaderName = HeaderName::from_static("payment-required");
const PAYMENT_RESPONSE: HeaderName = HeaderName::from_static("payment-response");
const DEVELOPER_CREDIT: HeaderName = HeaderName::from_static("x-developer-credit");
const RECEIPT_ID: HeaderName = HeaderName::from_static("x-receipt-id");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The headers of one tool call: the request id and a developer credit from the MCP request
/// (a credit can be configured once per connection), then payment and credit from `_meta`,
/// which win. Payment proofs are taken from `_meta` only: one payment pays for one call.
pub(super) fn call_headers(
    transport: &HeaderMap,
    meta: Option<&Map<String, Value>>,
) -> Result<HeaderMap, RpcError> {
    let mut headers = HeaderMap::new();
    for name in [REQUEST_ID, DEVELOPER_CREDIT] {
        if let Some(value) = transport.get(&name) {
            headers.insert(name, value.clone());
        }
    }
    let Some(meta) = meta else { return Ok(headers) };
    match meta.get(PAYMENT_META) {
        None | Some(Value::Null) => {}
        Some(payload @ Value::Object(_)) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(payload.to_string());
            let value = HeaderValue::from_str(&encoded)
                .map_err(|_| RpcError::invalid_params("_meta[\"x402/payment\"] cannot be sent"))?;
            headers.insert(PAYMENT_SIGNATURE, value);
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "_meta[\"x402/payment\"] must be an x402 PaymentPayload object",
            ))
        }
    }
    match meta.get(CREDIT_META) {
        None | Some(Value::Null) => {}
        Some(Value::String(credit)) => {
            let value = HeaderValue::from_str(credit).map_err(|_| {
                RpcError::invalid_params(
                    "_meta[\"toolhost/developer-credit\"] must be printable ASCII",
                )
            })?;
            headers.insert(DEVELOPER_CREDIT, value);
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "_meta[\"toolhost/developer-credit\"] must be a string",
            ))
        }
    }
    Ok(headers)
}

/// The x402 terms a paid tool advertises in its `_meta["x402"]`: the v2 PaymentRequired a call
/// without payment gets (same offer, from the same function), without its `error`.
pub(super) fn advertised(app: &App, compiled: &CompiledEndpoint) -> Value {
    let mut offer = charge_for(app, compiled).offer.v2("");
    if let Some(object) = offer.as_object_mut() {
        object.remove("error");
        object.insert("paymentMeta".into(), json!(PAYMENT_META));
    }
    offer
}

/// What the pipeline answered, read off its HTTP response.
pub(super) struct HttpOutcome {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    /// The JSON body; `Null` when empty or not JSON.
    pub(super) body: Value,
}

/// The MCP `CallToolResult` for a pipeline outcome.
pub(super) fn tool_result(outcome: HttpOutcome) -> Value {
    let HttpOutcome {
        status,
        headers,
        body,
    } = outcome;
    if status == StatusCode::PAYMENT_REQUIRED {
        let required = decode_header(&headers, &PAYMENT_REQUIRED).unwrap_or(body);
        return json_result(required, true);
    }
    if !status.is_success() {
        return error_result(body);
    }
    let mut meta = Map::new();
    if let Some(settlement) = decode_header(&headers, &PAYMENT_RESPONSE) {
        meta.insert(PAYMENT_RESPONSE_META.into(), settlement);
    }
    // The receipt is the one the server issued, named by its `x-receipt-id` header (a handler
    // cannot set that header): a body's `receipt` counts only when it is that receipt, so a
    // handler returning `{receipt: …}` cannot plant a forged one in `_meta`.
    let receipt = header_text(&headers, &RECEIPT_ID).map(|id| match body.get("receipt") {
        Some(receipt @ Value::Object(_)) if receipt["receiptId"] == id => receipt.clone(),
        _ => json!({ "receiptId": id }),
    });
    if let Some(receipt) = receipt {
        meta.insert(RECEIPT_META.into(), receipt);
    }
    let mut result = json_result(body, false);
    if !meta.is_empty() {
        result["_meta"] = Value::Object(meta);
    }
    result
}

/// A tool result that reports failure to the model (`isError: true`), the JSON as text.
pub(super) fn error_result(body: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": body.to_string()}],
        "isError": true,
    })
}

/// A result carrying `value`: as `structuredContent` (objects only, as MCP requires) and as the
/// JSON text of `content[0]` for clients that read text only.
pub(super) fn json_result(value: Value, is_error: bool) -> Value {
    let mut result = json!({
        "content": [{"type": "text", "text": value.to_string()}],
        "isError": is_error,
    });
    if value.is_object() {
        result["structuredContent"] = value;
    }
    result
}

fn header_text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A header holding base64 of JSON, decoded; `None` when absent or malformed.
fn decode_header(headers: &HeaderMap, name: &HeaderName) -> Option<Value> {
    let text = header_text(headers, name)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn b64(value: &Value) -> HeaderValue {
        HeaderValue::from_str(&base64::engine::general_purpose::STANDARD.encode(value.to_string()))
            .unwrap()
    }

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn payment_and_credit_from_meta_become_headers() {
        let payload = json!({"x402Version": 2, "payload": {"signature": "0xabc"}});
        let mut transport = HeaderMap::new();
        transport.insert(REQUEST_ID, HeaderValue::from_static("req-1"));
        transport.insert(
            DEVELOPER_CREDIT,
            HeaderValue::from_static("from-connection"),
        );
        transport.insert(PAYMENT_SIGNATURE, HeaderValue::from_static("ignored"));
        let m = meta(json!({PAYMENT_META: payload, CREDIT_META: "dc_123"}));
        let headers = call_headers(&transport, Some(&m)).unwrap();
        assert_eq!(headers.get(&REQUEST_ID).unwrap(), "req-1");
        assert_eq!(headers.get(&DEVELOPER_CREDIT).unwrap(), "dc_123");
        assert_eq!(decode_header(&headers, &PAYMENT_SIGNATURE), Some(payload));

        let plain = call_headers(&transport, None).unwrap();
        assert_eq!(plain.get(&DEVELOPER_CREDIT).unwrap(), "from-connection");
        assert!(
            plain.get(&PAYMENT_SIGNATURE).is_none(),
            "payment headers of the MCP request are not forwarded"
        );
    }

    #[test]
    fn malformed_payment_meta_is_invalid_params() {
        for bad in [
            json!({PAYMENT_META: "abc"}),
            json!({CREDIT_META: 5}),
            json!({CREDIT_META: "a\nb"}),
        ] {
            let e = call_headers(&HeaderMap::new(), Some(&meta(bad))).unwrap_err();
            assert_eq!(e.code, super::super::protocol::INVALID_PARAMS);
        }
    }

    #[test]
    fn payment_required_prefers_the_v2_header() {
        let required = json!({"x402Version": 2, "accepts": [{"scheme": "exact"}], "error": "payment required"});
        let mut headers = HeaderMap::new();
        headers.insert(PAYMENT_REQUIRED, b64(&required));
        let result = tool_result(HttpOutcome {
            status: StatusCode::PAYMENT_REQUIRED,
            headers,
            body: json!({"x402Version": 1}),
        });
        assert_eq!(result["isError"], true);
        assert_eq!(result["structuredContent"], required);
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, required);
    }

    #[test]
    fn payment_required_without_header_uses_the_body() {
        let body = json!({"ok": false, "error": {"code": ErrorCode::PaymentRequired.as_str(), "message": "pay"}});
        let result = tool_result(HttpOutcome {
            status: StatusCode::PAYMENT_REQUIRED,
            headers: HeaderMap::new(),
            body: body.clone(),
        });
        assert_eq!(
            (
                result["isError"].clone(),
                result["structuredContent"].clone()
            ),
            (json!(true), body)
        );
    }

    #[test]
    fn success_carries_settlement_and_receipt() {
        let settlement = json!({"success": true, "transaction": "0x1", "network": "eip155:84532"});
        let receipt = json!({"receiptId": "rcpt_1", "payer": "0xabc"});
        let mut headers = HeaderMap::new();
        headers.insert(PAYMENT_RESPONSE, b64(&settlement));
        headers.insert(RECEIPT_ID, HeaderValue::from_static("rcpt_1"));
        let body = json!({"ok": true, "receipt": receipt});
        let result = tool_result(HttpOutcome {
            status: StatusCode::OK,
            headers,
            body: body.clone(),
        });
        assert_eq!(result["isError"], false);
        assert_eq!(result["structuredContent"], body);
        assert_eq!(result["_meta"][PAYMENT_RESPONSE_META], settlement);
        assert_eq!(result["_meta"][RECEIPT_META], receipt);
    }

    #[test]
    fn a_receipt_in_the_body_alone_is_not_taken() {
        // A free handler returning its own `receipt`, with no receipt issued by the server.
        let result = tool_result(HttpOutcome {
            status: StatusCode::OK,
            headers: HeaderMap::new(),
            body: json!({"receipt": {"receiptId": "rcpt_forged"}}),
        });
        assert!(result.get("_meta").is_none(), "{result}");
        // Beside a real one, the body's must name it.
        let mut headers = HeaderMap::new();
        headers.insert(RECEIPT_ID, HeaderValue::from_static("rcpt_real"));
        let result = tool_result(HttpOutcome {
            status: StatusCode::OK,
            headers,
            body: json!({"receipt": {"receiptId": "rcpt_forged"}}),
        });
        assert_eq!(
            result["_meta"][RECEIPT_META],
            json!({"receiptId": "rcpt_real"})
        );
    }

    #[test]
    fn success_takes_the_receipt_id_header_when_the_body_has_none() {
        let mut headers = HeaderMap::new();
        headers.insert(RECEIPT_ID, HeaderValue::from_static("rcpt_2"));
        let result = tool_result(HttpOutcome {
            status: StatusCode::OK,
            headers,
            body: json!([1, 2]),
        });
        assert_eq!(
            result["_meta"][RECEIPT_META],
            json!({"receiptId": "rcpt_2"})
        );
        assert!(
            result.get("structuredContent").is_none(),
            "only objects are structured content"
        );
        assert_eq!(result["content"][0]["text"], "[1,2]");
    }

    #[test]
    fn other_failures_are_error_results_with_the_body() {
        let body =
            json!({"ok": false, "error": {"code": "runtime_unavailable", "message": "later"}});
        let result = tool_result(HttpOutcome {
            status: StatusCode::SERVICE_UNAVAILABLE,
            headers: HeaderMap::new(),
            body: body.clone(),
        });
        assert_eq!(result["isError"], true);
        assert!(
            result.get("structuredContent").is_none(),
            "would be checked against outputSchema"
        );
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, body);
        assert!(result.get("_meta").is_none());
    }
}
