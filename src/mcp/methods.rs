//! The MCP methods: `initialize`, `ping`, `tools/list`, `tools/call`. Anything else is
//! -32601, which is also what lets clients that probe newer methods (`server/discover`) fall
//! back to `initialize`.

use axum::http::HeaderMap;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::protocol::{self, RpcError, METHOD_NOT_FOUND, SUPPORTED_VERSIONS};
use super::{payment, tools};
use crate::app::AppState;

/// What a request is answered with besides its params.
pub(super) struct Context<'a> {
    pub(super) app: &'a AppState,
    /// The MCP request's HTTP headers.
    pub(super) headers: &'a HeaderMap,
    /// Where `notifications/progress` go when the answer is a stream; `None` for plain JSON.
    pub(super) progress: Option<&'a mpsc::Sender<Value>>,
}

pub(super) async fn dispatch(
    ctx: &Context<'_>,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    let params = match params {
        Value::Null => Map::new(),
        Value::Object(params) => params,
        _ => return Err(RpcError::invalid_params("params must be an object")),
    };
    match method {
        "initialize" => initialize(&params),
        "ping" => Ok(json!({})),
        "tools/list" => {
            let cursor = match params.get("cursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(cursor)) => Some(cursor.as_str()),
                Some(_) => return Err(RpcError::invalid_params("cursor must be a string")),
            };
            tools::list(ctx.app, cursor)
        }
        "tools/call" => call_tool(ctx, params).await,
        _ => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )),
    }
}

/// Version negotiation: the client's revision when served, else the newest served.
fn initialize(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("protocolVersion (string) is required"))?;
    let version = protocol::supported(requested).unwrap_or(SUPPORTED_VERSIONS[0]);
    Ok(json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {
            "name": "toolhost",
            "title": "toolhost: paid AI/API tools over x402",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "Every hosted tool is listed by tools/list with its price. Free tools answer directly. \
    A paid tool called without payment returns an error result whose structuredContent is the x402 PaymentRequired; \
    sign one of its `accepts` and call again with the PaymentPayload in params._meta[\"x402/payment\"] \
    (or a developer credit in params._meta[\"toolhost/developer-credit\"]). The result then carries \
    _meta[\"x402/payment-response\"] and the receipt; receipt_lookup fetches it again later.",
    }))
}

async fn call_tool(ctx: &Context<'_>, params: Map<String, Value>) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("name (string) is required"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(arguments @ Value::Object(_)) => arguments.clone(),
        Some(_) => return Err(RpcError::invalid_params("arguments must be an object")),
    };
    let meta = match params.get("_meta") {
        None | Some(Value::Null) => None,
        Some(Value::Object(meta)) => Some(meta),
        Some(_) => return Err(RpcError::invalid_params("_meta must be an object")),
    };
    let tool = tools::resolve(ctx.app, name)
        .ok_or_else(|| RpcError::invalid_params(format!("unknown tool: {name}")))?;
    let payment = payment::call_payment(ctx.headers, meta)?;
    let token = meta
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number());
    report(ctx, token, 0, &format!("calling {name}")).await;
    let result = tools::call(ctx.app, tool, arguments, payment).await;
    report(ctx, token, 1, "done").await;
    Ok(result)
}

/// Sends `notifications/progress` when the answer is a stream and the caller gave a token.
async fn report(ctx: &Context<'_>, token: Option<&Value>, progress: u32, message: &str) {
    let (Some(sink), Some(token)) = (ctx.progress, token) else {
        return;
    };
    let note = json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": progress, "total": 1, "message": message},
    });
    // A closed stream means the client left; the call still completes and settles.
    let _ = sink.send(note).await;
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::arbitrary;

    const WORDS: &[&str] = &[
        "protocolVersion",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
        "capabilities",
        "clientInfo",
    ];

    proptest! {
        /// Any `initialize` params (docs/fuzzing.md): a served revision, the client's own when
        /// it is served; or invalid params when there is no revision string.
        #[test]
        fn initialize_negotiates_a_served_revision(
            params in arbitrary::object(WORDS, arbitrary::json(WORDS)),
        ) {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            match initialize(&params) {
                Ok(answer) => {
                    let version = answer["protocolVersion"].as_str().unwrap();
                    prop_assert!(SUPPORTED_VERSIONS.contains(&version));
                    let requested = requested.unwrap();
                    if SUPPORTED_VERSIONS.contains(&requested) {
                        prop_assert_eq!(version, requested);
                    }
                }
                Err(e) => {
                    prop_assert_eq!(e.code, protocol::INVALID_PARAMS);
                    prop_assert!(requested.is_none());
                }
            }
        }
    }
}
