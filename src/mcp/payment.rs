//! x402 over MCP, as the x402 MCP transport defines it, mapped onto the call pipeline's types.
//!
//! In: `params._meta["x402/payment"]` (a PaymentPayload object) and
//! `_meta["toolhost/developer-credit"]` (or the connection's `X-Developer-Credit`) become the
//! call's [`Tender`], as `POST /tools/{slug}` reads them from its headers.
//!
//! Out: the pipeline's outcome becomes a tool result. 402 is an error result whose
//! `structuredContent` is the x402 v2 PaymentRequired, with the same JSON as text; success
//! carries the result, and in `_meta` the settlement response and the receipt; any other failure
//! is an error result with the error body as text. Settlement happens inside the pipeline, only
//! after the handler succeeded.
//!
//! Only the payment error is structured: the TypeScript SDK client validates any
//! `structuredContent` against the tool's `outputSchema`, error results included, so an error
//! body there would make a declared output schema fail. For the same reason paid tools declare
//! no `outputSchema` (see `tools`).

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{json, Map, Value};

use super::protocol::RpcError;
use crate::app::App;
use crate::catalog::CompiledEndpoint;
use crate::error::ApiError;
use crate::payments::bazaar::Transport;
use crate::payments::Tender;
use crate::pipeline::Outcome;
use crate::x402::header;

pub(super) const PAYMENT_META: &str = "x402/payment";
pub(super) const PAYMENT_RESPONSE_META: &str = "x402/payment-response";
pub(super) const CREDIT_META: &str = "toolhost/developer-credit";
pub(super) const RECEIPT_META: &str = "toolhost/receipt";
/// Where the receipt is in the receipt log (docs/receipt-log.md).
const RECEIPT_LOG_META: &str = "toolhost/receiptLog";
/// The salt of the receipt's digests, the caller's alone.
const RECEIPT_SALT_META: &str = "toolhost/receiptSalt";

const DEVELOPER_CREDIT: HeaderName = HeaderName::from_static("x-developer-credit");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The headers of one tool call (the request id of the MCP request) and how it pays: a
/// developer credit from `_meta`, else the connection's, wins over an x402 payment from
/// `_meta`. Payment proofs are taken from `_meta` only: one payment pays for one call.
pub(super) fn call_payment(
    transport: &HeaderMap,
    meta: Option<&Map<String, Value>>,
) -> Result<(HeaderMap, Tender), RpcError> {
    let mut headers = HeaderMap::new();
    if let Some(value) = transport.get(&REQUEST_ID) {
        headers.insert(REQUEST_ID, value.clone());
    }
    let connection_credit = transport
        .get(&DEVELOPER_CREDIT)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    let empty = Map::new();
    let meta = meta.unwrap_or(&empty);
    let payment = match meta.get(PAYMENT_META) {
        None | Some(Value::Null) => None,
        Some(payload @ Value::Object(_)) => Some(match header::from_json(payload.clone()) {
            Ok(payment) => Tender::X402(std::sync::Arc::new(payment)),
            Err(e) => Tender::Malformed(e.to_string()),
        }),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "_meta[\"x402/payment\"] must be an x402 PaymentPayload object",
            ))
        }
    };
    let credit = match meta.get(CREDIT_META) {
        None | Some(Value::Null) => connection_credit,
        // The same characters a header value may hold, as over HTTP.
        Some(Value::String(credit)) if HeaderValue::from_str(credit).is_ok() => {
            Some(credit.trim().to_string()).filter(|c| !c.is_empty())
        }
        Some(Value::String(_)) => {
            return Err(RpcError::invalid_params(
                "_meta[\"toolhost/developer-credit\"] must be printable ASCII",
            ))
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "_meta[\"toolhost/developer-credit\"] must be a string",
            ))
        }
    };
    let tender = match (credit, payment) {
        (Some(credit), _) => Tender::Credit(credit),
        (None, Some(payment)) => payment,
        (None, None) => Tender::Nothing,
    };
    Ok((headers, tender))
}

/// The x402 terms a paid tool advertises in its `_meta["x402"]`: the v2 PaymentRequired a call
/// without payment gets (same offer, from the same function), without its `error`.
pub(super) fn advertised(app: &App, compiled: &CompiledEndpoint) -> Value {
    let mut offer = json!(app
        .charge_for(&compiled.endpoint, Transport::Mcp)
        .offer
        .v2(""));
    if let Some(object) = offer.as_object_mut() {
        object.remove("error");
        object.insert("paymentMeta".into(), json!(PAYMENT_META));
    }
    offer
}

/// The MCP `CallToolResult` for what the pipeline answered.
pub(super) fn tool_result(answer: Result<Outcome, ApiError>) -> Value {
    let outcome = match answer {
        Ok(outcome) => outcome,
        Err(error) if error.status == StatusCode::PAYMENT_REQUIRED => {
            // A 402's body carries the v2 PaymentRequired beside the v1 fields.
            let required = error
                .body_override
                .as_deref()
                .map(|body| body.get("paymentRequired").unwrap_or(body).clone())
                .unwrap_or_else(|| json!(error.answer()));
            return json_result(required, true);
        }
        Err(error) => return error_result(json!(error.answer())),
    };
    let body = outcome.result_with_receipt();
    if !outcome.status.is_success() {
        return error_result(body);
    }
    let mut meta = Map::new();
    if let Some(settlement) = &outcome.payment_response {
        meta.insert(PAYMENT_RESPONSE_META.into(), json!(settlement));
    }
    // The receipt the server issued: a handler's own `receipt` field never gets here.
    if let Some(receipt) = &outcome.receipt {
        meta.insert(RECEIPT_META.into(), json!(receipt));
    }
    if let Some(inclusion) = &outcome.receipt_log {
        meta.insert(RECEIPT_LOG_META.into(), json!(inclusion));
    }
    if let Some(salt) = &outcome.receipt_salt {
        meta.insert(RECEIPT_SALT_META.into(), json!(salt));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn transport(credit: Option<&'static str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(REQUEST_ID, HeaderValue::from_static("req-1"));
        headers.insert("payment-signature", HeaderValue::from_static("ignored"));
        if let Some(credit) = credit {
            headers.insert(DEVELOPER_CREDIT, HeaderValue::from_static(credit));
        }
        headers
    }

    #[test]
    fn credit_wins_over_payment_and_meta_over_the_connection() {
        let payment = json!({"x402Version": 2, "payload": {"signature": "0xabc"}});
        let (headers, tender) = call_payment(
            &transport(Some("from-connection")),
            Some(&meta(json!({PAYMENT_META: payment, CREDIT_META: "dc_123"}))),
        )
        .unwrap();
        assert_eq!(headers.get(&REQUEST_ID).unwrap(), "req-1");
        assert_eq!(
            headers.len(),
            1,
            "payment headers of the MCP request are not forwarded"
        );
        assert!(matches!(tender, Tender::Credit(c) if c == "dc_123"));
        let (_, tender) = call_payment(&transport(Some("from-connection")), None).unwrap();
        assert!(matches!(tender, Tender::Credit(c) if c == "from-connection"));
        let (_, tender) = call_payment(&transport(None), None).unwrap();
        assert!(matches!(tender, Tender::Nothing));
        // A payment object of the wrong shape is the pipeline's 400, as a bad header is.
        let (_, tender) = call_payment(
            &transport(None),
            Some(&meta(json!({PAYMENT_META: {"x402Version": 2}}))),
        )
        .unwrap();
        assert!(matches!(tender, Tender::Malformed(_)), "{tender:?}");
    }

    #[test]
    fn malformed_payment_meta_is_invalid_params() {
        for bad in [
            json!({PAYMENT_META: "abc"}),
            json!({CREDIT_META: 5}),
            json!({CREDIT_META: "a\nb"}),
        ] {
            let e = call_payment(&HeaderMap::new(), Some(&meta(bad))).unwrap_err();
            assert_eq!(e.code, super::super::protocol::INVALID_PARAMS);
        }
    }

    #[test]
    fn payment_required_is_the_v2_requirements() {
        let required = json!({"x402Version": 2, "accepts": [{"scheme": "exact"}], "error": "payment_required"});
        let error = ApiError::new(
            StatusCode::PAYMENT_REQUIRED,
            ErrorCode::PaymentRequired,
            "pay",
        )
        .with_body(json!({"x402Version": 1, "paymentRequired": required}));
        let result = tool_result(Err(error));
        assert_eq!(result["isError"], true);
        assert_eq!(result["structuredContent"], required);
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, required);
    }

    #[test]
    fn other_failures_are_error_results_with_the_body() {
        let error = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::EndpointPaused,
            "later",
        );
        let result = tool_result(Err(error));
        assert_eq!(result["isError"], true);
        assert!(
            result.get("structuredContent").is_none(),
            "would be checked against outputSchema"
        );
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["error"]["code"], "endpoint_paused");
        assert!(result.get("_meta").is_none());
    }

    #[test]
    fn a_handler_failure_is_an_error_result_without_meta() {
        let outcome = Outcome {
            status: StatusCode::BAD_REQUEST,
            result: json!({"message": "no"}),
            result_text: None,
            receipt: None,
            receipt_log: None,
            receipt_salt: None,
            payment_response: None,
            headers: Vec::new(),
        };
        let result = tool_result(Ok(outcome));
        assert_eq!(result["isError"], true);
        assert!(result.get("_meta").is_none());
    }

    mod properties {
        //! Any `_meta` (docs/fuzzing.md): invalid params, or a tender that follows the rules.

        use proptest::prelude::*;

        use super::*;
        use crate::arbitrary;

        const WORDS: &[&str] = &[
            PAYMENT_META,
            CREDIT_META,
            "x402Version",
            "accepted",
            "payload",
            "scheme",
            "network",
            "signature",
            "authorization",
            "progressToken",
        ];

        proptest! {
            #[test]
            fn any_meta_is_invalid_params_or_a_tender(
                meta in arbitrary::object(WORDS, arbitrary::json(WORDS)),
                request_id in proptest::option::of("[a-z0-9-]{1,20}"),
            ) {
                let mut transport = HeaderMap::new();
                if let Some(id) = &request_id {
                    transport.insert(REQUEST_ID, HeaderValue::from_str(id).unwrap());
                }
                let (headers, tender) = match call_payment(&transport, Some(&meta)) {
                    Ok(answer) => answer,
                    Err(e) => {
                        prop_assert_eq!(e.code, super::super::super::protocol::INVALID_PARAMS);
                        return Ok(());
                    }
                };
                // Only the request id is carried over.
                prop_assert_eq!(headers.len(), usize::from(request_id.is_some()));
                let credit = meta.get(CREDIT_META).and_then(Value::as_str).map(str::trim);
                match tender {
                    Tender::Credit(c) => prop_assert_eq!(Some(c.as_str()), credit),
                    Tender::X402(_) | Tender::Malformed(_) => {
                        prop_assert!(credit.is_none_or(str::is_empty));
                        prop_assert!(meta[PAYMENT_META].is_object());
                    }
                    Tender::Nothing => {
                        prop_assert!(credit.is_none_or(str::is_empty));
                        prop_assert!(meta.get(PAYMENT_META).is_none_or(Value::is_null));
                    }
                }
            }
        }
    }
}
