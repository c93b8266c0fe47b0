//! JSON-RPC 2.0 as MCP uses it: classifying incoming messages, error objects, and the protocol
//! revisions this server speaks.

use serde::Serialize;
use serde_json::{json, Value};

/// The stateless revisions (2026-07-28 on): no `initialize`, the revision and the client's
/// capabilities ride in every request's `_meta` (see `era`).
pub(super) const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The revisions negotiated by `initialize`, newest first. `initialize` answers with the
/// client's revision when it is one of these, else with the newest.
pub(super) const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// Every revision served, newest first: what `server/discover` and an unsupported-version
/// error list.
pub(super) const SUPPORTED_VERSIONS: [&str; 4] =
    ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// The revision to assume for a request without `MCP-Protocol-Version` (required by the
/// 2025-06-18 transport rules for backwards compatibility).
pub(super) const DEFAULT_VERSION: &str = "2025-03-26";

pub(super) const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;
pub(super) const METHOD_NOT_FOUND: i64 = -32601;
pub(super) const INVALID_PARAMS: i64 = -32602;
/// Server-defined range: refusals of the HTTP transport (origin, media type, method).
pub(super) const TRANSPORT_ERROR: i64 = -32000;
/// 2026-07-28: the `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header is missing or
/// disagrees with the body (HTTP 400).
pub(super) const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the requested revision is not served; `data` names the requested one and the
/// served ones (HTTP 400).
pub(super) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The revision named by `text`, as the static string of [`SUPPORTED_VERSIONS`].
pub(super) fn supported(text: &str) -> Option<&'static str> {
    SUPPORTED_VERSIONS.iter().copied().find(|v| *v == text)
}

/// Whether a served revision is one of the stateless ones.
pub(super) fn is_modern(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}

/// Batches (a JSON array of messages) exist in 2025-03-26 only; 2025-06-18 removed them.
pub(super) fn allows_batches(version: &str) -> bool {
    version == "2025-03-26"
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct RpcError {
    pub(super) code: i64,
    pub(super) message: String,
    /// The error object's optional `data` member (boxed: errors travel in `Result`s, and most
    /// have none).
    pub(super) data: Option<Box<Value>>,
}

impl RpcError {
    pub(super) fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The revision asked for is not served: the spec's error, naming what is.
    pub(super) fn unsupported_version(requested: &str) -> Self {
        Self {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: format!(
                "unsupported protocol version {requested:?}; supported: {}",
                SUPPORTED_VERSIONS.join(", ")
            ),
            data: Some(Box::new(
                json!({"requested": requested, "supported": SUPPORTED_VERSIONS}),
            )),
        }
    }

    pub(super) fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(HEADER_MISMATCH, message)
    }

    pub(super) fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub(super) fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }
}

/// One incoming message.
#[derive(Debug, PartialEq)]
pub(super) enum Message {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// No answer is owed (HTTP 202 when nothing else is in the body).
    Notification,
    /// A client's answer to a server request. This server sends none, so it is acknowledged and
    /// dropped.
    Response,
}

/// Classifies a message; an invalid one yields the id to answer with (`null` when unknown).
pub(super) fn classify(value: Value) -> Result<Message, (Value, RpcError)> {
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            RpcError::invalid_request("a JSON-RPC message must be an object"),
        ));
    };
    let id = object.remove("id");
    let id_ok = matches!(id, Some(Value::String(_) | Value::Number(_)));
    let reply_id = if id_ok {
        id.clone().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((
            reply_id,
            RpcError::invalid_request("`jsonrpc` must be \"2.0\""),
        ));
    }
    match object.remove("method") {
        Some(Value::String(method)) => match id {
            None => Ok(Message::Notification),
            Some(id) if id_ok => Ok(Message::Request {
                id,
                method,
                params: object.remove("params").unwrap_or(Value::Null),
            }),
            Some(_) => Err((
                Value::Null,
                RpcError::invalid_request("`id` must be a string or a number"),
            )),
        },
        Some(_) => Err((
            reply_id,
            RpcError::invalid_request("`method` must be a string"),
        )),
        None if id_ok && (object.contains_key("result") || object.contains_key("error")) => {
            Ok(Message::Response)
        }
        None => Err((
            reply_id,
            RpcError::invalid_request("not a request, notification or response"),
        )),
    }
}

/// A JSON-RPC 2.0 response as this server writes it: `result` on success, `error` on failure.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RpcResponse {
    /// Always `2.0`.
    jsonrpc: &'static str,
    /// The request's id; `null` when the request's could not be read.
    id: Value,
    /// The method's result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<RpcErrorObject>,
}

/// A JSON-RPC error object.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RpcErrorObject {
    code: i64,
    message: String,
    /// Details, for some errors (the supported revisions, the headers that disagreed).
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

pub(super) fn success(id: Value, result: Value) -> Value {
    json!(RpcResponse {
        jsonrpc: "2.0",
        id,
        result: Some(result),
        error: None,
    })
}

pub(super) fn failure(id: Value, error: &RpcError) -> Value {
    json!(RpcResponse {
        jsonrpc: "2.0",
        id,
        result: None,
        error: Some(RpcErrorObject {
            code: error.code,
            message: error.message.clone(),
            data: error.data.as_deref().cloned(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let request = classify(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).unwrap();
        assert_eq!(
            request,
            Message::Request {
                id: json!(1),
                method: "ping".into(),
                params: Value::Null
            }
        );
        let note =
            classify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        assert_eq!(note, Message::Notification);
        let response = classify(json!({"jsonrpc": "2.0", "id": "a", "result": {}})).unwrap();
        assert_eq!(response, Message::Response);
    }

    #[test]
    fn refuses_malformed_messages_with_the_best_id_known() {
        let (id, e) = classify(json!({"jsonrpc": "1.0", "id": 7, "method": "ping"})).unwrap_err();
        assert_eq!((id, e.code), (json!(7), INVALID_REQUEST));
        let (id, e) =
            classify(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})).unwrap_err();
        assert_eq!((id, e.code), (Value::Null, INVALID_REQUEST));
        let (_, e) = classify(json!({"jsonrpc": "2.0", "id": 1, "method": 3})).unwrap_err();
        assert_eq!(e.code, INVALID_REQUEST);
        let (_, e) = classify(json!([1])).unwrap_err();
        assert_eq!(e.code, INVALID_REQUEST);
    }

    #[test]
    fn revisions() {
        assert_eq!(supported("2025-06-18"), Some("2025-06-18"));
        assert_eq!(supported("2024-11-05"), None);
        assert!(is_modern("2026-07-28") && !is_modern("2025-11-25"));
        assert!(allows_batches(DEFAULT_VERSION));
        assert!(!allows_batches("2025-11-25"));
        assert!(!allows_batches("2026-07-28"));
        let e = RpcError::unsupported_version("v9");
        let reply = failure(json!(4), &e);
        assert_eq!(reply["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(reply["error"]["data"]["requested"], "v9");
        assert_eq!(reply["error"]["data"]["supported"][0], "2026-07-28");
    }
}
